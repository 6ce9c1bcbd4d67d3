/* virtio-net core: config space, features, queue kick dispatch (RX/TX/control), reset, backend fds on the event loop. */
#include "devices/virtio_net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "devices/virtio_net_int.h"
#include "util/log.h"

/*
 * Queue layout: receiveq(k) = 2k, transmitq(k) = 2k + 1 for k < pairs,
 * then the control queue: index 2 * max_pairs when VIRTIO_NET_F_MQ is
 * negotiated, else 2 (the driver then sees one pair). The transport
 * always has 2 * max_pairs + 1 queues, so in MSI-X mode it offers
 * 2 * max_pairs + 2 vectors (config + one per queue).
 *
 * Backend queue k (a tap fd) feeds receiveq(k mod pairs in use); a frame
 * from transmitq(k) goes to backend queue k mod backend queues.
 */

static uint64_t bit(unsigned n) { return 1ULL << n; }

static const char *const drop_names[VNET_NDROPS] = {
	"tx_too_big", "tx_runt", "tx_bad_hdr", "tx_backend", "rx_too_big", "rx_bad_hdr", "rx_reset",
	"rx_over_mtu", "rx_filtered",
};

const char *virtio_net_drop_name(enum vnet_drop d)
{
	return (unsigned)d < VNET_NDROPS ? drop_names[d] : "?";
}

uint16_t vnet_ctrl_queue(const struct virtio_net *n)
{
	return vnet_has(n, VIRTIO_NET_F_MQ) ? (uint16_t)(2 * n->max_pairs) : 2;
}

/* ---- config space ---- */

static void net_config_read(void *opaque, uint32_t off, void *data, uint32_t len)
{
	struct virtio_net *n = opaque;
	uint8_t c[VIRTIO_NET_CONFIG_SIZE] = { 0 };
	memcpy(c, n->mac, 6);
	vnet_put_le16(c + 6, VIRTIO_NET_S_LINK_UP);
	vnet_put_le16(c + 8, n->max_pairs);
	vnet_put_le16(c + 10, n->mtu);
	memcpy(data, c + off, len);
}

static void net_config_write(void *opaque, uint32_t off, const void *data, uint32_t len)
{
	struct virtio_net *n = opaque;
	log_ratelimited(&n->rl, LOG_WARN, "%s: write of %u bytes to read-only config at 0x%x ignored",
			n->name, len, off);
}

/* ---- kicks ---- */

static void net_notify(void *opaque, uint16_t qi)
{
	struct virtio_net *n = opaque;
	if (vnet_has(n, VIRTIO_NET_F_CTRL_VQ) && qi == vnet_ctrl_queue(n)) {
		vnet_ctrl_process(n, qi);
		return;
	}
	uint16_t pairs = vnet_has(n, VIRTIO_NET_F_MQ) ? n->max_pairs : 1;
	if (qi >= 2 * pairs) {
		log_ratelimited(&n->rl, LOG_WARN, "%s: kick of queue %u, which the negotiated features "
				"do not use; ignored", n->name, qi);
		return;
	}
	if (n->vhost)
		vnet_vhost_kick(n, qi);
	else if (qi % 2 == 0)
		vnet_rx_kick(n);
	else
		vnet_tx_process(n, qi);
}

static void net_driver_ok(void *opaque)
{
	vnet_vhost_start(opaque);
}

static void net_reset(void *opaque)
{
	struct virtio_net *n = opaque;
	vnet_vhost_stop(n);
	vnet_rx_reset(n);
	n->curr_pairs = 1;
	memcpy(n->mac, n->mac_default, 6);
	n->guest_offloads_set = false;
	vnet_filter_reset(&n->filter);
}

static const struct virtio_dev_ops net_ops = {
	.config_read = net_config_read,
	.config_write = net_config_write,
	.queue_notify = net_notify,
	.driver_ok = net_driver_ok,
	.reset = net_reset,
	.save = vnet_state_save,
	.load = vnet_state_load,
};

/* ---- backend fds ---- */

static void on_rx(void *opaque, uint32_t events)
{
	struct vnet_bq *bq = opaque;
	struct virtio_net *n = bq->dev;
	pthread_mutex_lock(&n->pci.lock);
	if (!bq->stalled)
		vnet_rx_pump(n, bq->index);
	pthread_mutex_unlock(&n->pci.lock);
}

static void on_aux(void *opaque, uint32_t events)
{
	struct virtio_net *n = opaque;
	pthread_mutex_lock(&n->pci.lock);
	n->be->ops->aux(n->be);
	pthread_mutex_unlock(&n->pci.lock);
}

void virtio_net_poll(struct virtio_net *n)
{
	if (n->vhost)
		return;
	pthread_mutex_lock(&n->pci.lock);
	if (n->be->aux_fd >= 0 && n->be->ops->aux)
		n->be->ops->aux(n->be);
	for (unsigned k = 0; k < n->be->nqueues; k++)
		if (!n->bq[k].stalled && !n->bq[k].dead)
			vnet_rx_pump(n, k);
	pthread_mutex_unlock(&n->pci.lock);
}

/* ---- setup ---- */

static uint64_t offered_features(const struct virtio_net *n)
{
	uint64_t f = bit(VIRTIO_NET_F_MAC) | bit(VIRTIO_NET_F_MTU) | bit(VIRTIO_NET_F_STATUS) |
		     bit(VIRTIO_NET_F_CTRL_VQ) | bit(VIRTIO_NET_F_CTRL_MAC_ADDR);
	bool vhost = n->be->vhost_fd >= 0;
	/* vhost-net has no receive filter (CTRL_RX) and runs one queue pair. */
	if (!vhost)
		f |= bit(VIRTIO_NET_F_MRG_RXBUF) | bit(VIRTIO_NET_F_CTRL_RX);
	else if (n->be->vhost_features & bit(VIRTIO_NET_F_MRG_RXBUF))
		f |= bit(VIRTIO_NET_F_MRG_RXBUF);
	if (n->max_pairs > 1 && !vhost)
		f |= bit(VIRTIO_NET_F_MQ);
	unsigned off = n->be->hdr_len ? n->be->offloads : 0;
	if (off & NET_OFFLOAD_CSUM) {
		f |= bit(VIRTIO_NET_F_CSUM) | bit(VIRTIO_NET_F_GUEST_CSUM) |
		     bit(VIRTIO_NET_F_CTRL_GUEST_OFFLOADS);
		if (off & NET_OFFLOAD_TSO4)
			f |= bit(VIRTIO_NET_F_HOST_TSO4) | bit(VIRTIO_NET_F_GUEST_TSO4);
		if (off & NET_OFFLOAD_TSO6)
			f |= bit(VIRTIO_NET_F_HOST_TSO6) | bit(VIRTIO_NET_F_GUEST_TSO6);
		if ((off & NET_OFFLOAD_ECN) && (off & (NET_OFFLOAD_TSO4 | NET_OFFLOAD_TSO6)))
			f |= bit(VIRTIO_NET_F_HOST_ECN) | bit(VIRTIO_NET_F_GUEST_ECN);
	}
	return f;
}

int virtio_net_init(struct virtio_net *n, unsigned index, const struct virtio_net_opts *o,
		    struct net_backend *be, const struct virtio_pci_config *cfg,
		    const struct guest_mem *mem, int vm_fd, struct gsi_routes *routes,
		    struct evloop *loop, struct bus *mmio, struct pci_window window,
		    struct error *err)
{
	memset(n, 0, sizeof(*n));
	n->be = be;
	snprintf(n->name, sizeof(n->name), "net%u", index);
	if (o->queues < 1 || o->queues > VIRTIO_NET_MAX_PAIRS)
		return error_set(err, -EINVAL, "%s: %u queue pairs, want 1 to %u", n->name, o->queues,
				 VIRTIO_NET_MAX_PAIRS);
	if (be->nqueues < 1 || be->nqueues > NET_BE_MAX_QUEUES)
		return error_set(err, -EINVAL, "%s: backend with %u queues", n->name, be->nqueues);
	if (o->mtu && (o->mtu < VIRTIO_NET_MTU_MIN))
		return error_set(err, -EINVAL, "%s: MTU %u below %u", n->name, o->mtu,
				 VIRTIO_NET_MTU_MIN);
	if (o->mac_set) {
		memcpy(n->mac, o->mac, 6);
	} else {
		static const uint8_t base[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x00 };
		memcpy(n->mac, base, 6);
		n->mac[5] = (uint8_t)index;
	}
	memcpy(n->mac_default, n->mac, 6);
	vnet_filter_reset(&n->filter);
	/* The MTU the driver is given: mtu=, else the tap's own, else 1500. The device never
	 * delivers a longer (non-GSO) frame, so a tap MTU above it is reported now. */
	bool be_mtu_ok = be->mtu >= VIRTIO_NET_MTU_MIN && be->mtu <= VIRTIO_NET_MTU_MAX;
	n->mtu = o->mtu ? o->mtu : be_mtu_ok ? (uint16_t)be->mtu : VIRTIO_NET_MTU_DEFAULT;
	if (be_mtu_ok && be->mtu > n->mtu)
		log_warn("%s: %s has MTU %u, the guest gets %u: longer frames from the host will be "
			 "dropped (set mtu=%u, or lower the host's)", n->name, be->desc, be->mtu, n->mtu,
			 be->mtu);
	n->max_pairs = o->queues;
	n->curr_pairs = 1;
	n->loop = loop;
	n->txbuf = malloc(VNET_STAGE_BYTES);
	if (!n->txbuf)
		return error_set(err, -ENOMEM, "%s: out of memory", n->name);
	for (unsigned k = 0; k < be->nqueues; k++) {
		struct vnet_bq *bq = &n->bq[k];
		bq->dev = n;
		bq->index = k;
		bq->stalled = true; /* until a driver is ready */
		bq->handler = (struct evloop_handler){ on_rx, bq };
		bq->buf = malloc(VNET_STAGE_BYTES);
		if (!bq->buf)
			return error_set(err, -ENOMEM, "%s: out of memory", n->name);
	}
	n->features = offered_features(n);
	struct virtio_dev_info info = {
		.name = n->name, .device_id = VIRTIO_ID_NET, .nqueues = (uint16_t)(2 * o->queues + 1),
		.queue_max = VIRTIO_NET_QUEUE_SIZE, .config_size = VIRTIO_NET_CONFIG_SIZE,
		.pci_class = 0x020000, .features = n->features,
	};
	n->pci_ready = true; /* virtio_pci_destroy is safe from here on */
	int ret = virtio_pci_init(&n->pci, &info, &net_ops, n, cfg, mem, vm_fd, routes, loop, mmio,
				  window, err);
	if (ret)
		return ret;
	if (be->vhost_fd >= 0 && (ret = vnet_vhost_init(n, mem, err)))
		return ret;
	if (loop && be->aux_fd >= 0 && be->ops->aux) {
		n->aux_handler = (struct evloop_handler){ on_aux, n };
		ret = evloop_add(loop, be->aux_fd, EPOLLIN, &n->aux_handler);
		if (ret)
			return error_set(err, ret, "%s: epoll: %s", n->name, strerror(-ret));
		n->aux_watched = true;
	}
	return 0;
}

/* The limiter's timer: transmit queues may go on. */
static void net_resume(void *opaque)
{
	struct virtio_net *n = opaque;
	for (uint16_t p = 0; p < n->max_pairs; p++) /* a kick of an unused queue is a no-op */
		virtio_pci_kick(&n->pci, (uint16_t)(2 * p + 1));
}

/* The receive limiter's timer: stalled backend queues may deliver again. */
static void net_rx_resume(void *opaque)
{
	struct virtio_net *n = opaque;
	pthread_mutex_lock(&n->pci.lock);
	vnet_rx_kick(n);
	pthread_mutex_unlock(&n->pci.lock);
}

int virtio_net_set_limit(struct virtio_net *n, const struct rate_limit_opts *tx,
			 const struct rate_limit_opts *rx, struct evloop *loop, struct error *err)
{
	int ret = rate_limiter_init(&n->limiter, tx, loop, net_resume, n, n->name, err);
	return ret ? ret : rate_limiter_init(&n->rx_limiter, rx, loop, net_rx_resume, n, n->name, err);
}

int virtio_net_update_limit(struct virtio_net *n, const struct rate_limit_opts *tx,
			    const struct rate_limit_opts *rx, struct error *err)
{
	pthread_mutex_lock(&n->pci.lock);
	int ret = tx ? rate_limiter_update(&n->limiter, tx, n->name, err) : 0;
	if (!ret && rx)
		ret = rate_limiter_update(&n->rx_limiter, rx, n->name, err);
	pthread_mutex_unlock(&n->pci.lock);
	return ret;
}

void virtio_net_destroy(struct virtio_net *n)
{
	rate_limiter_destroy(&n->limiter);
	rate_limiter_destroy(&n->rx_limiter);
	if (n->pci_ready)
		vnet_vhost_destroy(n);
	if (n->be) {
		for (unsigned k = 0; k < n->be->nqueues; k++)
			vnet_rx_watch(n, &n->bq[k], false);
		if (n->aux_watched)
			evloop_del(n->loop, n->be->aux_fd);
		n->aux_watched = false;
		net_backend_close(n->be);
		n->be = NULL;
	}
	if (n->pci_ready)
		virtio_pci_destroy(&n->pci);
	n->pci_ready = false;
	for (unsigned k = 0; k < NET_BE_MAX_QUEUES; k++) {
		free(n->bq[k].buf);
		n->bq[k].buf = NULL;
	}
	free(n->txbuf);
	n->txbuf = NULL;
}
