/* virtio-net internals shared by the core, RX, TX and control-queue files (not for other modules). */
#ifndef MSIVM_DEVICES_VIRTIO_NET_INT_H
#define MSIVM_DEVICES_VIRTIO_NET_INT_H

#include <stdbool.h>
#include <stdint.h>

/* A two-file circle on purpose: these internals need the device's struct virtio_net
 * (virtio_net.h), and virtio_net.c calls the RX/TX/control halves declared here; splitting the
 * struct out would only move the circle. */
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
/* The receive offloads in force changed (CTRL_GUEST_OFFLOADS): the backend follows now. Frames
 * it already holds with a switched-off offload are dropped when read (counted rx_bad_hdr). */
void vnet_rx_offloads_changed(struct virtio_net *n);
/* Snapshot: the control queue's state (MAC, offloads, pairs, RX filter) as JSON; NULL with a
 * message for backend=vhost. Restore: puts it back (lock held, before DRIVER_OK), 0 or -EINVAL. */
json_t *vnet_state_save(void *opaque, struct error *err);
int vnet_state_load(void *opaque, const json_t *o, struct error *err);
/* Adds (on) or removes the backend queue's rx fd from the event loop. */
void vnet_rx_watch(struct virtio_net *n, struct vnet_bq *bq, bool on);

/* TX: sends every available frame of transmit queue qi (lock held). */
void vnet_tx_process(struct virtio_net *n, uint16_t qi);

/* Control queue: runs every available command of queue qi (lock held). */
void vnet_ctrl_process(struct virtio_net *n, uint16_t qi);

/* backend=vhost (virtio_net_vhost.c, over virtio/vhost_rings.c). init: checks vhost's features, gives it guest memory,
 * takes the data queues' kicks out of the event loop and watches our call and error eventfds;
 * 0 or -errno with a message. start (DRIVER_OK, lock held): hands the enabled data rings,
 * kicks, interrupts and the tap to vhost; a refusal puts the device into NEEDS_RESET. stop
 * (reset, lock held): takes them back; vhost no longer touches guest memory afterwards. kick:
 * passes a kick that arrived as an MMIO exit on to vhost. destroy: stop, close our fds. */
int vnet_vhost_init(struct virtio_net *n, const struct guest_mem *mem, struct error *err);
void vnet_vhost_start(struct virtio_net *n);
void vnet_vhost_stop(struct virtio_net *n);
void vnet_vhost_kick(struct virtio_net *n, uint16_t qi);
void vnet_vhost_destroy(struct virtio_net *n);

/* Receive offloads in force (feature bits): CTRL_GUEST_OFFLOADS' last SET, else the negotiated. */
uint64_t vnet_guest_offloads(const struct virtio_net *n);

/* Receive filter (virtio_net_filter.c). Reset: promiscuous, no table entries. */
void vnet_filter_reset(struct vnet_filter *f);
/* Does the filter let a frame with this destination MAC reach the driver? Always true unless
 * CTRL_RX was negotiated. */
bool vnet_filter_accepts(const struct virtio_net *n, const uint8_t *dst);
/* Runs a CTRL_RX or CTRL_MAC command (class, cmd) on `data` (len bytes, a checked copy).
 * Returns VIRTIO_NET_OK or VIRTIO_NET_ERR (logged: not negotiated, malformed). */
uint8_t vnet_filter_command(struct virtio_net *n, uint8_t cls, uint8_t cmd, const uint8_t *data,
			    uint32_t len);

#endif
