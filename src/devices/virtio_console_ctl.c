/* virtio-console's multiport control queues (one port, id 0: the console): the handshake and its messages, and their snapshot. */
#include "devices/virtio_console_ctl.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "util/hex.h"
#include "util/log.h"
#include "virtio/budget.h"

/* ---- control queues (MULTIPORT, one port: id 0, the console) ---- */

/* Queues a device -> driver message: the 8-byte header, then `extra`. A
 * driver that makes the device answer faster than it reads loses the excess
 * (logged): the list is bounded. */
void vcon_ctl_queue(struct virtio_console *c, uint16_t event, uint16_t value,
		      const void *extra, uint32_t extra_len)
{
	if (c->ctl_n == VIRTIO_CONSOLE_CTRL_MAX) {
		log_ratelimited(&c->rl, LOG_WARN, "%s: control message %u dropped: the driver "
				"does not read its control receiveq", c->name, event);
		return;
	}
	uint8_t *m = c->ctl_msg[c->ctl_n].b;
	uint32_t id = htole32(0);
	event = htole16(event);
	value = htole16(value);
	memcpy(m, &id, 4);
	memcpy(m + 4, &event, 2);
	memcpy(m + 6, &value, 2);
	if (extra_len)
		memcpy(m + 8, extra, extra_len); /* extra_len <= 4: RESIZE */
	c->ctl_msg[c->ctl_n++].len = 8 + extra_len;
}

/* Control receiveq (lock held): one waiting message per buffer chain. A
 * device-readable buffer, or writable room smaller than the message, is a
 * driver error: NEEDS_RESET. */
void vcon_ctl_rx_serve(struct virtio_console *c)
{
	struct virtq *q = virtio_pci_queue(&c->pci, VIRTIO_CONSOLE_CTRL_RXQ);
	const char *bad = NULL;
	uint32_t sent = 0;
	while (q && sent < c->ctl_n) {
		if (!virtq_has_work(q)) {
			virtq_set_notify(q, true);
			if (!virtq_has_work(q))
				break;
		}
		if (virtq_pop(q, &c->chain) != 1)
			break;
		const uint8_t *m = c->ctl_msg[sent].b;
		uint32_t left = c->ctl_msg[sent].len, done = 0;
		if (c->chain.n_out) {
			bad = "device-readable buffer on the control receiveq";
			break;
		}
		for (uint32_t i = 0; i < c->chain.n_in && done < left; i++) {
			uint32_t n = c->chain.buf[i].len < left - done ? c->chain.buf[i].len
								       : left - done;
			memcpy(c->chain.buf[i].host, m + done, n);
			done += n;
		}
		if (done < left) {
			bad = "control receive buffer smaller than a control message";
			break;
		}
		virtq_push(q, c->chain.head, done);
		sent++;
	}
	c->ctl_n -= sent;
	memmove(c->ctl_msg, c->ctl_msg + sent, c->ctl_n * sizeof(c->ctl_msg[0]));
	if (q) {
		virtio_pci_queue_done(&c->pci, VIRTIO_CONSOLE_CTRL_RXQ);
		if (bad)
			virtio_pci_set_needs_reset(&c->pci, bad);
	}
}

/* One driver -> device message (lock held). Returns NULL or what is wrong
 * with it (the caller asks for a reset). */
static const char *ctl_handle(struct virtio_console *c, const uint8_t *m, bool *opened)
{
	uint32_t id;
	uint16_t event, value;
	memcpy(&id, m, 4);
	memcpy(&event, m + 4, 2);
	memcpy(&value, m + 6, 2);
	id = le32toh(id);
	event = le16toh(event);
	value = le16toh(value);
	if (value > 1)
		return "control message value other than 0 or 1";
	if (event == VIRTIO_CONSOLE_DEVICE_READY) {
		if (value && c->port_added)
			log_ratelimited(&c->rl, LOG_WARN, "%s: DEVICE_READY again; port 0 exists "
					"already (5.3.6.2.1: never added twice)", c->name);
		else if (value)
			vcon_ctl_queue(c, VIRTIO_CONSOLE_PORT_ADD, 0, NULL, 0);
		else
			log_ratelimited(&c->rl, LOG_WARN, "%s: the driver failed to set the "
					"device up", c->name);
		c->port_added |= value != 0;
		return NULL;
	}
	if (id != 0)
		return "control message for a port that does not exist";
	switch (event) {
	case VIRTIO_CONSOLE_PORT_READY:
		if (!value) {
			log_ratelimited(&c->rl, LOG_WARN, "%s: the driver failed to add port 0",
					c->name);
			return NULL;
		}
		c->port_ready = true;
		vcon_ctl_queue(c, VIRTIO_CONSOLE_CONSOLE_PORT, 1, NULL, 0);
		vcon_ctl_queue(c, VIRTIO_CONSOLE_PORT_OPEN, 1, NULL, 0); /* the host side is open */
		if (c->size_known) {
			uint16_t sz[2] = { htole16(c->cols), htole16(c->rows) };
			vcon_ctl_queue(c, VIRTIO_CONSOLE_RESIZE, 0, sz, sizeof(sz));
		}
		return NULL;
	case VIRTIO_CONSOLE_PORT_OPEN:
		c->port_open = value;
		*opened = true; /* the caller serves the receiveq or stops watching the input */
		return NULL;
	default:
		return "control message with an event a driver may not send";
	}
}

bool vcon_ctl_tx_serve(struct virtio_console *c)
{
	struct virtq *q = virtio_pci_queue(&c->pci, VIRTIO_CONSOLE_CTRL_TXQ);
	bool opened = false;
	if (!q)
		return false;
	const char *bad = NULL;
	struct vbudget budget = vbudget_start(VBUDGET_BYTES);
	while (!bad && virtio_pci_pop(&c->pci, VIRTIO_CONSOLE_CTRL_TXQ, &budget, &c->chain) == 1) {
		uint8_t m[8];
		uint32_t have = 0;
		for (uint32_t i = 0; i < c->chain.n_out && have < sizeof(m); i++) {
			uint32_t n = c->chain.buf[i].len < sizeof(m) - have ? c->chain.buf[i].len
									     : sizeof(m) - have;
			memcpy(m + have, c->chain.buf[i].host, n);
			have += n;
		}
		uint16_t head = c->chain.head;
		uint32_t bytes = c->chain.out_bytes;
		if (c->chain.n_in)
			bad = "device-writable buffer on the control transmitq";
		else if (have < sizeof(m))
			bad = "control message shorter than 8 bytes";
		else
			bad = ctl_handle(c, m, &opened);
		virtq_push(q, head, 0);
		vbudget_charge(&budget, bytes);
	}
	virtio_pci_queue_done(&c->pci, VIRTIO_CONSOLE_CTRL_TXQ);
	if (bad)
		virtio_pci_set_needs_reset(&c->pci, bad);
	else
		vcon_ctl_rx_serve(c); /* the answers */
	return opened;
}

/* Snapshot: the port handshake (MULTIPORT) and the control messages not yet delivered. */
json_t *vcon_ctl_save(void *opaque, struct error *err)
{
	(void)err;
	struct virtio_console *c = opaque;
	json_t *msgs = json_array();
	for (uint32_t i = 0; i < c->ctl_n; i++) {
		char hex[2 * sizeof(c->ctl_msg[i].b) + 1];
		hex_encode(c->ctl_msg[i].b, c->ctl_msg[i].len, hex);
		json_array_append_new(msgs, json_string(hex));
	}
	return json_pack("{s:b,s:b,s:b,s:o}", "port_open", c->port_open, "port_ready",
			 c->port_ready, "port_added", c->port_added, "control_messages", msgs);
}

int vcon_ctl_load(void *opaque, const json_t *o, struct error *err)
{
	struct virtio_console *c = opaque;
	int open, ready, added;
	json_t *msgs;
	if (json_unpack((json_t *)o, "{s:b,s:b,s:b,s:o}", "port_open", &open, "port_ready", &ready,
			"port_added", &added, "control_messages", &msgs) || !json_is_array(msgs) ||
	    json_array_size(msgs) > VIRTIO_CONSOLE_CTRL_MAX)
		return error_set(err, -EINVAL, "%s: the saved port state is invalid", c->name);
	c->ctl_n = 0;
	for (size_t i = 0; i < json_array_size(msgs); i++) {
		const json_t *m = json_array_get(msgs, i);
		size_t len = json_string_length(m) / 2;
		if (!json_is_string(m) || len > sizeof(c->ctl_msg[i].b) ||
		    hex_decode(json_string_value(m), json_string_length(m), c->ctl_msg[i].b, len))
			return error_set(err, -EINVAL, "%s: saved control message %zu is invalid",
					 c->name, i);
		c->ctl_msg[i].len = (uint32_t)len;
		c->ctl_n++;
	}
	c->port_open = open;
	c->port_ready = ready;
	c->port_added = added;
	return 0;
}
