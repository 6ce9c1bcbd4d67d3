/* 8250/16550A UART: guest register accesses -> host output fd and IRQ line. */
#include "devices/uart8250.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

enum {
	REG_RBR_THR = 0, REG_IER = 1, REG_IIR_FCR = 2, REG_LCR = 3,
	REG_MCR = 4, REG_LSR = 5, REG_MSR = 6, REG_SCR = 7,
};
#define IER_RDI   0x01
#define IER_THRI  0x02
#define IIR_NONE  0x01
#define IIR_THRI  0x02
#define IIR_RDI   0x04
#define IIR_FIFO  0xc0
#define FCR_FIFO_ENABLE 0x01
#define FCR_CLEAR_RX    0x02
#define LCR_DLAB  0x80
#define MCR_OUT2  0x08
#define MCR_LOOP  0x10
#define LSR_DR    0x01
#define LSR_THRE  0x20
#define LSR_TEMT  0x40

int uart8250_init(struct uart8250 *u, int out_fd, struct irq_line irq)
{
	memset(u, 0, sizeof(*u));
	if (pthread_mutex_init(&u->lock, NULL))
		return -ENOMEM;
	u->out_fd = out_fd;
	u->irq = irq;
	u->dll = 12; /* 9600 baud, as firmware leaves it */
	return 0;
}

void uart8250_destroy(struct uart8250 *u) { pthread_mutex_destroy(&u->lock); }

/* Highest-priority pending cause, as the IIR reports it (lock held). */
static uint8_t pending_cause(const struct uart8250 *u)
{
	if ((u->ier & IER_RDI) && u->rx_count)
		return IIR_RDI;
	if ((u->ier & IER_THRI) && u->thre_pending)
		return IIR_THRI;
	return IIR_NONE;
}

/* Drives the IRQ line from the pending causes. On a PC the line is gated by
 * MCR.OUT2, and loopback mode disconnects it. Lock held. */
static void update_irq(struct uart8250 *u)
{
	bool level = pending_cause(u) != IIR_NONE && (u->mcr & MCR_OUT2) && !(u->mcr & MCR_LOOP);
	if (level != u->irq_level) {
		u->irq_level = level;
		irq_line_set(&u->irq, level);
	}
}

static void rx_push(struct uart8250 *u, uint8_t byte)
{
	if (u->rx_count == UART_FIFO_SIZE) {
		u->rx_dropped++;
		return;
	}
	u->rx[(u->rx_head + u->rx_count) % UART_FIFO_SIZE] = byte;
	u->rx_count++;
}

static uint8_t rx_pop(struct uart8250 *u)
{
	if (!u->rx_count)
		return 0;
	uint8_t b = u->rx[u->rx_head];
	u->rx_head = (u->rx_head + 1) % UART_FIFO_SIZE;
	u->rx_count--;
	return b;
}

static void transmit(struct uart8250 *u, uint8_t byte)
{
	if (u->mcr & MCR_LOOP) {
		rx_push(u, byte);
	} else if (u->out_fd >= 0) {
		ssize_t n;
		do {
			n = write(u->out_fd, &byte, 1);
		} while (n < 0 && errno == EINTR);
		if (n != 1 && u->tx_errors++ == 0)
			log_warn("uart: cannot write console output: %s", strerror(errno));
	}
	u->tx_bytes++;
	u->thre_pending = true; /* the byte left at once: THR is empty again */
}

/* Modem status: in loopback, the outputs DTR/RTS/OUT1/OUT2 come back as
 * DSR/CTS/RI/DCD; otherwise report a connected terminal (DCD, DSR, CTS). */
static uint8_t modem_status(const struct uart8250 *u)
{
	if (u->mcr & MCR_LOOP) {
		uint8_t m = u->mcr;
		return (uint8_t)(((m & 0x02) << 3) | ((m & 0x01) << 5) | ((m & 0x04) << 4) |
				 ((m & 0x08) << 4));
	}
	return 0xb0;
}

static uint8_t reg_read(struct uart8250 *u, uint32_t reg)
{
	bool dlab = u->lcr & LCR_DLAB;
	uint8_t cause;
	switch (reg) {
	case REG_RBR_THR:
		return dlab ? u->dll : rx_pop(u);
	case REG_IER:
		return dlab ? u->dlm : u->ier;
	case REG_IIR_FCR:
		cause = pending_cause(u);
		if (cause == IIR_THRI)
			u->thre_pending = false; /* reading IIR acknowledges THRE */
		return cause | ((u->fcr & FCR_FIFO_ENABLE) ? IIR_FIFO : 0);
	case REG_LCR:
		return u->lcr;
	case REG_MCR:
		return u->mcr;
	case REG_LSR:
		return LSR_THRE | LSR_TEMT | (u->rx_count ? LSR_DR : 0);
	case REG_MSR:
		return modem_status(u);
	default:
		return u->scr;
	}
}

static void reg_write(struct uart8250 *u, uint32_t reg, uint8_t v)
{
	bool dlab = u->lcr & LCR_DLAB;
	switch (reg) {
	case REG_RBR_THR:
		if (dlab)
			u->dll = v;
		else
			transmit(u, v);
		break;
	case REG_IER:
		if (dlab) {
			u->dlm = v;
		} else {
			/* Enabling THRI with THR empty raises it at once (16550 behaviour). */
			if (!(u->ier & IER_THRI) && (v & IER_THRI))
				u->thre_pending = true;
			u->ier = v & 0x0f;
			u->rx_ready |= (v & IER_RDI) != 0;
		}
		break;
	case REG_IIR_FCR:
		u->fcr = v & 0xc9;
		if (v & FCR_CLEAR_RX) {
			u->rx_count = 0;
			u->rx_ready = true;
		}
		break;
	case REG_LCR:
		u->lcr = v;
		break;
	case REG_MCR:
		u->mcr = v & 0x1f;
		break;
	case REG_SCR:
		u->scr = v;
		break;
	default: /* LSR and MSR are read-only */
		break;
	}
}

/* Accesses wider than a byte touch consecutive registers, as on the ISA bus. */
static void uart_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	struct uart8250 *u = opaque;
	uint8_t *out = data;
	pthread_mutex_lock(&u->lock);
	uint32_t before = u->rx_count;
	for (uint32_t i = 0; i < len; i++)
		out[i] = reg_read(u, (uint32_t)(offset + i) % UART_NREGS);
	update_irq(u);
	bool drained = before && !u->rx_count;
	pthread_mutex_unlock(&u->lock);
	if (drained && u->rx_drained)
		u->rx_drained(u->rx_opaque);
}

static void uart_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct uart8250 *u = opaque;
	const uint8_t *in = data;
	pthread_mutex_lock(&u->lock);
	uint32_t before = u->rx_count;
	bool was_ready = u->rx_ready;
	for (uint32_t i = 0; i < len; i++)
		reg_write(u, (uint32_t)(offset + i) % UART_NREGS, in[i]);
	update_irq(u);
	/* FCR cleared the receive FIFO, or the guest just set the UART up: input may come */
	bool drained = (before && !u->rx_count) || (!was_ready && u->rx_ready);
	pthread_mutex_unlock(&u->lock);
	if (drained && u->rx_drained)
		u->rx_drained(u->rx_opaque);
}

void uart8250_receive(struct uart8250 *u, const uint8_t *data, uint32_t len)
{
	pthread_mutex_lock(&u->lock);
	for (uint32_t i = 0; i < len; i++)
		rx_push(u, data[i]);
	update_irq(u);
	pthread_mutex_unlock(&u->lock);
}

uint32_t uart8250_receive_some(struct uart8250 *u, const uint8_t *data, uint32_t len)
{
	pthread_mutex_lock(&u->lock);
	uint32_t n = 0;
	while (u->rx_ready && n < len && u->rx_count < UART_FIFO_SIZE)
		rx_push(u, data[n++]);
	update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return n;
}

const struct bus_ops uart8250_ops = {
	.read = uart_read,
	.write = uart_write,
};

json_t *uart8250_save(struct uart8250 *u)
{
	pthread_mutex_lock(&u->lock);
	json_t *o = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:b,s:b}", "ier", u->ier, "lcr", u->lcr,
			      "mcr", u->mcr, "scr", u->scr, "dll", u->dll, "dlm", u->dlm, "fcr",
			      u->fcr, "thre_pending", u->thre_pending, "rx_ready", u->rx_ready);
	pthread_mutex_unlock(&u->lock);
	return o;
}

int uart8250_load(struct uart8250 *u, const json_t *o)
{
	int r[7], thre, ready = 1; /* a snapshot without rx_ready: its guest had long set it up */
	if (json_unpack((json_t *)o, "{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:b,s?b}", "ier", &r[0], "lcr",
			&r[1], "mcr", &r[2], "scr", &r[3], "dll", &r[4], "dlm", &r[5], "fcr", &r[6],
			"thre_pending", &thre, "rx_ready", &ready))
		return -EINVAL;
	for (int i = 0; i < 7; i++)
		if (r[i] < 0 || r[i] > 0xff)
			return -EINVAL;
	pthread_mutex_lock(&u->lock);
	u->ier = (uint8_t)(r[0] & 0x0f);
	u->lcr = (uint8_t)r[1];
	u->mcr = (uint8_t)r[2];
	u->scr = (uint8_t)r[3];
	u->dll = (uint8_t)r[4];
	u->dlm = (uint8_t)r[5];
	u->fcr = (uint8_t)r[6];
	u->thre_pending = thre;
	u->rx_ready = ready;
	update_irq(u);
	pthread_mutex_unlock(&u->lock);
	return 0;
}
