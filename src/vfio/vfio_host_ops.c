/* VFIO kernel ops: region pread/pwrite, VFIO_DEVICE_SET_IRQS, reset, BAR mmap and KVM slots, behind vfio_dev_ops. */
#include "vfio/vfio_host.h"

#include <errno.h>
#include <linux/kvm.h>
#include <linux/vfio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static bool in_region(const struct vfio_host *h, unsigned region, uint64_t off, uint64_t len)
{
	return region < VFIO_HOST_NREGIONS && off <= h->region_size[region] &&
	       len <= h->region_size[region] - off;
}

static int host_read(void *ctx, unsigned region, uint64_t off, void *buf, uint32_t len)
{
	struct vfio_host *h = ctx;
	if (!in_region(h, region, off, len))
		return -ERANGE;
	ssize_t n = pread(h->device, buf, len, (off_t)(h->region_off[region] + off));
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

static int host_write(void *ctx, unsigned region, uint64_t off, const void *buf, uint32_t len)
{
	struct vfio_host *h = ctx;
	if (!in_region(h, region, off, len))
		return -ERANGE;
	ssize_t n = pwrite(h->device, buf, len, (off_t)(h->region_off[region] + off));
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

static int host_set_irqs(void *ctx, unsigned index, enum vfio_irq_action act, uint32_t count,
			 const int *fds)
{
	struct vfio_host *h = ctx;
	size_t sz = sizeof(struct vfio_irq_set) + (size_t)count * sizeof(int32_t);
	struct vfio_irq_set *s = calloc(1, sz);
	if (!s)
		return -ENOMEM;
	s->argsz = (uint32_t)sz;
	s->index = index;
	s->start = 0;
	s->count = count;
	s->flags = (act == VFIO_ACT_UNMASK ? VFIO_IRQ_SET_ACTION_UNMASK : VFIO_IRQ_SET_ACTION_TRIGGER) |
		   (count ? VFIO_IRQ_SET_DATA_EVENTFD : VFIO_IRQ_SET_DATA_NONE);
	for (uint32_t i = 0; i < count; i++) {
		int32_t fd = fds[i];
		memcpy(s->data + i * sizeof(int32_t), &fd, sizeof(fd));
	}
	int ret = ioctl(h->device, VFIO_DEVICE_SET_IRQS, s) ? -errno : 0;
	free(s);
	return ret;
}

static int host_reset(void *ctx)
{
	struct vfio_host *h = ctx;
	return ioctl(h->device, VFIO_DEVICE_RESET) ? -errno : 0;
}

static void *host_map(void *ctx, unsigned region, uint64_t off, uint64_t size)
{
	struct vfio_host *h = ctx;
	if (!in_region(h, region, off, size))
		return NULL;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, h->device,
		       (off_t)(h->region_off[region] + off));
	return p == MAP_FAILED ? NULL : p;
}

static void host_unmap(void *ctx, void *host, uint64_t size)
{
	munmap(host, size);
}

static int host_set_slot(void *ctx, uint32_t slot, uint64_t gpa, uint64_t size, void *host)
{
	struct vfio_host *h = ctx;
	struct kvm_userspace_memory_region r = {
		.slot = slot, .guest_phys_addr = gpa, .memory_size = size,
		.userspace_addr = (uintptr_t)host,
	};
	return ioctl(h->vm_fd, KVM_SET_USER_MEMORY_REGION, &r) ? -errno : 0;
}

const struct vfio_dev_ops vfio_host_ops = {
	.read = host_read,
	.write = host_write,
	.set_irqs = host_set_irqs,
	.reset = host_reset,
	.map = host_map,
	.unmap = host_unmap,
	.set_slot = host_set_slot,
};
