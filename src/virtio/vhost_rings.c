/* vhost: a virtio-pci device's rings handed to a kernel vhost device at DRIVER_OK, kicks and interrupts wired past msivm, taken back at reset. */
#include "virtio/vhost_rings.h"

#include <errno.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "virtio/virtio_pci.h"

static void on_call(void *opaque, uint32_t events)
{
	struct vhost_ring *r = opaque;
	struct vhost_rings *h = r->owner;
	uint64_t v;
	if (read(r->call_fd, &v, sizeof(v)) != sizeof(v))
		return;
	pthread_mutex_lock(&h->pci->lock);
	if (h->running)
		virtio_pci_queue_signal(h->pci, r->qi);
	pthread_mutex_unlock(&h->pci->lock);
}

static void on_err(void *opaque, uint32_t events)
{
	struct vhost_rings *h = opaque;
	char why[64];
	uint64_t v;
	if (read(h->err_fd, &v, sizeof(v)) != sizeof(v))
		return;
	snprintf(why, sizeof(why), "%s found a malformed ring", h->what);
	pthread_mutex_lock(&h->pci->lock);
	virtio_pci_set_needs_reset(h->pci, why);
	pthread_mutex_unlock(&h->pci->lock);
}

/* Tells vhost where guest RAM is: every region, at its guest address and our mapping. */
static int set_mem_table(struct vhost_rings *h, const struct guest_mem *mem, struct error *err)
{
	struct {
		struct vhost_memory hdr;
		struct vhost_memory_region r[GUEST_MEM_MAX_REGIONS];
	} t;
	memset(&t, 0, sizeof(t));
	t.hdr.nregions = mem->nregions;
	for (uint32_t i = 0; i < mem->nregions; i++) {
		t.r[i].guest_phys_addr = mem->regions[i].gpa;
		t.r[i].memory_size = mem->regions[i].size;
		t.r[i].userspace_addr = (uint64_t)(uintptr_t)mem->regions[i].host;
	}
	if (ioctl(h->fd, VHOST_SET_MEM_TABLE, &t))
		return error_set(err, -errno, "%s: VHOST_SET_MEM_TABLE: %s", h->name, strerror(errno));
	return 0;
}

/* A new eventfd in *fd, watched in the loop with `handler`. */
static int watched_eventfd(struct vhost_rings *h, int *fd, struct evloop_handler *handler,
			   struct error *err)
{
	*fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (*fd < 0)
		return error_set(err, -errno, "%s: eventfd: %s", h->name, strerror(errno));
	int ret = h->loop ? evloop_add(h->loop, *fd, EPOLLIN, handler) : 0;
	return ret ? error_set(err, ret, "%s: epoll: %s", h->name, strerror(-ret)) : 0;
}

int vhost_rings_init(struct vhost_rings *h, struct virtio_pci *pci, const char *name,
		     const char *what, int fd, const uint16_t *qis, unsigned n,
		     const struct guest_mem *mem, struct evloop *loop, struct error *err)
{
	*h = (struct vhost_rings){ .pci = pci, .name = name, .what = what, .fd = fd, .loop = loop,
				   .n = n, .err_fd = -1, .ready = true };
	for (unsigned i = 0; i < VHOST_RINGS_MAX; i++)
		h->ring[i] = (struct vhost_ring){ .owner = h, .qi = i < n ? qis[i] : 0, .call_fd = -1 };
	if (n > VHOST_RINGS_MAX)
		return error_set(err, -EINVAL, "%s: %u vhost rings asked for (at most %d)", name, n,
				 VHOST_RINGS_MAX);
	int ret = set_mem_table(h, mem, err);
	if (ret)
		return ret;
	for (unsigned i = 0; i < n; i++) {
		struct vhost_ring *r = &h->ring[i];
		if (virtio_pci_release_kick(pci, r->qi) < 0)
			return error_set(err, -EIO, "%s: cannot hand queue %u's kicks to %s", name,
					 r->qi, what);
		r->handler = (struct evloop_handler){ on_call, r };
		if ((ret = watched_eventfd(h, &r->call_fd, &r->handler, err)))
			return ret;
	}
	h->err_handler = (struct evloop_handler){ on_err, h };
	return watched_eventfd(h, &h->err_fd, &h->err_handler, err);
}

static int vring_file(int fd, unsigned long req, unsigned idx, int file)
{
	struct vhost_vring_file f = { .index = idx, .fd = file };
	return ioctl(fd, req, &f) ? -errno : 0;
}

/* Hands ring i to vhost. Returns NULL, or a reason and *e. */
static const char *start_ring(struct vhost_rings *h, unsigned i, int *e)
{
	struct vhost_ring *r = &h->ring[i];
	const struct vpci_queue *q = &h->pci->queues[r->qi];
	uint64_t size = q->size;
	void *desc = gm_ptr(h->pci->mem, q->desc, 16 * size);
	void *avail = gm_ptr(h->pci->mem, q->driver, 6 + 2 * size);
	void *used = gm_ptr(h->pci->mem, q->device, 6 + 8 * size);
	*e = EFAULT;
	if (!desc || !avail || !used)
		return "rings outside guest RAM";
	struct vhost_vring_state num = { .index = i, .num = q->size };
	struct vhost_vring_state base = { .index = i, .num = q->vq.last_avail };
	struct vhost_vring_addr addr = {
		.index = i,
		.desc_user_addr = (uint64_t)(uintptr_t)desc,
		.avail_user_addr = (uint64_t)(uintptr_t)avail,
		.used_user_addr = (uint64_t)(uintptr_t)used,
	};
	int irqfd = virtio_pci_queue_irqfd(h->pci, r->qi);
	r->direct = irqfd >= 0;
	if (ioctl(h->fd, VHOST_SET_VRING_NUM, &num) || ioctl(h->fd, VHOST_SET_VRING_BASE, &base) ||
	    ioctl(h->fd, VHOST_SET_VRING_ADDR, &addr)) {
		*e = errno;
		return "VHOST_SET_VRING_NUM/BASE/ADDR refused";
	}
	if ((*e = -vring_file(h->fd, VHOST_SET_VRING_KICK, i, q->kick_fd)) ||
	    (*e = -vring_file(h->fd, VHOST_SET_VRING_CALL, i, r->direct ? irqfd : r->call_fd)) ||
	    (*e = -vring_file(h->fd, VHOST_SET_VRING_ERR, i, h->err_fd)))
		return "VHOST_SET_VRING_KICK/CALL/ERR refused";
	r->started = true;
	return NULL;
}

const char *vhost_rings_start(struct vhost_rings *h, uint64_t features, int *e)
{
	const char *why = NULL;
	*e = 0;
	h->running = true; /* also on failure: stop undoes what started */
	if (ioctl(h->fd, VHOST_SET_FEATURES, &features)) {
		*e = errno;
		return "VHOST_SET_FEATURES refused";
	}
	for (unsigned i = 0; i < h->n && !why; i++)
		if (virtio_pci_queue(h->pci, h->ring[i].qi))
			why = start_ring(h, i, e);
	if (!why)
		log_debug("%s: %s runs queues %u and %u (interrupts %s / %s)", h->name, h->what,
			  h->ring[0].qi, h->ring[1].qi, h->ring[0].direct ? "irqfd" : "msivm",
			  h->ring[1].direct ? "irqfd" : "msivm");
	return why;
}

void vhost_rings_stop(struct vhost_rings *h)
{
	for (unsigned i = 0; i < h->n; i++) {
		struct vhost_ring *r = &h->ring[i];
		if (!r->started)
			continue;
		/* Only a reset stops the rings, and after one the driver starts its rings over
		 * at index 0: vhost's last_avail_idx is read (the kernel's stop handshake) but
		 * not kept. Were stop ever used to pause a running device, it would belong in
		 * q->vq.last_avail, which start_ring hands back to vhost. */
		struct vhost_vring_state base = { .index = i };
		(void)ioctl(h->fd, VHOST_GET_VRING_BASE, &base);
		r->started = false;
	}
	h->running = false;
}

bool vhost_rings_kick(struct vhost_rings *h, uint16_t qi)
{
	uint64_t one = 1;
	return write(h->pci->queues[qi].kick_fd, &one, sizeof(one)) == sizeof(one);
}

static void close_watched(struct vhost_rings *h, int *fd)
{
	if (*fd >= 0) {
		if (h->loop)
			evloop_del(h->loop, *fd);
		close(*fd);
	}
	*fd = -1;
}

void vhost_rings_destroy(struct vhost_rings *h)
{
	if (!h->ready)
		return;
	if (h->running)
		vhost_rings_stop(h);
	for (unsigned i = 0; i < VHOST_RINGS_MAX; i++)
		close_watched(h, &h->ring[i].call_fd);
	close_watched(h, &h->err_fd);
	h->ready = false;
}
