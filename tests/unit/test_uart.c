/* Unit tests for the 8250/16550A UART model, driven through its bus ops. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devices/uart8250.h"

/* Register offsets and bits, as the guest sees them. */
enum { RBR = 0, THR = 0, DLL = 0, IER = 1, DLM = 1, IIR = 2, FCR = 2,
       LCR = 3, MCR = 4, LSR = 5, MSR = 6, SCR = 7 };
#define IER_RDI   0x01
#define IER_THRI  0x02
#define IIR_NONE  0x01
#define IIR_THRI  0x02
#define IIR_RDI   0x04
#define LCR_DLAB  0x80
#define MCR_OUT2  0x08
#define MCR_LOOP  0x10
#define LSR_DR    0x01
#define LSR_THRE  0x20
#define LSR_TEMT  0x40

/* A fake interrupt controller: records every level change. */
struct fake_irq {
	unsigned calls;
	int levels[64];
	uint32_t last_gsi;
};

static void fake_set_level(void *opaque, uint32_t gsi, int level)
{
	struct fake_irq *f = opaque;
	if (f->calls < 64)
		f->levels[f->calls] = level;
	f->calls++;
	f->last_gsi = gsi;
}

struct fixture {
	struct uart8250 u;
	struct fake_irq irq;
	int pipe_rd, pipe_wr;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int fds[2];
	if (!f || pipe2(fds, O_NONBLOCK | O_CLOEXEC))
		return -1;
	f->pipe_rd = fds[0];
	f->pipe_wr = fds[1];
	struct irq_line line = { .set_level = fake_set_level, .opaque = &f->irq,
				 .gsi = UART_COM1_IRQ };
	if (uart8250_init(&f->u, f->pipe_wr, line))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	uart8250_destroy(&f->u);
	close(f->pipe_rd);
	close(f->pipe_wr);
	free(f);
	return 0;
}

static uint8_t rd(struct fixture *f, uint64_t reg)
{
	uint8_t v = 0xa5;
	uart8250_ops.read(&f->u, reg, &v, 1);
	return v;
}

static void wr(struct fixture *f, uint64_t reg, uint8_t v)
{
	uart8250_ops.write(&f->u, reg, &v, 1);
}

/* Reads whatever is in the pipe (non-blocking); returns the byte count. */
static ssize_t drain(struct fixture *f, uint8_t *buf, size_t cap)
{
	ssize_t n = read(f->pipe_rd, buf, cap);
	if (n < 0 && errno == EAGAIN)
		return 0;
	return n;
}

static int irq_level(const struct fixture *f)
{
	return f->irq.calls ? f->irq.levels[f->irq.calls - 1] : 0;
}

static void test_thr_write_appears_on_pipe(void **state)
{
	struct fixture *f = *state;
	wr(f, THR, 'h');
	wr(f, THR, 'i');
	wr(f, THR, '\n');
	uint8_t buf[16];
	assert_int_equal(drain(f, buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "hi\n", 3);
	assert_true(f->u.tx_bytes == 3);
}

static void test_dlab_switches_to_divisor_latch(void **state)
{
	struct fixture *f = *state;
	wr(f, IER, IER_RDI); /* IER value that must survive the DLAB window */
	wr(f, LCR, LCR_DLAB | 0x03);
	wr(f, DLL, 0x01);
	wr(f, DLM, 0x02);
	assert_int_equal(rd(f, DLL), 0x01);
	assert_int_equal(rd(f, DLM), 0x02);
	assert_int_equal(rd(f, LCR), LCR_DLAB | 0x03);

	uint8_t buf[4];
	assert_int_equal(drain(f, buf, sizeof(buf)), 0); /* DLL write not transmitted */
	assert_true(f->u.tx_bytes == 0);

	wr(f, LCR, 0x03);
	assert_int_equal(rd(f, IER), IER_RDI); /* IER untouched by the DLM write */
	wr(f, THR, 'x');
	assert_int_equal(drain(f, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0], 'x');

	/* The divisor is still latched. */
	wr(f, LCR, LCR_DLAB);
	assert_int_equal(rd(f, DLL), 0x01);
	assert_int_equal(rd(f, DLM), 0x02);
}

static void test_lsr_reports_thre_temt_and_dr(void **state)
{
	struct fixture *f = *state;
	uint8_t lsr = rd(f, LSR);
	assert_int_equal(lsr & (LSR_THRE | LSR_TEMT), LSR_THRE | LSR_TEMT);
	assert_int_equal(lsr & LSR_DR, 0);

	uart8250_receive(&f->u, (const uint8_t *)"a", 1);
	assert_int_equal(rd(f, LSR) & LSR_DR, LSR_DR);
	assert_int_equal(rd(f, RBR), 'a');
	assert_int_equal(rd(f, LSR) & LSR_DR, 0);
}

static void test_rbr_returns_received_bytes_in_order(void **state)
{
	struct fixture *f = *state;
	uart8250_receive(&f->u, (const uint8_t *)"abc", 3);
	uart8250_receive(&f->u, (const uint8_t *)"de", 2);
	const char *want = "abcde";
	for (int i = 0; i < 5; i++)
		assert_int_equal(rd(f, RBR), want[i]);
	assert_int_equal(rd(f, LSR) & LSR_DR, 0);
}

static void test_rx_fifo_wraps_around_in_order(void **state)
{
	struct fixture *f = *state;
	uint8_t in[UART_FIFO_SIZE];
	/* Advance the head, then fill the FIFO so the tail wraps. */
	uart8250_receive(&f->u, (const uint8_t *)"0123456789", 10);
	for (int i = 0; i < 10; i++)
		assert_int_equal(rd(f, RBR), '0' + i);
	for (int i = 0; i < UART_FIFO_SIZE; i++)
		in[i] = (uint8_t)(0x40 + i);
	uart8250_receive(&f->u, in, UART_FIFO_SIZE);
	for (int i = 0; i < UART_FIFO_SIZE; i++)
		assert_int_equal(rd(f, RBR), 0x40 + i);
	assert_true(f->u.rx_dropped == 0);
}

static void test_fifo_overflow_drops_and_counts(void **state)
{
	struct fixture *f = *state;
	uint8_t in[UART_FIFO_SIZE + 4];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)('A' + i);
	uart8250_receive(&f->u, in, sizeof(in));
	assert_true(f->u.rx_dropped == 4);
	/* The first 16 bytes are kept, the last 4 lost. */
	for (int i = 0; i < UART_FIFO_SIZE; i++)
		assert_int_equal(rd(f, RBR), 'A' + i);
	assert_int_equal(rd(f, LSR) & LSR_DR, 0);

	uart8250_receive(&f->u, (const uint8_t *)"z", 1);
	assert_true(f->u.rx_dropped == 4);
	assert_int_equal(rd(f, RBR), 'z');
}

static void test_iir_rdi_has_priority_over_thri(void **state)
{
	struct fixture *f = *state;
	wr(f, IER, IER_RDI | IER_THRI);
	uart8250_receive(&f->u, (const uint8_t *)"q", 1);
	assert_int_equal(rd(f, IIR) & 0x0f, IIR_RDI);
	/* Reading IIR while RDI is shown does not acknowledge the THRI. */
	assert_int_equal(rd(f, IIR) & 0x0f, IIR_RDI);
	assert_int_equal(rd(f, RBR), 'q');
	assert_int_equal(rd(f, IIR) & 0x0f, IIR_THRI);
	assert_int_equal(rd(f, IIR) & 0x0f, IIR_NONE);
}

static void test_iir_read_acknowledges_thri(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(rd(f, IIR) & 0x0f, IIR_NONE);
	wr(f, IER, IER_THRI);
	assert_int_equal(rd(f, IIR) & 0x0f, IIR_THRI);
	assert_int_equal(rd(f, IIR) & 0x0f, IIR_NONE);
	/* A transmitted byte empties THR again and re-arms THRI. */
	wr(f, THR, '.');
	assert_int_equal(rd(f, IIR) & 0x0f, IIR_THRI);
	assert_int_equal(rd(f, IIR) & 0x0f, IIR_NONE);
}

static void test_no_irq_without_out2(void **state)
{
	struct fixture *f = *state;
	wr(f, IER, IER_THRI | IER_RDI);
	uart8250_receive(&f->u, (const uint8_t *)"x", 1);
	wr(f, THR, 'y');
	assert_int_equal(f->irq.calls, 0);
	/* The cause is pending all along: OUT2 connects the line. */
	wr(f, MCR, MCR_OUT2);
	assert_int_equal(f->irq.calls, 1);
	assert_int_equal(f->irq.levels[0], 1);
	assert_int_equal(f->irq.last_gsi, UART_COM1_IRQ);
	wr(f, MCR, 0);
	assert_int_equal(f->irq.calls, 2);
	assert_int_equal(f->irq.levels[1], 0);
}

static void test_irq_raised_by_thri_and_lowered_by_iir_read(void **state)
{
	struct fixture *f = *state;
	wr(f, MCR, MCR_OUT2);
	assert_int_equal(f->irq.calls, 0);
	wr(f, IER, IER_THRI);
	assert_int_equal(f->irq.calls, 1);
	assert_int_equal(irq_level(f), 1);
	assert_int_equal(rd(f, IIR) & 0x0f, IIR_THRI);
	assert_int_equal(f->irq.calls, 2);
	assert_int_equal(irq_level(f), 0);
	/* Reading again changes nothing: no spurious edges. */
	rd(f, IIR);
	rd(f, LSR);
	assert_int_equal(f->irq.calls, 2);
}

static void test_irq_raised_by_rx_and_lowered_when_drained(void **state)
{
	struct fixture *f = *state;
	wr(f, MCR, MCR_OUT2);
	wr(f, IER, IER_RDI);
	assert_int_equal(f->irq.calls, 0);
	uart8250_receive(&f->u, (const uint8_t *)"ab", 2);
	assert_int_equal(irq_level(f), 1);
	rd(f, RBR);
	assert_int_equal(irq_level(f), 1);
	rd(f, RBR);
	assert_int_equal(irq_level(f), 0);
	assert_int_equal(f->irq.calls, 2);
}

static void test_loopback_msr_mirrors_mcr(void **state)
{
	struct fixture *f = *state;
	wr(f, MCR, 0x1a); /* LOOP | OUT2 | RTS */
	assert_int_equal(rd(f, MSR) & 0xf0, 0x90);
	wr(f, MCR, 0x15); /* LOOP | OUT1 | DTR */
	assert_int_equal(rd(f, MSR) & 0xf0, 0x60);
	wr(f, MCR, 0x1f);
	assert_int_equal(rd(f, MSR) & 0xf0, 0xf0);
	wr(f, MCR, MCR_LOOP);
	assert_int_equal(rd(f, MSR) & 0xf0, 0x00);
}

static void test_loopback_transmit_returns_in_rbr_not_pipe(void **state)
{
	struct fixture *f = *state;
	wr(f, MCR, MCR_LOOP);
	wr(f, THR, 'L');
	wr(f, THR, 'B');
	uint8_t buf[4];
	assert_int_equal(drain(f, buf, sizeof(buf)), 0);
	assert_int_equal(rd(f, LSR) & LSR_DR, LSR_DR);
	assert_int_equal(rd(f, RBR), 'L');
	assert_int_equal(rd(f, RBR), 'B');

	/* Leaving loopback sends to the wire again. */
	wr(f, MCR, 0);
	wr(f, THR, 'W');
	assert_int_equal(drain(f, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0], 'W');
	assert_int_equal(rd(f, LSR) & LSR_DR, 0);
}

static void test_wide_write_touches_consecutive_registers(void **state)
{
	struct fixture *f = *state;
	/* 2 bytes at LCR: LCR=0x03, MCR=0x0b. */
	uint8_t two[2] = { 0x03, 0x0b };
	uart8250_ops.write(&f->u, LCR, two, 2);
	assert_int_equal(rd(f, LCR), 0x03);
	assert_int_equal(rd(f, MCR), 0x0b);

	/* 4 bytes at offset 0: THR='Q', IER=0, FCR=0, LCR=0x83 (DLAB). */
	uint8_t four[4] = { 'Q', 0x00, 0x00, 0x83 };
	uart8250_ops.write(&f->u, THR, four, 4);
	uint8_t buf[4];
	assert_int_equal(drain(f, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0], 'Q');
	assert_int_equal(rd(f, LCR), 0x83);
}

static void test_wide_read_touches_consecutive_registers(void **state)
{
	struct fixture *f = *state;
	wr(f, SCR, 0x5c);
	wr(f, MCR, 0x03);
	uint8_t four[4];
	memset(four, 0, sizeof(four));
	uart8250_ops.read(&f->u, MCR, four, 4);
	assert_int_equal(four[0], 0x03);                        /* MCR */
	assert_int_equal(four[1] & (LSR_THRE | LSR_TEMT), LSR_THRE | LSR_TEMT); /* LSR */
	assert_int_equal(four[2], 0xb0);                        /* MSR: DCD|DSR|CTS */
	assert_int_equal(four[3], 0x5c);                        /* SCR */

	/* A 2-byte read at RBR pops one received byte and reads IER. */
	wr(f, IER, IER_RDI);
	uart8250_receive(&f->u, (const uint8_t *)"mn", 2);
	uint8_t two[2] = { 0, 0 };
	uart8250_ops.read(&f->u, RBR, two, 2);
	assert_int_equal(two[0], 'm');
	assert_int_equal(two[1], IER_RDI);
	assert_int_equal(rd(f, RBR), 'n');
}

static void test_scratch_register_holds_value(void **state)
{
	struct fixture *f = *state;
	wr(f, SCR, 0xa7);
	assert_int_equal(rd(f, SCR), 0xa7);
	wr(f, SCR, 0x00);
	assert_int_equal(rd(f, SCR), 0x00);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_thr_write_appears_on_pipe),
		T(test_dlab_switches_to_divisor_latch),
		T(test_lsr_reports_thre_temt_and_dr),
		T(test_rbr_returns_received_bytes_in_order),
		T(test_rx_fifo_wraps_around_in_order),
		T(test_fifo_overflow_drops_and_counts),
		T(test_iir_rdi_has_priority_over_thri),
		T(test_iir_read_acknowledges_thri),
		T(test_no_irq_without_out2),
		T(test_irq_raised_by_thri_and_lowered_by_iir_read),
		T(test_irq_raised_by_rx_and_lowered_when_drained),
		T(test_loopback_msr_mirrors_mcr),
		T(test_loopback_transmit_returns_in_rbr_not_pipe),
		T(test_wide_write_touches_consecutive_registers),
		T(test_wide_read_touches_consecutive_registers),
		T(test_scratch_register_holds_value),
#undef T
	};
	return cmocka_run_group_tests_name("uart8250", tests, NULL, NULL);
}
