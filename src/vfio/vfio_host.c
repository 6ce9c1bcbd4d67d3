/* VFIO host side: sysfs checks (driver, group, IOMMU), type1 container and group, device info, guest RAM mapped for DMA. */
#include "vfio/vfio_host.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define BIND_HOWTO "bind it to vfio-pci: modprobe vfio-pci; echo vfio-pci > %s/driver_override; "
#define PROBE_HOWTO "echo %s > /sys/bus/pci/drivers_probe"

/* Copies src into dst[n], cut short if longer. */
static void copy_str(char *dst, size_t n, const char *src)
{
	size_t l = strnlen(src, n - 1);
	memcpy(dst, src, l);
	dst[l] = 0;
}

/* The last path component of the symlink `dir`/`link`, or "" when there is none. */
static void link_name(const char *dir, const char *link, char *out, size_t n)
{
	char p[PATH_MAX], target[PATH_MAX];
	out[0] = 0;
	snprintf(p, sizeof(p), "%s/%s", dir, link);
	ssize_t len = readlink(p, target, sizeof(target) - 1);
	if (len <= 0)
		return;
	target[len] = 0;
	const char *slash = strrchr(target, '/');
	copy_str(out, n, slash ? slash + 1 : target);
}

/* The sysfs checks: exists, bound to vfio-pci, has a group holding it alone. */
static int check_sysfs(struct vfio_host *h, const char *path, struct error *err)
{
	char real[PATH_MAX], drv[64], grp[32];
	if (!realpath(path, real))
		return error_set(err, -ENOENT, "--device path=%s: no such PCI device (give "
				 "/sys/bus/pci/devices/DDDD:BB:DD.F)", path);
	const char *slash = strrchr(real, '/');
	copy_str(h->bdf, sizeof(h->bdf), slash ? slash + 1 : real);
	link_name(real, "driver", drv, sizeof(drv));
	if (!drv[0])
		return error_set(err, -EBUSY, "--device %s: bound to no driver, not vfio-pci: "
				 BIND_HOWTO PROBE_HOWTO, h->bdf, real, h->bdf);
	if (strcmp(drv, "vfio-pci"))
		return error_set(err, -EBUSY, "--device %s: bound to %s, not vfio-pci: " BIND_HOWTO
				 "echo %s > %s/driver/unbind; " PROBE_HOWTO, h->bdf, drv, real,
				 h->bdf, real, h->bdf);
	link_name(real, "iommu_group", grp, sizeof(grp));
	char *end;
	long g = strtol(grp, &end, 10);
	if (!grp[0] || *end || g < 0)
		return error_set(err, -ENODEV, "--device %s: no IOMMU group: the host has no IOMMU "
				 "enabled (boot it with intel_iommu=on or amd_iommu=on; VFIO needs an "
				 "IOMMU to confine the device's DMA)", h->bdf);
	h->group_id = (int)g;
	char gdir[PATH_MAX];
	snprintf(gdir, sizeof(gdir), "/sys/kernel/iommu_groups/%d/devices", h->group_id);
	DIR *dir = opendir(gdir);
	if (!dir)
		return error_set(err, -errno, "--device %s: cannot list %s: %s", h->bdf, gdir,
				 strerror(errno));
	char other[64] = "";
	for (struct dirent *e; (e = readdir(dir));)
		if (e->d_name[0] != '.' && strcmp(e->d_name, h->bdf) && !other[0])
			copy_str(other, sizeof(other), e->d_name);
	closedir(dir);
	if (other[0])
		return error_set(err, -EBUSY, "--device %s: its IOMMU group %d also holds %s: a group "
				 "is passed through whole and msivm takes one device; put the device "
				 "in a slot of its own (or behind an ACS-capable port)", h->bdf,
				 h->group_id, other);
	return 0;
}

/* The container: type1 (v2 when offered) with the group in it. */
static int open_container(struct vfio_host *h, struct error *err)
{
	h->container = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
	if (h->container < 0)
		return error_set(err, -errno, "--device %s: cannot open /dev/vfio/vfio: %s (modprobe "
				 "vfio-pci)", h->bdf, strerror(errno));
	if (ioctl(h->container, VFIO_GET_API_VERSION) != VFIO_API_VERSION)
		return error_set(err, -EPROTO, "--device %s: unknown VFIO API version", h->bdf);
	int type = ioctl(h->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) > 0 ? VFIO_TYPE1v2_IOMMU
		 : ioctl(h->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) > 0   ? VFIO_TYPE1_IOMMU
										    : 0;
	if (!type)
		return error_set(err, -ENODEV, "--device %s: the kernel's VFIO has no type1 IOMMU "
				 "driver (modprobe vfio_iommu_type1)", h->bdf);
	char gpath[64];
	snprintf(gpath, sizeof(gpath), "/dev/vfio/%d", h->group_id);
	h->group = open(gpath, O_RDWR | O_CLOEXEC);
	if (h->group < 0)
		return error_set(err, -errno, "--device %s: cannot open %s: %s%s", h->bdf, gpath,
				 strerror(errno), errno == EBUSY ? " (another process has the group)"
								 : "");
	struct vfio_group_status st = { .argsz = sizeof(st) };
	if (ioctl(h->group, VFIO_GROUP_GET_STATUS, &st))
		return error_set(err, -errno, "--device %s: VFIO_GROUP_GET_STATUS: %s", h->bdf,
				 strerror(errno));
	if (!(st.flags & VFIO_GROUP_FLAGS_VIABLE))
		return error_set(err, -EBUSY, "--device %s: IOMMU group %d is not viable: every "
				 "device in it must be bound to vfio-pci", h->bdf, h->group_id);
	if (ioctl(h->group, VFIO_GROUP_SET_CONTAINER, &h->container))
		return error_set(err, -errno, "--device %s: VFIO_GROUP_SET_CONTAINER: %s", h->bdf,
				 strerror(errno));
	if (ioctl(h->container, VFIO_SET_IOMMU, type)) {
		if (errno == EPERM)
			return error_set(err, -EPERM, "--device %s: the IOMMU has no interrupt "
					 "remapping, so VFIO will not let the device's MSIs reach a "
					 "guest safely: enable it (intel_iommu=on with interrupt remapping "
					 "on; under QEMU: -device intel-iommu,intremap=on) or, at your own "
					 "risk, load vfio_iommu_type1 with allow_unsafe_interrupts=1",
					 h->bdf);
		return error_set(err, -errno, "--device %s: VFIO_SET_IOMMU: %s", h->bdf,
				 strerror(errno));
	}
	return 0;
}

/* Region `i`'s info and, for a BAR, its sparse-mmap areas. */
static int region_info(struct vfio_host *h, unsigned i, struct vfio_region_desc *rd,
		       struct error *err)
{
	struct vfio_region_info *ri = calloc(1, sizeof(*ri));
	if (!ri)
		return error_set(err, -ENOMEM, "out of memory");
	ri->argsz = sizeof(*ri);
	ri->index = i;
	int ret = ioctl(h->device, VFIO_DEVICE_GET_REGION_INFO, ri);
	if (!ret && ri->argsz > sizeof(*ri) && ri->argsz < 65536) {
		struct vfio_region_info *big = realloc(ri, ri->argsz);
		if (!big) {
			free(ri);
			return error_set(err, -ENOMEM, "out of memory");
		}
		ri = big;
		ret = ioctl(h->device, VFIO_DEVICE_GET_REGION_INFO, ri);
	}
	if (ret) {
		free(ri);
		return error_set(err, -errno, "--device %s: region %u info: %s", h->bdf, i,
				 strerror(errno));
	}
	h->region_off[i] = ri->offset;
	h->region_size[i] = ri->size;
	if (rd) {
		*rd = (struct vfio_region_desc){ .size = ri->size,
						 .mmap = ri->flags & VFIO_REGION_INFO_FLAG_MMAP };
		uint32_t cap = (ri->flags & VFIO_REGION_INFO_FLAG_CAPS) ? ri->cap_offset : 0;
		for (int hops = 0; cap && hops < 16 &&
				   cap + sizeof(struct vfio_info_cap_header) <= ri->argsz; hops++) {
			struct vfio_info_cap_header *ch = (void *)((char *)ri + cap);
			if (ch->id == VFIO_REGION_INFO_CAP_SPARSE_MMAP &&
			    cap + sizeof(struct vfio_region_info_cap_sparse_mmap) <= ri->argsz) {
				struct vfio_region_info_cap_sparse_mmap *sp = (void *)ch;
				for (uint32_t a = 0; a < sp->nr_areas && rd->nsparse < VFIO_DEV_MAX_AREAS &&
						     cap + sizeof(*sp) + (a + 1) * sizeof(sp->areas[0]) <= ri->argsz; a++) {
					rd->sparse[rd->nsparse].off = sp->areas[a].offset;
					rd->sparse[rd->nsparse++].size = sp->areas[a].size;
				}
				if (sp->nr_areas == 0)
					rd->mmap = false; /* sparse with no area: nothing mappable */
			}
			cap = ch->next;
		}
	}
	free(ri);
	return 0;
}

static int device_info(struct vfio_host *h, struct vfio_dev_desc *desc, struct error *err)
{
	h->device = ioctl(h->group, VFIO_GROUP_GET_DEVICE_FD, h->bdf);
	if (h->device < 0)
		return error_set(err, -errno, "--device %s: VFIO_GROUP_GET_DEVICE_FD: %s", h->bdf,
				 strerror(errno));
	struct vfio_device_info di = { .argsz = sizeof(di) };
	if (ioctl(h->device, VFIO_DEVICE_GET_INFO, &di))
		return error_set(err, -errno, "--device %s: VFIO_DEVICE_GET_INFO: %s", h->bdf,
				 strerror(errno));
	if (!(di.flags & VFIO_DEVICE_FLAGS_PCI) || di.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX)
		return error_set(err, -ENODEV, "--device %s: not a PCI device for VFIO", h->bdf);
	memset(desc, 0, sizeof(*desc));
	desc->can_reset = di.flags & VFIO_DEVICE_FLAGS_RESET;
	int ret;
	for (unsigned i = 0; i < PCI_NUM_BARS; i++)
		if ((ret = region_info(h, i, &desc->bars[i], err)))
			return ret;
	if ((ret = region_info(h, VFIO_PCI_CONFIG_REGION_INDEX, NULL, err)))
		return ret;
	/* The expansion ROM (used with rom=on only): a failed query is a device without one. */
	struct error rom_err;
	if (region_info(h, VFIO_PCI_ROM_REGION_INDEX, NULL, &rom_err) == 0)
		desc->rom_size = h->region_size[VFIO_PCI_ROM_REGION_INDEX];
	for (unsigned i = 0; i < VFIO_DEV_NIRQ && i < di.num_irqs; i++) {
		struct vfio_irq_info ii = { .argsz = sizeof(ii), .index = i };
		if (ioctl(h->device, VFIO_DEVICE_GET_IRQ_INFO, &ii) == 0 &&
		    (ii.flags & VFIO_IRQ_INFO_EVENTFD))
			desc->irq_count[i] = ii.count;
	}
	return 0;
}

/* Every region of guest RAM mapped for the device's DMA at its guest physical address. */
static int map_dma(struct vfio_host *h, struct error *err)
{
	for (uint32_t i = 0; i < h->mem->nregions; i++) {
		const struct guest_mem_region *r = &h->mem->regions[i];
		struct vfio_iommu_type1_dma_map m = {
			.argsz = sizeof(m), .flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
			.vaddr = (uintptr_t)r->host, .iova = r->gpa, .size = r->size,
		};
		if (ioctl(h->container, VFIO_IOMMU_MAP_DMA, &m))
			return error_set(err, -errno, "--device %s: mapping %llu MiB of guest RAM for "
					 "DMA failed: %s%s", h->bdf, (unsigned long long)(r->size >> 20),
					 strerror(errno), errno == ENOMEM ? " (RLIMIT_MEMLOCK too low? "
					 "the RAM is pinned)" : "");
		h->dma_mapped = i + 1;
	}
	return 0;
}

int vfio_host_open(struct vfio_host *h, const char *path, const struct guest_mem *mem,
		   int vm_fd, struct vfio_dev_desc *desc, struct error *err)
{
	*h = (struct vfio_host){ .container = -1, .group = -1, .device = -1, .vm_fd = vm_fd,
				 .mem = mem };
	int ret;
	if ((ret = check_sysfs(h, path, err)) || (ret = open_container(h, err)) ||
	    (ret = device_info(h, desc, err)) || (ret = map_dma(h, err))) {
		vfio_host_close(h);
		return ret;
	}
	return 0;
}

void vfio_host_close(struct vfio_host *h)
{
	for (uint32_t i = 0; i < h->dma_mapped; i++) {
		const struct guest_mem_region *r = &h->mem->regions[i];
		struct vfio_iommu_type1_dma_unmap u = { .argsz = sizeof(u), .iova = r->gpa,
							.size = r->size };
		if (ioctl(h->container, VFIO_IOMMU_UNMAP_DMA, &u))
			log_warn("%s: VFIO_IOMMU_UNMAP_DMA: %s", h->bdf, strerror(errno));
	}
	h->dma_mapped = 0;
	if (h->device >= 0)
		close(h->device);
	if (h->group >= 0) {
		ioctl(h->group, VFIO_GROUP_UNSET_CONTAINER);
		close(h->group);
	}
	if (h->container >= 0)
		close(h->container);
	h->device = h->group = h->container = -1;
}
