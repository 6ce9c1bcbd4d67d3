/* virtio-net over vhost-net: guest memory and rings handed to the kernel at DRIVER_OK, kicks and interrupts wired past msivm, taken back at reset. */
#include <errno.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "devices/virtio_net_int.h"
#include "util/log.h"

/*
 * Data path: the guest's notify write is an ioeventfd that vhost reads (msivm's event loop no
 * longer watches it); vhost moves frames between the rings and the tap and signals the queue's
 * "call" eventfd. That eventfd is the MSI-X vector's own irqfd eventfd when the driver gave the
 * queue a vector and delivery is by irqfd: the interrupt then reaches the guest without msivm
 * waking at all. Otherwise (MSI, INTx, signal-msi, no MSI-X yet at DRIVER_OK) it is an eventfd
 * of ours, and the I/O thread raises the queue's interrupt through the transport, which keeps
 * the ISR, INTx and pending-bit rules. The control queue stays with msivm (virtio_net_ctrl.c).
 */

static uint64_t bit(unsigned n) { return 1ULL << n; }

/* Features of the rings themselves that vhost must implement (the rest are msivm's). */
#define VHOST_RING_FEATURES (bit(VIRTIO_NET_F_MRG_RXBUF) | bit(VIRTIO_F_EVENT_IDX) | \
			     bit(VIRTIO_F_INDIRECT_DESC) | bit(VIRTIO_F_VERSION_1))

static void on_call(void *opaque, uint32_t events)
{
	struct vnet_vhost_ring *r = opaque;
	struct virtio_net *n = r->dev;
	uint64_t v;
	if (read(r->call_fd, &v, sizeof(v)) != sizeof(v))
		return;
	pthread_mutex_lock(&n->pci.lock);
	if (n->vhost_running)
		virtio_pci_queue_signal(&n->pci, r->qi);
	pthread_mutex_unlock(&n->pci.lock);
}

static void on_err(void *opaque, uint32_t events)
{
	struct virtio_net *n = opaque;
	uint64_t v;
	if (read(n->vhost_err_fd, &v, sizeof(v)) != sizeof(v))
		return;
	pthread_mutex_lock(&n->pci.lock);
	virtio_pci_set_needs_reset(&n->pci, "vhost-net found a malformed ring");
	pthread_mutex_unlock(&n->pci.lock);
}

/* Tells vhost where guest RAM is: every region, at its guest address and our mapping. */
static int set_mem_table(struct virtio_net *n, const struct guest_mem *mem, struct error *err)
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
	if (ioctl(n->be->vhost_fd, VHOST_SET_MEM_TABLE, &t))
		return error_set(err, -errno, "%s: VHOST_SET_MEM_TABLE: %s", n->name, strerror(errno));
	return 0;
}

int vnet_vhost_init(struct virtio_net *n, const struct guest_mem *mem, struct error *err)
{
	const uint64_t need = bit(VIRTIO_F_EVENT_IDX) | bit(VIRTIO_F_INDIRECT_DESC) |
			      bit(VIRTIO_F_VERSION_1);
	if ((n->be->vhost_features & need) != need)
		return error_set(err, -EOPNOTSUPP, "%s: this kernel's vhost-net lacks VERSION_1, "
				 "EVENT_IDX or INDIRECT_DESC (features 0x%llx)", n->name,
				 (unsigned long long)n->be->vhost_features);
	n->vhost = true;
	n->vhost_err_fd = -1;
	for (unsigned i = 0; i < 2; i++)
		n->vhost_ring[i] = (struct vnet_vhost_ring){ .dev = n, .qi = (uint16_t)i, .call_fd = -1 };
	int ret = set_mem_table(n, mem, err);
	if (ret)
		return ret;
	for (unsigned i = 0; i < 2; i++) {
		struct vnet_vhost_ring *r = &n->vhost_ring[i];
		if (virtio_pci_release_kick(&n->pci, r->qi) < 0)
			return error_set(err, -EIO, "%s: cannot hand queue %u's kicks to vhost", n->name,
					 r->qi);
		r->call_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (r->call_fd < 0)
			return error_set(err, -errno, "%s: eventfd: %s", n->name, strerror(errno));
		r->handler = (struct evloop_handler){ on_call, r };
		if (n->loop && (ret = evloop_add(n->loop, r->call_fd, EPOLLIN, &r->handler)))
			return error_set(err, ret, "%s: epoll: %s", n->name, strerror(-ret));
	}
	n->vhost_err_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (n->vhost_err_fd < 0)
		return error_set(err, -errno, "%s: eventfd: %s", n->name, strerror(errno));
	n->vhost_err_handler = (struct evloop_handler){ on_err, n };
	if (n->loop && (ret = evloop_add(n->loop, n->vhost_err_fd, EPOLLIN, &n->vhost_err_handler)))
		return error_set(err, ret, "%s: epoll: %s", n->name, strerror(-ret));
	return 0;
}

static int vring_file(int fd, unsigned long req, unsigned idx, int file)
{
	struct vhost_vring_file f = { .index = idx, .fd = file };
	return ioctl(fd, req, &f) ? -errno : 0;
}

/* Hands ring i (0: receive, 1: transmit) to vhost. Returns NULL, or a reason and *e. */
static const char *start_ring(struct virtio_net *n, unsigned i, int *e)
{
	struct vnet_vhost_ring *r = &n->vhost_ring[i];
	const struct vpci_queue *q = &n->pci.queues[r->qi];
	int fd = n->be->vhost_fd;
	uint64_t size = q->size;
	void *desc = gm_ptr(n->pci.mem, q->desc, 16 * size);
	void *avail = gm_ptr(n->pci.mem, q->driver, 6 + 2 * size);
	void *used = gm_ptr(n->pci.mem, q->device, 6 + 8 * size);
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
	int irqfd = virtio_pci_queue_irqfd(&n->pci, r->qi);
	r->direct = irqfd >= 0;
	if (ioctl(fd, VHOST_SET_VRING_NUM, &num) || ioctl(fd, VHOST_SET_VRING_BASE, &base) ||
	    ioctl(fd, VHOST_SET_VRING_ADDR, &addr)) {
		*e = errno;
		return "VHOST_SET_VRING_NUM/BASE/ADDR refused";
	}
	if ((*e = -vring_file(fd, VHOST_SET_VRING_KICK, i, q->kick_fd)) ||
	    (*e = -vring_file(fd, VHOST_SET_VRING_CALL, i, r->direct ? irqfd : r->call_fd)) ||
	    (*e = -vring_file(fd, VHOST_SET_VRING_ERR, i, n->vhost_err_fd)))
		return "VHOST_SET_VRING_KICK/CALL/ERR refused";
	if ((*e = -vring_file(fd, VHOST_NET_SET_BACKEND, i, n->be->rx_fd[0])))
		return "VHOST_NET_SET_BACKEND refused";
	r->started = true;
	return NULL;
}

void vnet_vhost_start(struct virtio_net *n)
{
	if (!n->vhost || n->vhost_running)
		return;
	uint64_t features = n->pci.negotiated & VHOST_RING_FEATURES;
	const char *why = NULL;
	int e = 0;
	if (ioctl(n->be->vhost_fd, VHOST_SET_FEATURES, &features)) {
		e = errno;
		why = "VHOST_SET_FEATURES refused";
	}
	for (unsigned i = 0; i < 2 && !why; i++)
		if (virtio_pci_queue(&n->pci, n->vhost_ring[i].qi))
			why = start_ring(n, i, &e);
	n->vhost_running = true; /* also on failure: stop undoes what started */
	if (why) {
		char msg[128];
		snprintf(msg, sizeof(msg), "vhost-net: %s (%s)", why, strerror(e));
		vnet_vhost_stop(n);
		virtio_pci_set_needs_reset(&n->pci, msg);
		return;
	}
	vnet_rx_offloads_changed(n); /* the tap offers the guest what it negotiated */
	log_debug("%s: vhost-net runs rings 0 and 1 (interrupts %s / %s)", n->name,
		  n->vhost_ring[0].direct ? "irqfd" : "msivm", n->vhost_ring[1].direct ? "irqfd" : "msivm");
}

void vnet_vhost_stop(struct virtio_net *n)
{
	if (!n->vhost || !n->vhost_running)
		return;
	int fd = n->be->vhost_fd;
	for (unsigned i = 0; i < 2; i++) {
		struct vnet_vhost_ring *r = &n->vhost_ring[i];
		if (!r->started)
			continue;
		/* Detaching the tap flushes vhost's worker: it touches guest memory no more. */
		if (vring_file(fd, VHOST_NET_SET_BACKEND, i, -1))
			log_warn("%s: vhost-net ring %u: VHOST_NET_SET_BACKEND(-1): %s", n->name, i,
				 strerror(errno));
		/* Only a reset stops the rings, and after one the driver starts its rings over
		 * at index 0: vhost's last_avail_idx is read (the kernel's stop handshake) but
		 * not kept. Were stop ever used to pause a running device, it would belong in
		 * q->vq.last_avail, which start_ring hands back to vhost. */
		struct vhost_vring_state base = { .index = i };
		(void)ioctl(fd, VHOST_GET_VRING_BASE, &base);
		r->started = false;
	}
	n->vhost_running = false;
}

void vnet_vhost_kick(struct virtio_net *n, uint16_t qi)
{
	uint64_t one = 1;
	if (write(n->pci.queues[qi].kick_fd, &one, sizeof(one)) != sizeof(one))
		log_ratelimited(&n->rl, LOG_WARN, "%s: cannot pass a kick of queue %u to vhost: %s",
				n->name, qi, strerror(errno));
}

void vnet_vhost_destroy(struct virtio_net *n)
{
	if (!n->vhost)
		return;
	vnet_vhost_stop(n);
	for (unsigned i = 0; i < 2; i++) {
		struct vnet_vhost_ring *r = &n->vhost_ring[i];
		if (r->call_fd >= 0) {
			if (n->loop)
				evloop_del(n->loop, r->call_fd);
			close(r->call_fd);
		}
		r->call_fd = -1;
	}
	if (n->vhost_err_fd >= 0) {
		if (n->loop)
			evloop_del(n->loop, n->vhost_err_fd);
		close(n->vhost_err_fd);
	}
	n->vhost_err_fd = -1;
	n->vhost = false;
}
