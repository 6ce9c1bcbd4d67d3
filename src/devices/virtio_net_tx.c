/* virtio-net TX: transmit chain -> header and size checks -> backend send (segments as they are) -> used ring, interrupt. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "devices/virtio_net_int.h"
#include "util/log.h"
#include "virtio/budget.h"

/*
 * Every transmit chain is returned with a used length of 0, sent or not.
 * A chain that is not a frame at all (device-writable buffers, or fewer
 * bytes than the header) is a driver bug: the device needs a reset. A
 * frame that is too short, too long for the negotiated maximum, or whose
 * header asks for what was not negotiated is dropped and counted (header
 * flag bits other than NEEDS_CSUM are ignored and counted, not a drop); so is
 * one the backend cannot send. Frames go to the backend as iovecs into
 * guest memory (the header is a checked copy); a frame in more than
 * VIRTIO_NET_TX_IOV segments is copied first.
 */

/* The longest frame (without header) the driver may send. */
static uint32_t max_frame(const struct virtio_net *n)
{
	if (vnet_has(n, VIRTIO_NET_F_HOST_TSO4) || vnet_has(n, VIRTIO_NET_F_HOST_TSO6))
		return VIRTIO_NET_GSO_FRAME_MAX;
	return n->mtu + VIRTIO_NET_L2_OVERHEAD;
}

/* Is the driver's header one the device may pass on? */
static bool header_ok(const struct virtio_net *n, const uint8_t *h, uint32_t len)
{
	uint8_t flags = h[0], gso = h[1];
	if (flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		uint32_t start = vnet_le16(h + 6), off = vnet_le16(h + 8);
		if (!vnet_has(n, VIRTIO_NET_F_CSUM) || start + off + 2 > len)
			return false;
	}
	if (gso == VIRTIO_NET_HDR_GSO_NONE)
		return true;
	if (!(flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) || vnet_le16(h + 4) == 0)
		return false;   /* segmentation needs a checksum to fill in and a segment size */
	if ((gso & VIRTIO_NET_HDR_GSO_ECN) && !vnet_has(n, VIRTIO_NET_F_HOST_ECN))
		return false;
	switch (gso & ~VIRTIO_NET_HDR_GSO_ECN) {
	case VIRTIO_NET_HDR_GSO_TCPV4:
		return vnet_has(n, VIRTIO_NET_F_HOST_TSO4);
	case VIRTIO_NET_HDR_GSO_TCPV6:
		return vnet_has(n, VIRTIO_NET_F_HOST_TSO6);
	default:
		return false;
	}
}

/* The iovecs of the frame after the header: bytes [HDR_LEN, out_bytes). */
static int frame_iov(struct virtio_net *n, struct iovec *iov, uint32_t len)
{
	const struct virtq_chain *c = &n->chain;
	if (c->n_out > VIRTIO_NET_TX_IOV) {
		virtq_chain_gather(c, VIRTIO_NET_HDR_LEN, n->txbuf, len);
		iov[0] = (struct iovec){ n->txbuf, len };
		return 1;
	}
	int cnt = 0;
	uint32_t skip = VIRTIO_NET_HDR_LEN;
	for (uint32_t i = 0; i < c->n_out; i++) {
		uint32_t blen = c->buf[i].len;
		if (skip >= blen) {
			skip -= blen;
			continue;
		}
		iov[cnt++] = (struct iovec){ (uint8_t *)c->buf[i].host + skip, blen - skip };
		skip = 0;
	}
	return cnt;
}

/* Sends the frame in n->chain. Returns the drop reason, or -1 if sent. */
static int send_frame(struct virtio_net *n, uint16_t qi, uint8_t *hdr, uint32_t len)
{
	if (len < VIRTIO_NET_MIN_FRAME)
		return VNET_DROP_TX_RUNT;
	if (len > max_frame(n))
		return VNET_DROP_TX_TOO_BIG;
	if (hdr[0] & ~VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		/* 5.1.6.2.2: the device ignores flag bits it does not recognise (and DATA_VALID or
		 * RSC_INFO are not the driver's to set): the frame goes on without them. */
		n->stats.tx_flags_ignored++;
		if (!n->tx_flags_logged)
			log_warn("%s q%u: transmit header flags 0x%x ignored (only NEEDS_CSUM is the "
				 "driver's to set; logged once, counted in tx_flags_ignored)", n->name,
				 qi, hdr[0]);
		n->tx_flags_logged = true;
		hdr[0] &= VIRTIO_NET_HDR_F_NEEDS_CSUM;
	}
	if (!header_ok(n, hdr, len))
		return VNET_DROP_TX_BAD_HDR;
	struct net_backend *be = n->be;
	int cnt = 0;
	if (be->hdr_len) {
		vnet_put_le16(hdr + 10, 0);
		n->txiov[cnt++] = (struct iovec){ hdr, VIRTIO_NET_HDR_LEN };
	} else if (hdr[0] || hdr[1]) {
		return VNET_DROP_TX_BAD_HDR;  /* cannot happen: no offload is offered */
	}
	cnt += frame_iov(n, n->txiov + cnt, len);
	unsigned bq = (unsigned)(qi / 2) % be->nqueues;
	if (be->ops->send(be, bq, n->txiov, cnt))
		return VNET_DROP_TX_BACKEND;
	n->stats.tx_frames++;
	n->stats.tx_bytes += len;
	return -1;
}

static const char *const why_text[] = {
	[VNET_DROP_TX_TOO_BIG] = "longer than the negotiated maximum",
	[VNET_DROP_TX_RUNT] = "shorter than an Ethernet header",
	[VNET_DROP_TX_BAD_HDR] = "its header asks for offloads not negotiated, or is malformed",
};

/* Handles the chain in n->chain. Returns 0, or -EIO if the device needs a reset. */
static int tx_one(struct virtio_net *n, uint16_t qi, struct virtq *q)
{
	const struct virtq_chain *c = &n->chain;
	if (c->n_in || c->out_bytes < VIRTIO_NET_HDR_LEN) {
		char why[96];
		snprintf(why, sizeof(why), "q%u transmit chain %u: %u readable bytes (a header is %u), "
			 "%u writable", qi, c->head, c->out_bytes, VIRTIO_NET_HDR_LEN, c->in_bytes);
		virtio_pci_set_needs_reset(&n->pci, why);
		return -EIO;
	}
	uint8_t hdr[VIRTIO_NET_HDR_LEN];
	virtq_chain_gather(c, 0, hdr, sizeof(hdr));
	uint32_t len = c->out_bytes - VIRTIO_NET_HDR_LEN;
	int why = send_frame(n, qi, hdr, len);
	if (why >= 0) {
		n->stats.drops[why]++;
		if (why != VNET_DROP_TX_BACKEND) /* the backend says why itself */
			log_ratelimited(&n->rl, LOG_WARN, "%s q%u: frame of %u bytes dropped: %s",
					n->name, qi, len, why_text[why]);
	}
	virtq_push(q, c->head, 0);
	return 0;
}

void vnet_tx_process(struct virtio_net *n, uint16_t qi)
{
	struct virtq *q = virtio_pci_queue(&n->pci, qi);
	if (!q)
		return;
	struct vbudget budget = vbudget_start(VBUDGET_BYTES);
	while (virtio_pci_pop(&n->pci, qi, &budget, &n->chain) == 1) {
		if (!rate_limiter_admit(&n->limiter, n->chain.out_bytes)) {
			virtq_unpop(q, 1); /* the limiter's timer kicks the queue again */
			break;
		}
		vbudget_charge(&budget, n->chain.out_bytes);
		if (tx_one(n, qi, q))
			break;
	}
	virtio_pci_queue_done(&n->pci, qi);
}
