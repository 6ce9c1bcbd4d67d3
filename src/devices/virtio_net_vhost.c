/* virtio-net over vhost-net: rings handed to the kernel at DRIVER_OK (virtio/vhost_rings.c) with the tap as their backend, taken back at reset. */
#include <errno.h>
#include <linux/vhost.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "devices/virtio_net_int.h"
#include "util/log.h"

/* vhost-net runs receiveq 0 and transmitq 1 (vhost rings 0 and 1); the control queue stays
 * with msivm (virtio_net_ctrl.c). */

static uint64_t bit(unsigned n) { return 1ULL << n; }

/* Features of the rings themselves that vhost must implement (the rest are msivm's). */
#define VHOST_RING_FEATURES (bit(VIRTIO_NET_F_MRG_RXBUF) | bit(VIRTIO_F_EVENT_IDX) | \
			     bit(VIRTIO_F_INDIRECT_DESC) | bit(VIRTIO_F_VERSION_1))

int vnet_vhost_init(struct virtio_net *n, const struct guest_mem *mem, struct error *err)
{
	static const uint16_t qis[2] = { 0, 1 };
	const uint64_t need = bit(VIRTIO_F_EVENT_IDX) | bit(VIRTIO_F_INDIRECT_DESC) |
			      bit(VIRTIO_F_VERSION_1);
	if ((n->be->vhost_features & need) != need)
		return error_set(err, -EOPNOTSUPP, "%s: this kernel's vhost-net lacks VERSION_1, "
				 "EVENT_IDX or INDIRECT_DESC (features 0x%llx)", n->name,
				 (unsigned long long)n->be->vhost_features);
	n->vhost = true;
	return vhost_rings_init(&n->vh, &n->pci, n->name, "vhost-net", n->be->vhost_fd, qis, 2,
				mem, n->loop, err);
}

static int set_backend(struct virtio_net *n, unsigned i, int fd)
{
	struct vhost_vring_file f = { .index = i, .fd = fd };
	return ioctl(n->be->vhost_fd, VHOST_NET_SET_BACKEND, &f) ? errno : 0;
}

void vnet_vhost_start(struct virtio_net *n)
{
	if (!n->vhost || n->vh.running)
		return;
	int e = 0;
	const char *why = vhost_rings_start(&n->vh, n->pci.negotiated & VHOST_RING_FEATURES, &e);
	for (unsigned i = 0; i < 2 && !why; i++)
		if (n->vh.ring[i].started && (e = set_backend(n, i, n->be->rx_fd[0])))
			why = "VHOST_NET_SET_BACKEND refused";
	if (why) {
		char msg[128];
		snprintf(msg, sizeof(msg), "vhost-net: %s (%s)", why, strerror(e));
		vnet_vhost_stop(n);
		virtio_pci_set_needs_reset(&n->pci, msg);
		return;
	}
	vnet_rx_offloads_changed(n); /* the tap offers the guest what it negotiated */
}

void vnet_vhost_stop(struct virtio_net *n)
{
	if (!n->vhost || !n->vh.running)
		return;
	/* Detaching the tap flushes vhost's worker: it touches guest memory no more. */
	for (unsigned i = 0; i < 2; i++)
		if (n->vh.ring[i].started && set_backend(n, i, -1))
			log_warn("%s: vhost-net ring %u: VHOST_NET_SET_BACKEND(-1): %s", n->name, i,
				 strerror(errno));
	vhost_rings_stop(&n->vh);
}

void vnet_vhost_kick(struct virtio_net *n, uint16_t qi)
{
	if (!vhost_rings_kick(&n->vh, qi))
		log_ratelimited(&n->rl, LOG_WARN, "%s: cannot pass a kick of queue %u to vhost: %s",
				n->name, qi, strerror(errno));
}

void vnet_vhost_destroy(struct virtio_net *n)
{
	if (!n->vhost)
		return;
	vnet_vhost_stop(n);
	vhost_rings_destroy(&n->vh);
	n->vhost = false;
}
