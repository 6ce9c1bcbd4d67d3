/* virtio-net internals shared by the core, RX, TX and control-queue files (not for other modules). */
#ifndef MSIVM_DEVICES_VIRTIO_NET_INT_H
#define MSIVM_DEVICES_VIRTIO_NET_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/virtio_net.h"

/* Staging buffer: a header and the largest frame a backend may hand over. */
#define VNET_STAGE_BYTES (VIRTIO_NET_HDR_LEN + VIRTIO_NET_GSO_FRAME_MAX)

/* Was feature f negotiated? */
static inline bool vnet_has(const struct virtio_net *n, unsigned f)
{
	return n->pci.negotiated & (1ULL << f);
}

static inline uint16_t vnet_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline void vnet_put_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }

/* Index of the control queue as the driver sees it (2 * pairs with MQ, else 2). */
uint16_t vnet_ctrl_queue(const struct virtio_net *n);

/* RX (lock held). The guest posted receive buffers (or became ready):
 * every stalled backend queue reads again. */
void vnet_rx_kick(struct virtio_net *n);
/* Moves frames of backend queue k into receive buffers until it has none,
 * the guest has no buffers (stall: stop watching until vnet_rx_kick), or a
 * batch is done. */
void vnet_rx_pump(struct virtio_net *n, unsigned k);
/* Device reset: waiting frames are dropped, reading stops until the driver is ready. */
void vnet_rx_reset(struct virtio_net *n);
/* Adds (on) or removes the backend queue's rx fd from the event loop. */
void vnet_rx_watch(struct virtio_net *n, struct vnet_bq *bq, bool on);

/* TX: sends every available frame of transmit queue qi (lock held). */
void vnet_tx_process(struct virtio_net *n, uint16_t qi);

/* Control queue: runs every available command of queue qi (lock held). */
void vnet_ctrl_process(struct virtio_net *n, uint16_t qi);

#endif
