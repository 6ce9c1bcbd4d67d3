/* 8250/16550A UART model: COM1 register file, output to a host fd, level IRQ. */
#ifndef MSIVM_DEVICES_UART8250_H
#define MSIVM_DEVICES_UART8250_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus/bus.h"
#include "irq/irq_line.h"

#define UART_COM1_BASE 0x3f8
#define UART_COM1_IRQ  4
#define UART_NREGS     8
#define UART_FIFO_SIZE 16

struct uart8250 {
	pthread_mutex_t lock;
	int out_fd;              /* transmitted bytes go here; -1 drops them */
	struct irq_line irq;
	uint8_t ier, lcr, mcr, scr, dll, dlm, fcr;
	bool thre_pending;       /* THR-empty interrupt not yet acknowledged */
	bool irq_level;          /* what we last told the interrupt controller */
	/* The guest set the UART up: it cleared its receive FIFO or enabled the receive interrupt.
	 * Host input waits until then (receive_some takes nothing), so that the set-up does not
	 * clear away what a pipe or a file gave before the guest was reading. */
	bool rx_ready;
	uint8_t rx[UART_FIFO_SIZE];
	uint32_t rx_head, rx_count;
	uint64_t tx_bytes, rx_dropped, tx_errors;
	/* Called (no lock held, on the reading vCPU's thread) when the guest
	 * emptied the receive FIFO, so a host input source may send more. */
	void (*rx_drained)(void *opaque);
	void *rx_opaque;
};

/* Resets the UART to power-on state, transmitting to `out_fd`. The fd stays
 * the caller's. Returns 0 or -errno. */
int uart8250_init(struct uart8250 *u, int out_fd, struct irq_line irq);
void uart8250_destroy(struct uart8250 *u);

/* Queues bytes as if they arrived on the wire; bytes beyond the 16-byte FIFO
 * are dropped and counted. Raises the receive interrupt when enabled. */
void uart8250_receive(struct uart8250 *u, const uint8_t *data, uint32_t len);

/* Queues at most what the FIFO has room for, nothing before the guest set the UART up
 * (rx_ready); returns how many bytes it took (the caller keeps the rest until rx_drained,
 * which also runs when the UART becomes ready). */
uint32_t uart8250_receive_some(struct uart8250 *u, const uint8_t *data, uint32_t len);

/* Snapshot: the registers the guest programmed (IER, LCR, MCR, SCR, divisor, FCR) and a pending
 * THR-empty interrupt, as JSON; received bytes in the FIFO are not kept. */
json_t *uart8250_save(struct uart8250 *u);

/* Restore (before the guest runs): puts them back and raises the line if a cause is pending.
 * Returns 0 or -EINVAL if a field is missing or out of range. */
int uart8250_load(struct uart8250 *u, const json_t *o);

/* Register handlers for an 8-port range; register with bus_register. */
extern const struct bus_ops uart8250_ops;

#endif
