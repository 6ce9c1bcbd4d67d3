/* virtio-net control queue: command chain -> class/command checks -> VQ_PAIRS_SET (multiqueue) -> ack byte, used ring. */
#include <stdio.h>
#include <string.h>

#include "devices/virtio_net_int.h"
#include "util/log.h"
#include "virtio/budget.h"

/*
 * Only VIRTIO_NET_CTRL_MQ / VQ_PAIRS_SET is supported (the features that
 * would allow other classes, CTRL_RX, CTRL_VLAN, CTRL_MAC_ADDR,
 * GUEST_ANNOUNCE, CTRL_GUEST_OFFLOADS, are not offered); every other
 * command is acknowledged with VIRTIO_NET_ERR. A command chain is
 * device-readable class, command and data, then device-writable bytes of
 * which the last is the ack; one without a writable byte needs a reset.
 */

#define CTRL_HDR 2u   /* class u8, command u8 */

static uint8_t run_command(struct virtio_net *n, uint16_t qi)
{
	const struct virtq_chain *c = &n->chain;
	if (c->out_bytes < CTRL_HDR) {
		log_ratelimited(&n->rl, LOG_WARN, "%s q%u: control command of %u bytes", n->name, qi,
				c->out_bytes);
		return VIRTIO_NET_ERR;
	}
	uint8_t cmd[CTRL_HDR + 2] = { 0 };
	virtq_chain_gather(c, 0, cmd, c->out_bytes < sizeof(cmd) ? c->out_bytes : sizeof(cmd));
	if (cmd[0] == VIRTIO_NET_CTRL_MQ && cmd[1] == VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET) {
		uint16_t pairs = vnet_le16(cmd + 2);
		if (!vnet_has(n, VIRTIO_NET_F_MQ) || c->out_bytes != CTRL_HDR + 2 || pairs < 1 ||
		    pairs > n->max_pairs) {
			log_ratelimited(&n->rl, LOG_WARN, "%s: VQ_PAIRS_SET %u refused (MQ %s, %u data "
					"bytes, %u pairs offered)", n->name, pairs,
					vnet_has(n, VIRTIO_NET_F_MQ) ? "negotiated" : "not negotiated",
					c->out_bytes - CTRL_HDR, n->max_pairs);
			return VIRTIO_NET_ERR;
		}
		n->curr_pairs = pairs;
		vnet_rx_kick(n); /* stalled backend queues may now feed another pair */
		return VIRTIO_NET_OK;
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
	for (;;) {
		if (!vbudget_left(&budget)) {
			virtio_pci_queue_resume(&n->pci, qi);
			break;
		}
		int r = virtq_pop(q, &n->chain);
		if (r == 0) {
			virtq_set_notify(q, true);
			if (!virtq_has_work(q))
				break;
			continue;
		}
		if (r < 0)
			break;
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
