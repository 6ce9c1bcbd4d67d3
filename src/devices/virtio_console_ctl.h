/* virtio-console inside: the multiport control queues virtio_console.c hands control kicks to. */
#ifndef MSIVM_DEVICES_VIRTIO_CONSOLE_CTL_H
#define MSIVM_DEVICES_VIRTIO_CONSOLE_CTL_H

#include <jansson.h>
#include <stdbool.h>

#include "devices/virtio_console.h"

/* Queues a device -> driver control message for port 0: `event`, `value`, then `extra_len`
 * (<= 4) bytes of `extra`. Bounded (VIRTIO_CONSOLE_CTRL_MAX): past it the message is dropped
 * and logged. Lock held. */
void vcon_ctl_queue(struct virtio_console *c, uint16_t event, uint16_t value,
		    const void *extra, uint32_t extra_len);

/* Control receiveq (lock held): delivers the waiting messages, one per buffer chain; a
 * device-readable buffer or one smaller than its message sets NEEDS_RESET. */
void vcon_ctl_rx_serve(struct virtio_console *c);

/* Control transmitq (lock held): handles the driver's messages (each chain's readable bytes,
 * at least 8), then delivers the answers; a malformed one sets NEEDS_RESET. Returns whether a
 * PORT_OPEN changed c->port_open's meaning: the caller then serves the receiveq (open) or stops
 * watching the input (closed). */
bool vcon_ctl_tx_serve(struct virtio_console *c);

/* Snapshot hooks (virtio_dev_ops save/load, opaque = the console): the port handshake and the
 * control messages not yet delivered. Load checks every value (-EINVAL with a message). */
json_t *vcon_ctl_save(void *opaque, struct error *err);
int vcon_ctl_load(void *opaque, const json_t *o, struct error *err);

#endif
