/* virtio-net control queue: command chain -> class/command checks -> multiqueue, receive offloads, filters, MAC -> ack byte, used ring. */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "devices/virtio_net_int.h"
#include "util/log.h"
#include "virtio/budget.h"

/*
 * Commands: MQ VQ_PAIRS_SET, GUEST_OFFLOADS SET, RX PROMISC/ALLMULTI and MAC
 * TABLE_SET/ADDR_SET (virtio_net_filter.c), each only when its feature was
 * negotiated; anything else is acknowledged with VIRTIO_NET_ERR. A command
 * chain is device-readable class, command and data, then device-writable
 * bytes of which the last is the ack; one without a writable byte needs a
 * reset. Data longer than CTRL_DATA_MAX (two full MAC tables fit) is refused.
 */

#define CTRL_HDR 2u   /* class u8, command u8 */
#define CTRL_DATA_MAX (8u + 2u * 6u * VIRTIO_NET_MAC_TABLE_MAX * 4u)
static uint8_t pairs_set(struct virtio_net *n, const uint8_t *d, uint32_t len)
{
	uint16_t pairs = len == 2 ? vnet_le16(d) : 0;
	if (!vnet_has(n, VIRTIO_NET_F_MQ) || len != 2 || pairs < 1 || pairs > n->max_pairs) {
		log_ratelimited(&n->rl, LOG_WARN, "%s: VQ_PAIRS_SET %u refused (MQ %s, %u data "
				"bytes, %u pairs offered)", n->name, pairs,
				vnet_has(n, VIRTIO_NET_F_MQ) ? "negotiated" : "not negotiated", len,
				n->max_pairs);
		return VIRTIO_NET_ERR;
	}
	n->curr_pairs = pairs;
	vnet_rx_kick(n); /* stalled backend queues may now feed another pair */
	return VIRTIO_NET_OK;
}

/* GUEST_OFFLOADS SET: le64 of receive-offload feature bits, each one negotiated. The backend
 * follows at once. */
static uint8_t offloads_set(struct virtio_net *n, const uint8_t *d, uint32_t len)
{
	uint64_t v = 0;
	if (len == 8)
		memcpy(&v, d, 8);
	v = le64toh(v);
	uint64_t allowed = n->pci.negotiated & VIRTIO_NET_GUEST_OFFLOADS_MASK;
	if (!vnet_has(n, VIRTIO_NET_F_CTRL_GUEST_OFFLOADS) || len != 8 || (v & ~allowed)) {
		log_ratelimited(&n->rl, LOG_WARN, "%s: GUEST_OFFLOADS_SET 0x%llx refused (feature %s, "
				"%u data bytes, negotiated receive offloads 0x%llx)", n->name,
				(unsigned long long)v,
				vnet_has(n, VIRTIO_NET_F_CTRL_GUEST_OFFLOADS) ? "negotiated" : "not negotiated",
				len, (unsigned long long)allowed);
		return VIRTIO_NET_ERR;
	}
	n->guest_offloads = v;
	n->guest_offloads_set = true;
	vnet_rx_offloads_changed(n);
	return VIRTIO_NET_OK;
}

static uint8_t run_command(struct virtio_net *n, uint16_t qi)
{
	const struct virtq_chain *c = &n->chain;
	if (c->out_bytes < CTRL_HDR || c->out_bytes - CTRL_HDR > CTRL_DATA_MAX) {
		log_ratelimited(&n->rl, LOG_WARN, "%s q%u: control command of %u bytes", n->name, qi,
				c->out_bytes);
		return VIRTIO_NET_ERR;
	}
	uint8_t cmd[CTRL_HDR + CTRL_DATA_MAX];
	virtq_chain_gather(c, 0, cmd, c->out_bytes); /* one copy: only it is checked and used */
	const uint8_t *data = cmd + CTRL_HDR;
	uint32_t len = c->out_bytes - CTRL_HDR;
	switch (cmd[0]) {
	case VIRTIO_NET_CTRL_MQ:
		if (cmd[1] == VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET)
			return pairs_set(n, data, len);
		break;
	case VIRTIO_NET_CTRL_GUEST_OFFLOADS:
		if (cmd[1] == VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET)
			return offloads_set(n, data, len);
		break;
	case VIRTIO_NET_CTRL_RX:
	case VIRTIO_NET_CTRL_MAC:
		return vnet_filter_command(n, cmd[0], cmd[1], data, len);
	}
	log_ratelimited(&n->rl, LOG_INFO, "%s: control class %u command %u not supported", n->name,
			cmd[0], cmd[1]);
	return VIRTIO_NET_ERR;
}

void vnet_ctrl_process(struct virtio_net *n, uint16_t qi)
{
	struct virtq *q = virtio_pci_queue(&n->pci, qi);
	if (!q)
		return;
	struct vbudget budget = vbudget_start(VBUDGET_BYTES);
	while (virtio_pci_pop(&n->pci, qi, &budget, &n->chain) == 1) {
		const struct virtq_chain *c = &n->chain;
		vbudget_charge(&budget, c->out_bytes);
		if (c->n_in == 0) {
			char why[80];
			snprintf(why, sizeof(why), "q%u control command %u has no device-writable ack byte",
				 qi, c->head);
			virtio_pci_set_needs_reset(&n->pci, why);
			break;
		}
		const struct virtq_buf *last = &c->buf[c->n_out + c->n_in - 1];
		uint8_t *ack = (uint8_t *)last->host + last->len - 1;
		uint16_t head = c->head;
		uint8_t v = run_command(n, qi); /* may pump RX, which reuses n->chain */
		if (v == VIRTIO_NET_OK)
			n->stats.ctrl_ok++;
		else
			n->stats.ctrl_err++;
		__atomic_store_n(ack, v, __ATOMIC_RELAXED);
		virtq_push(q, head, 1);
	}
	virtio_pci_queue_done(&n->pci, qi);
}
