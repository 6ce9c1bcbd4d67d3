/* Serial input: a host fd (the terminal, or a file) -> COM1's receive FIFO, with Ctrl-a x to quit. */
#ifndef MSIVM_DEVICES_SERIAL_INPUT_H
#define MSIVM_DEVICES_SERIAL_INPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "devices/uart8250.h"
#include "util/error.h"
#include "core/evloop.h"

#define SERIAL_ESCAPE 0x01  /* Ctrl-a */

/* Bytes are read from in_fd (a terminal, a pipe, a socket, or a regular file or /dev/null:
 * read to the end, then EOF) only while the UART's FIFO has room (none is dropped): a read that does not fit waits in `pending` and the input is not
 * watched until the guest drains the FIFO (uart8250 rx_drained). With
 * `escape`, Ctrl-a x asks to quit (`quit` runs on the I/O thread), Ctrl-a
 * Ctrl-a sends one Ctrl-a, and Ctrl-a followed by anything else sends both. */
struct serial_input {
	struct uart8250 *uart;
	int in_fd;
	int wake_fd;                 /* eventfd: the guest drained the FIFO */
	struct evloop *loop;
	struct evloop_handler in_handler, wake_handler;
	bool in_watched, eof, escape, after_escape;
	bool always_ready;           /* in_fd is no pollable fd (a regular file, /dev/null): it
				      * is read on each I/O thread turn (wake_fd) while watched */
	void (*quit)(void *opaque);
	void *opaque;
	uint8_t pending[64];
	uint32_t pending_off, pending_len;
};

/* Starts feeding `uart` from `in_fd` (not closed: the caller's). Returns 0
 * or -errno with a message; serial_input_destroy is safe after a failure. */
int serial_input_init(struct serial_input *s, struct uart8250 *uart, int in_fd, bool escape,
		      struct evloop *loop, void (*quit)(void *opaque), void *opaque,
		      struct error *err);
void serial_input_destroy(struct serial_input *s);

#endif
