/* guest/src/virtio_net.h - virtio-net (virtio type 1) driver: one receive and one transmit queue, 12-byte headers, frames in and out. */
#ifndef PROBE_VIRTIO_NET_H
#define PROBE_VIRTIO_NET_H

#include <stdbool.h>
#include <stdint.h>

#include "exit.h"
#include "pci.h"
#include "virtio_pci.h"

#define VIRTIO_TYPE_NET     1

#define VNET_HDR_LEN        12      /* struct virtio_net_hdr with num_buffers (VERSION_1) */
#define VNET_BUF_SIZE       2048    /* per RX/TX buffer: header + up to 2036 frame bytes */
#define VNET_MAX_FRAME      1514    /* Ethernet header + 1500 (no FCS) */
#define VNET_RX_BUFS        128     /* posted RX buffers (at most the queue size) */
#define VNET_TX_BUFS        64      /* TX slots (at most the queue size) */

struct vnet_info {
    uint8_t mac[6];
    uint16_t mtu;           /* from config with VIRTIO_NET_F_MTU, else 1500 */
    bool mac_from_dev;      /* VIRTIO_NET_F_MAC negotiated */
    bool mrg_rxbuf;         /* VIRTIO_NET_F_MRG_RXBUF negotiated */
    int link;               /* 1 up, 0 down, -1 unknown (no VIRTIO_NET_F_STATUS) */
};

/* Called for every received frame (Ethernet header first, no virtio
 * header, len bytes; valid until it returns). */
typedef void (*vnet_rx_fn)(const uint8_t *frame, uint32_t len, void *ctx);

/* True if d is a virtio-net PCI function (modern 0x1041 or transitional
 * 0x1000, i.e. subsystem ID 1). */
bool virtio_net_match(const struct pci_dev *d);

/*
 * Start d with queues receiveq0 and transmitq0 in irq mode `want`,
 * negotiating VERSION_1 and, if offered, MAC, MTU, STATUS and MRG_RXBUF
 * (nothing else); buffers (RX and TX, VNET_BUF_SIZE each) come from
 * mem_alloc. Posts min(queue size, VNET_RX_BUFS) RX buffers and kicks.
 * Fills *info and prints "probe: virtio ..." (virtio_pci_setup) and
 * "probe: net <bdf> mac=.. mtu=.. link=up|down|unknown mrg_rxbuf=0|1".
 * Returns 0, PROBE_EXIT_IRQ_MODE or PROBE_EXIT_VIRTIO.
 */
int vnet_start(struct pci_dev *d, enum virtio_irq_mode want, struct vnet_info *info);

/* The started device (for mode/counters). */
struct virtio_pci *vnet_dev(void);

/* True if either queue's used ring has advanced (read with IF=0). */
bool vnet_has_work(void);

/*
 * Reap completed transmissions, then the received frames (at most as many
 * as there are RX buffers): rx(frame, len, ctx) per frame, buffers
 * re-posted, the RX queue kicked if any was.
 * With MRG_RXBUF, a frame spread over num_buffers buffers is gathered
 * first. A malformed completion (used length < 12 or > buffer, bad id,
 * num_buffers 0 or frame > 16 KiB) increments *bad_rx and is dropped.
 * Returns the number of frames delivered, or -1 on a device error (used id
 * out of range: "probe: net ... bad id").
 */
int vnet_poll(vnet_rx_fn rx, void *ctx, uint32_t *bad_rx);

/*
 * Frame area (VNET_BUF_SIZE - VNET_HDR_LEN bytes) of a free TX slot (with
 * two free descriptors), or NULL if all are in flight (after reaping
 * completions). Asked again before vnet_tx_send, it returns the same area:
 * do not poll between the two calls.
 */
uint8_t *vnet_tx_buf(void);

/* Queue the frame written into the area last returned by vnet_tx_buf
 * (len bytes, <= VNET_BUF_SIZE - VNET_HDR_LEN), followed by tail_len bytes
 * at `tail` (a second descriptor, e.g. a payload shared by many frames, left
 * unchanged until the transmission completed; tail_len 0: none). kick:
 * notify the device now (else call vnet_tx_kick after a batch). */
void vnet_tx_send(uint32_t len, const void *tail, uint32_t tail_len, bool kick);
void vnet_tx_kick(void);

/* Transmissions not yet completed by the device. */
unsigned int vnet_tx_in_flight(void);

/* Frames/bytes counted by vnet_poll and vnet_tx_send. */
struct vnet_counters {
    uint64_t rx_frames, rx_bytes, tx_frames, tx_bytes;
};
const struct vnet_counters *vnet_counters(void);

#endif
