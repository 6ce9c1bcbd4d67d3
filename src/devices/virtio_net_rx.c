/* virtio-net RX: backend frame -> staging buffer -> header checks -> posted receive buffers (merged or not) -> used ring, interrupt. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "devices/virtio_net_int.h"
#include "util/log.h"

/*
 * A frame is read from the backend into the queue's staging buffer and
 * only then placed: when the guest has no buffer for it, it waits there,
 * the backend's fd leaves the event loop (the backend keeps the rest) and
 * the receive queue asks for a kick (event index / flags); the kick
 * resumes reading. A frame never fits in part: without MRG_RXBUF it needs
 * one chain as long as header + frame, with MRG_RXBUF as many chains as it
 * takes (num_buffers says how many). A frame that cannot fit is dropped
 * and counted, and the buffers stay with the device for the next one:
 * without MRG_RXBUF when the next chain is too short, with it when even a
 * full ring of chains is too short. Chains popped for a frame that is not
 * placed are given back (the ring's next-available index moves back).
 */

#define RX_BATCH 256u   /* frames read per call before the event loop gets a turn */
#define RX_PUBLISH 64u  /* frames placed per used->idx store (latency bound for a polling driver) */

uint64_t vnet_guest_offloads(const struct virtio_net *n)
{
	if (n->guest_offloads_set)
		return n->guest_offloads;
	return n->pci.negotiated & VIRTIO_NET_GUEST_OFFLOADS_MASK;
}

enum rx_result { RX_DONE, RX_DROPPED, RX_NO_BUFFERS, RX_BROKEN };

/* Writes [src, src + len) at byte `off` of the buffers bufs[0, cnt). */
static void put_at(const struct virtq_buf *bufs, uint32_t cnt, uint32_t off, const uint8_t *src,
		   uint32_t len)
{
	for (uint32_t i = 0; i < cnt && len; i++) {
		uint32_t blen = bufs[i].len;
		if (off >= blen) {
			off -= blen;
			continue;
		}
		uint32_t k = blen - off < len ? blen - off : len;
		memcpy((uint8_t *)bufs[i].host + off, src, k);
		src += k;
		len -= k;
		off = 0;
	}
}

/* A receive chain must be device-writable only and hold at least a header. */
static bool chain_ok(struct virtio_net *n, uint16_t qi)
{
	const struct virtq_chain *c = &n->chain;
	if (!c->n_out && c->in_bytes >= VIRTIO_NET_HDR_LEN)
		return true;
	char why[96];
	snprintf(why, sizeof(why), "q%u receive buffer %u: %u device-readable bytes, %u writable",
		 qi, c->head, c->out_bytes, c->in_bytes);
	virtio_pci_set_needs_reset(&n->pci, why);
	return false;
}

/* Places the frame staged in bq on queue q (index qi). On RX_NO_BUFFERS,
 * *seen is how many chains were available. */
static enum rx_result deliver(struct virtio_net *n, uint16_t qi, struct virtq *q,
			      struct vnet_bq *bq, uint16_t *seen)
{
	const uint32_t total = bq->len;
	const bool mrg = vnet_has(n, VIRTIO_NET_F_MRG_RXBUF);
	uint16_t used = 0;
	uint32_t off = 0;
	struct virtq_buf hdr[VIRTIO_NET_HDR_LEN] = { { 0 } }; /* the first chain's buffers holding the header */
	uint32_t nhdr = 0;
	while (off < total) {
		if (used == q->size) {
			/* A full ring of chains is too short (or the guest keeps adding
			 * to a ring it cannot have refilled): the frame can never fit. */
			virtq_unpop(q, used);
			return RX_DROPPED;
		}
		int r = virtq_pop(q, &n->chain);
		if (r < 0)
			return RX_BROKEN;
		if (r == 0) {
			virtq_unpop(q, used);
			*seen = used;
			return RX_NO_BUFFERS;
		}
		if (!chain_ok(n, qi))
			return RX_BROKEN;
		const struct virtq_chain *c = &n->chain;
		if (!mrg) {
			if (c->in_bytes < total) {
				virtq_unpop(q, 1);
				return RX_DROPPED;
			}
			vnet_put_le16(bq->buf + 10, 1);
			put_at(c->buf, c->n_in, 0, bq->buf, total);
			virtq_fill(q, c->head, total);
			return RX_DONE;
		}
		uint32_t k = c->in_bytes < total - off ? c->in_bytes : total - off;
		put_at(c->buf, c->n_in, 0, bq->buf + off, k);
		if (used == 0) {
			/* Keep the buffers holding the header for num_buffers (at most 12 of them). */
			for (uint32_t i = 0, have = 0; i < c->n_in && have < VIRTIO_NET_HDR_LEN; i++) {
				hdr[nhdr++] = c->buf[i];
				have += c->buf[i].len;
			}
		}
		n->rx_heads[used] = c->head;
		n->rx_lens[used] = k;
		used++;
		off += k;
	}
	uint8_t nb[2];
	vnet_put_le16(nb, used);
	put_at(hdr, nhdr, 10, nb, 2);
	/* Filled, not published: the whole frame (and the rest of the batch) becomes visible with
	 * one used->idx store in vnet_rx_pump, never a frame whose num_buffers are not all used. */
	for (uint16_t i = 0; i < used; i++)
		virtq_fill(q, n->rx_heads[i], n->rx_lens[i]);
	return RX_DONE;
}

/* Is receive offload f (a feature bit) in the set? */
static bool offload_on(uint64_t offloads, unsigned f) { return offloads & (1ull << f); }

/* Checks and completes the offload header of a frame the backend sent
 * with one: only what the driver accepts. Returns false to drop the frame. */
static bool fix_header(struct virtio_net *n, uint8_t *h)
{
	uint8_t flags = h[0], gso = h[1];
	uint64_t g = vnet_guest_offloads(n);
	if (!offload_on(g, VIRTIO_NET_F_GUEST_CSUM)) {
		if (flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
			return false;
		flags = 0;
	}
	flags &= VIRTIO_NET_HDR_F_NEEDS_CSUM | VIRTIO_NET_HDR_F_DATA_VALID;
	switch (gso & ~VIRTIO_NET_HDR_GSO_ECN) {
	case VIRTIO_NET_HDR_GSO_NONE:
		if (gso & VIRTIO_NET_HDR_GSO_ECN)
			return false;
		break;
	case VIRTIO_NET_HDR_GSO_TCPV4:
		if (!offload_on(g, VIRTIO_NET_F_GUEST_TSO4))
			return false;
		break;
	case VIRTIO_NET_HDR_GSO_TCPV6:
		if (!offload_on(g, VIRTIO_NET_F_GUEST_TSO6))
			return false;
		break;
	default:
		return false;
	}
	if ((gso & VIRTIO_NET_HDR_GSO_ECN) && !offload_on(g, VIRTIO_NET_F_GUEST_ECN))
		return false;
	h[0] = flags;
	return true;
}

enum fill_result { FILL_OK, FILL_NEXT, FILL_NONE };

/* Reads the next backend frame of bq into its staging buffer. FILL_NEXT:
 * one was dropped, try again; FILL_NONE: nothing waits, or the queue died. */
static enum fill_result fill(struct virtio_net *n, struct vnet_bq *bq)
{
	struct net_backend *be = n->be;
	uint32_t skip = VIRTIO_NET_HDR_LEN - be->hdr_len;   /* 0 with a header, else 12 */
	ssize_t r = be->ops->recv(be, bq->index, bq->buf + skip, VNET_STAGE_BYTES - skip);
	if (r == -EAGAIN)
		return FILL_NONE;
	if (r == -EMSGSIZE) {
		n->stats.drops[VNET_DROP_RX_TOO_BIG]++;
		log_ratelimited(&n->rl, LOG_WARN, "%s: backend frame longer than %u bytes dropped",
				n->name, VIRTIO_NET_GSO_FRAME_MAX);
		return FILL_NEXT;
	}
	if (r < 0) {
		/* -ENODEV: the host side is gone and the backend has said so once. */
		log_msg(r == -ENODEV ? LOG_INFO : LOG_WARN, "%s: %s queue %u failed (%s); no longer "
			"read", n->name, be->desc, bq->index, strerror((int)-r));
		bq->dead = true;
		vnet_rx_watch(n, bq, false);
		return FILL_NONE;
	}
	if ((uint32_t)r < be->hdr_len + VIRTIO_NET_MIN_FRAME) {
		n->stats.drops[VNET_DROP_RX_BAD_HDR]++;
		return FILL_NEXT;
	}
	if (!be->hdr_len)
		memset(bq->buf, 0, VIRTIO_NET_HDR_LEN);
	else if (!fix_header(n, bq->buf)) {
		n->stats.drops[VNET_DROP_RX_BAD_HDR]++;
		log_ratelimited(&n->rl, LOG_WARN, "%s: backend frame with offloads (flags 0x%x, gso "
				"0x%x) the driver did not accept dropped", n->name, bq->buf[0],
				bq->buf[1]);
		return FILL_NEXT;
	}
	vnet_put_le16(bq->buf + 10, 0);
	bq->len = (uint32_t)r + skip;
	return FILL_OK;
}

/* Offloads the driver accepts in received frames now (CTRL_GUEST_OFFLOADS may have switched
 * some off), as the backend names them. */
static unsigned wanted_offloads(const struct virtio_net *n)
{
	uint64_t g = vnet_guest_offloads(n);
	if (!offload_on(g, VIRTIO_NET_F_GUEST_CSUM))
		return 0;
	unsigned f = NET_OFFLOAD_CSUM;
	if (offload_on(g, VIRTIO_NET_F_GUEST_TSO4))
		f |= NET_OFFLOAD_TSO4;
	if (offload_on(g, VIRTIO_NET_F_GUEST_TSO6))
		f |= NET_OFFLOAD_TSO6;
	if (offload_on(g, VIRTIO_NET_F_GUEST_ECN))
		f |= NET_OFFLOAD_ECN;
	return f & n->be->offloads;
}

static void set_offloads(struct virtio_net *n, unsigned want)
{
	if (want == n->offloads_on)
		return;
	int ret = net_backend_set_offload(n->be, want);
	if (ret)
		log_ratelimited(&n->rl, LOG_WARN, "%s: cannot set backend offloads 0x%x: %s", n->name,
				want, strerror(-ret));
	n->offloads_on = want; /* not retried: frames with others are dropped by fix_header */
}

void vnet_rx_offloads_changed(struct virtio_net *n)
{
	set_offloads(n, wanted_offloads(n));
}

void vnet_rx_watch(struct virtio_net *n, struct vnet_bq *bq, bool on)
{
	int fd = n->be ? n->be->rx_fd[bq->index] : -1;
	if (bq->watched == on || !n->loop || fd < 0)
		return;
	int ret = on ? evloop_add(n->loop, fd, EPOLLIN, &bq->handler) : evloop_del(n->loop, fd);
	if (ret)
		log_ratelimited(&n->rl, LOG_WARN, "%s: epoll %s of backend queue %u: %s", n->name,
				on ? "add" : "del", bq->index, strerror(-ret));
	else
		bq->watched = on;
}

/* Checks a frame just read into bq against what the driver was promised and asked for: no
 * non-GSO frame longer than the advertised MTU (F_MTU, 5.1.6.3), only destinations its
 * filter accepts (CTRL_RX). A refused frame is counted, dropped (bq emptied), false. */
static bool admissible(struct virtio_net *n, struct vnet_bq *bq)
{
	uint32_t frame = bq->len - VIRTIO_NET_HDR_LEN;
	bool gso = (bq->buf[1] & ~VIRTIO_NET_HDR_GSO_ECN) != VIRTIO_NET_HDR_GSO_NONE;
	if (vnet_has(n, VIRTIO_NET_F_MTU) && !gso && frame > n->mtu + VIRTIO_NET_L2_OVERHEAD) {
		n->stats.drops[VNET_DROP_RX_OVER_MTU]++;
		log_ratelimited(&n->rl, LOG_WARN, "%s: received frame of %u bytes is longer than the "
				"guest's MTU %u allows; dropped (did the host side's MTU change?)",
				n->name, frame, n->mtu);
		bq->len = 0;
		return false;
	}
	if (!vnet_filter_accepts(n, bq->buf + VIRTIO_NET_HDR_LEN)) {
		n->stats.drops[VNET_DROP_RX_FILTERED]++;
		bq->len = 0;
		return false;
	}
	return true;
}

static void stall(struct virtio_net *n, struct vnet_bq *bq)
{
	bq->stalled = true;
	vnet_rx_watch(n, bq, false);
}

void vnet_rx_pump(struct virtio_net *n, unsigned k)
{
	struct vnet_bq *bq = &n->bq[k];
	if (bq->dead)
		return;
	uint16_t qi = (uint16_t)(2 * (k % n->curr_pairs));
	struct virtq *q = virtio_pci_queue(&n->pci, qi);
	if (!q) {
		stall(n, bq); /* resumed when the driver is ready (DRIVER_OK kicks every queue) */
		return;
	}
	set_offloads(n, wanted_offloads(n));
	bool pushed = false, broken = false;
	unsigned budget = RX_BATCH, unpublished = 0;
	for (;;) {
		if (!bq->len) {
			if (budget-- == 0)
				break;
			enum fill_result f = fill(n, bq);
			if (f == FILL_NEXT)
				continue;
			if (f == FILL_NONE)
				break;
			if (!admissible(n, bq))
				continue;
		}
		if (!bq->admitted) {
			if (!rate_limiter_admit(&n->rx_limiter, bq->len - VIRTIO_NET_HDR_LEN)) {
				stall(n, bq); /* the limiter's timer kicks the stalled queues */
				break;
			}
			bq->admitted = true;
		}
		uint16_t seen = 0;
		enum rx_result r = deliver(n, qi, q, bq, &seen);
		if (r == RX_DONE || r == RX_DROPPED) {
			if (r == RX_DONE) {
				n->stats.rx_frames++;
				n->stats.rx_bytes += bq->len - VIRTIO_NET_HDR_LEN;
				pushed = true;
				if (++unpublished == RX_PUBLISH) {
					virtq_flush(q);
					unpublished = 0;
				}
			} else {
				n->stats.drops[VNET_DROP_RX_TOO_BIG]++;
				log_ratelimited(&n->rl, LOG_WARN, "%s: received frame of %u bytes does not "
						"fit the receive buffers of q%u; dropped", n->name,
						bq->len - VIRTIO_NET_HDR_LEN, qi);
			}
			bq->len = 0;
			bq->waiting = false;
			bq->admitted = false;
			continue;
		}
		if (r == RX_BROKEN) {
			broken = true;
			break;
		}
		/* No buffers: ask for a kick, then look once more (a buffer posted
		 * before the request was seen would otherwise never be used). */
		virtq_set_notify(q, true);
		if (virtq_avail_pending(q) > seen)
			continue;
		if (!bq->waiting)
			n->stats.rx_stalls++;
		bq->waiting = true;
		stall(n, bq);
		break;
	}
	if (!bq->stalled && !bq->dead)
		vnet_rx_watch(n, bq, true);
	virtq_flush(q); /* also when broken: completed frames are not lost */
	if (pushed || broken)
		virtio_pci_queue_done(&n->pci, qi);
}

void vnet_rx_kick(struct virtio_net *n)
{
	for (unsigned k = 0; k < n->be->nqueues; k++) {
		struct vnet_bq *bq = &n->bq[k];
		if (bq->stalled && !bq->dead) {
			bq->stalled = false;
			vnet_rx_pump(n, k);
		}
	}
}

void vnet_rx_reset(struct virtio_net *n)
{
	for (unsigned k = 0; k < n->be->nqueues; k++) {
		struct vnet_bq *bq = &n->bq[k];
		if (bq->len)
			n->stats.drops[VNET_DROP_RX_RESET]++;
		bq->len = 0;
		bq->waiting = false;
		bq->admitted = false;
		stall(n, bq);
	}
	set_offloads(n, 0);
}
