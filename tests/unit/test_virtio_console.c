/* Unit tests for virtio-console: a fake driver in fake RAM drives transmitq into a pipe, a pipe into receiveq via an event loop, and the control queues. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "devices/virtio_console.h"
#include "fake_driver.h"
#include "fake_vm.h"
#include "pci/msix.h"
#include "virtio/virtio_pci.h"
#include "virtio/virtio_pci_common.h"
#include "core/evloop.h"

#define INTX_GSI  17
#define QSIZE     16u
#define RXQ       VIRTIO_CONSOLE_RXQ
#define TXQ       VIRTIO_CONSOLE_TXQ
#define CRXQ      VIRTIO_CONSOLE_CTRL_RXQ
#define CTXQ      VIRTIO_CONSOLE_CTRL_TXQ
#define NQ        VIRTIO_CONSOLE_NQUEUES
#define DESC_GPA(q)  (0x1000u + 0x4000u * (q))
#define AVAIL_GPA(q) (DESC_GPA(q) + 0x1000u)
#define USED_GPA(q)  (DESC_GPA(q) + 0x2000u)
#define DATA_GPA     0x20000u
#define MSI_ADDR     0xfee00000u

#define ACK         VIRTIO_STATUS_ACK
#define DRIVER      VIRTIO_STATUS_DRIVER
#define FEATURES_OK VIRTIO_STATUS_FEATURES_OK
#define DRIVER_OK   VIRTIO_STATUS_DRIVER_OK
#define NEEDS_RESET VIRTIO_STATUS_NEEDS_RESET
#define F_VERSION_1 (1ULL << VIRTIO_F_VERSION_1)
#define F_EVENT_IDX (1ULL << VIRTIO_F_EVENT_IDX)
#define F_SIZE      (1ULL << VIRTIO_CONSOLE_F_SIZE)
#define F_MULTIPORT (1ULL << VIRTIO_CONSOLE_F_MULTIPORT)

struct fx {
	struct fake_vm *vm;
	struct evloop loop;
	struct virtio_console *con;
	struct virtio_pci *t;
	int out[2], in[2];         /* out: device -> test; in: test -> device */
	uint16_t avail_idx[NQ];    /* the driver's next avail index per queue */
	uint16_t next_desc[NQ];
	uint64_t ctl_gpa[QSIZE];   /* control receive buffer per descriptor head */
	uint16_t ctl_seen;         /* control receiveq completions looked at */
	int pty;                   /* pty master when out is a terminal, else -1 */
	uint32_t next_data;        /* bump allocator for buffers in DATA_GPA */
};

static int fx_new(void **state, enum irq_mode mode, bool tty)
{
	struct fx *x = calloc(1, sizeof(*x));
	if (!x || !(x->vm = fake_vm_new()) || !(x->con = calloc(1, sizeof(*x->con))))
		return -1;
	x->pty = -1;
	if (evloop_init(&x->loop) || pipe2(x->out, O_CLOEXEC | O_NONBLOCK) ||
	    pipe2(x->in, O_CLOEXEC))
		return -1;
	if (tty) {
		/* Output to a terminal of 132x43: its slave side replaces the pipe. */
		x->pty = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (x->pty < 0 || grantpt(x->pty) || unlockpt(x->pty))
			return -1;
		struct winsize ws = { .ws_row = 43, .ws_col = 132 };
		if (ioctl(x->pty, TIOCSWINSZ, &ws))
			return -1;
		close(x->out[1]);
		x->out[1] = open(ptsname(x->pty), O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
		if (x->out[1] < 0)
			return -1;
	}
	struct virtio_console_io io = { .out_fd = x->out[1], .in_fd = x->in[0] };
	struct virtio_pci_config cfg = { .mode = mode, .vectors = -1 };
	struct error err;
	if (virtio_console_init(x->con, 0, &io, &cfg, &x->vm->mem, -1, &x->vm->routes, &x->loop,
				&x->vm->mmio, fake_window(), &err)) {
		print_error("virtio_console_init: %s\n", err.msg);
		return -1;
	}
	x->t = &x->con->pci;
	if (virtio_pci_attach_intx(x->t, INTX_GSI))
		return -1;
	*state = x;
	return 0;
}

static int setup_intx(void **state) { return fx_new(state, IRQ_MODE_INTX, false); }
static int setup_msix(void **state) { return fx_new(state, IRQ_MODE_MSIX, false); }
static int setup_tty(void **state) { return fx_new(state, IRQ_MODE_INTX, true); }

static int teardown(void **state)
{
	struct fx *x = *state;
	virtio_console_destroy(x->con);
	free(x->con);
	for (int i = 0; i < 2; i++) {
		if (x->out[i] >= 0)
			close(x->out[i]);
		if (x->in[i] >= 0)
			close(x->in[i]);
	}
	if (x->pty >= 0)
		close(x->pty);
	evloop_destroy(&x->loop);
	fake_vm_free(x->vm);
	free(x);
	return 0;
}

/* ---- the driver's register accesses through BAR0 ---- */

static uint64_t b0r(struct fx *x, uint64_t off, uint32_t len) { return vdrv_bar0_read(x->t, off, len); }
static void b0w(struct fx *x, uint64_t off, uint64_t v, uint32_t len) { vdrv_bar0_write(x->t, off, v, len); }

#define R8(reg)      ((uint8_t)b0r(x, VPCI_COMMON_OFF + (reg), 1))
#define R16(reg)     ((uint16_t)b0r(x, VPCI_COMMON_OFF + (reg), 2))
#define R32(reg)     ((uint32_t)b0r(x, VPCI_COMMON_OFF + (reg), 4))
#define W8(reg, v)   b0w(x, VPCI_COMMON_OFF + (reg), (v), 1)
#define W16(reg, v)  b0w(x, VPCI_COMMON_OFF + (reg), (v), 2)
#define W32(reg, v)  b0w(x, VPCI_COMMON_OFF + (reg), (v), 4)

static uint64_t device_features(struct fx *x)
{
	W32(VPCI_DFSELECT, 0);
	uint64_t lo = R32(VPCI_DF);
	W32(VPCI_DFSELECT, 1);
	return (uint64_t)R32(VPCI_DF) << 32 | lo;
}

/* Reset, negotiation, `nq` queues of QSIZE (receiveq with vec_rx, the others
 * with vec_tx), DRIVER_OK. */
static void bring_up_n(struct fx *x, uint64_t features, uint16_t nq, uint16_t vec_rx,
		       uint16_t vec_tx)
{
	W8(VPCI_STATUS, 0);
	W8(VPCI_STATUS, ACK);
	W8(VPCI_STATUS, ACK | DRIVER);
	W32(VPCI_GFSELECT, 0);
	W32(VPCI_GF, (uint32_t)features);
	W32(VPCI_GFSELECT, 1);
	W32(VPCI_GF, (uint32_t)(features >> 32));
	W8(VPCI_STATUS, ACK | DRIVER | FEATURES_OK);
	assert_int_equal(R8(VPCI_STATUS), ACK | DRIVER | FEATURES_OK);
	W16(VPCI_MSIX_CONFIG, 0);
	for (uint16_t q = 0; q < nq; q++) {
		memset(x->vm->ram + DESC_GPA(q), 0, 0x3000);
		W16(VPCI_Q_SELECT, q);
		W16(VPCI_Q_SIZE, QSIZE);
		b0w(x, VPCI_COMMON_OFF + VPCI_Q_DESC_LO, DESC_GPA(q), 8);
		b0w(x, VPCI_COMMON_OFF + VPCI_Q_DRIVER_LO, AVAIL_GPA(q), 8);
		b0w(x, VPCI_COMMON_OFF + VPCI_Q_DEVICE_LO, USED_GPA(q), 8);
		W16(VPCI_Q_MSIX, q == RXQ ? vec_rx : vec_tx);
		W16(VPCI_Q_ENABLE, 1);
		assert_int_equal(R16(VPCI_Q_ENABLE), 1);
		x->avail_idx[q] = x->next_desc[q] = 0;
	}
	W8(VPCI_STATUS, ACK | DRIVER | FEATURES_OK | DRIVER_OK);
	assert_int_equal(R8(VPCI_STATUS), ACK | DRIVER | FEATURES_OK | DRIVER_OK);
	x->next_data = DATA_GPA;
	x->ctl_seen = 0;
}

/* A driver without MULTIPORT: the two port queues. */
static void bring_up(struct fx *x, uint64_t features, uint16_t vec_rx, uint16_t vec_tx)
{
	bring_up_n(x, features, 2, vec_rx, vec_tx);
}

/* ---- the driver's side of the rings in fake RAM ---- */

static void ram16(struct fx *x, uint64_t gpa, uint16_t v)
{
	v = htole16(v);
	memcpy(x->vm->ram + gpa, &v, 2);
}

static uint16_t ram_r16(struct fx *x, uint64_t gpa)
{
	uint16_t v;
	memcpy(&v, x->vm->ram + gpa, 2);
	return le16toh(v);
}

static uint32_t ram_r32(struct fx *x, uint64_t gpa)
{
	uint32_t v;
	memcpy(&v, x->vm->ram + gpa, 4);
	return le32toh(v);
}

static void put_desc(struct fx *x, uint16_t q, uint16_t i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	uint8_t *p = x->vm->ram + DESC_GPA(q) + 16u * i;
	uint64_t a = htole64(addr);
	uint32_t l = htole32(len);
	uint16_t f = htole16(flags), n = htole16(next);
	memcpy(p, &a, 8);
	memcpy(p + 8, &l, 4);
	memcpy(p + 12, &f, 2);
	memcpy(p + 14, &n, 2);
}

/* One buffer of a chain the test posts: device-readable with `data`, or
 * device-writable of `len` bytes (data NULL). */
struct tbuf {
	const void *data;
	uint32_t len;
	bool write;
	uint64_t gpa;            /* filled in by post() */
};

/* Lays out a chain in descriptors and data RAM and publishes it. Returns the head. */
static uint16_t post(struct fx *x, uint16_t q, struct tbuf *b, unsigned n)
{
	uint16_t head = x->next_desc[q];
	for (unsigned i = 0; i < n; i++) {
		uint16_t d = (uint16_t)((head + i) % QSIZE);
		b[i].gpa = x->next_data;
		x->next_data += (b[i].len + 15u) & ~15u;
		if (b[i].write)
			memset(x->vm->ram + b[i].gpa, 0xee, b[i].len);
		else if (b[i].len)
			memcpy(x->vm->ram + b[i].gpa, b[i].data, b[i].len);
		put_desc(x, q, d, b[i].gpa, b[i].len,
			 (uint16_t)((b[i].write ? VIRTQ_DESC_F_WRITE : 0) |
				    (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0)),
			 (uint16_t)((d + 1) % QSIZE));
	}
	x->next_desc[q] = (uint16_t)((head + n) % QSIZE);
	ram16(x, AVAIL_GPA(q) + 4 + 2u * (x->avail_idx[q] % QSIZE), head);
	x->avail_idx[q]++;
	ram16(x, AVAIL_GPA(q) + 2, x->avail_idx[q]);
	return head;
}

/* One device-writable buffer of `len` bytes on receiveq; returns its gpa. */
static uint64_t post_rx(struct fx *x, uint32_t len)
{
	struct tbuf b = { .len = len, .write = true };
	post(x, RXQ, &b, 1);
	return b.gpa;
}

static uint16_t used_idx(struct fx *x, uint16_t q)
{
	return ram_r16(x, USED_GPA(q) + 2);
}

/* The used element for the n-th (1-based) completion on q. */
static void assert_used(struct fx *x, uint16_t q, uint16_t n, uint32_t id, uint32_t len)
{
	uint32_t slot = (n - 1u) % QSIZE;
	assert_int_equal(ram_r32(x, USED_GPA(q) + 4 + 8 * slot), id);
	assert_int_equal(ram_r32(x, USED_GPA(q) + 4 + 8 * slot + 4), len);
}

/* Everything the device wrote to the output pipe so far. */
static size_t drain_out(struct fx *x, uint8_t *buf, size_t cap)
{
	size_t got = 0;
	for (;;) {
		ssize_t n = read(x->out[0], buf + got, cap - got);
		if (n <= 0)
			return got;
		got += (size_t)n;
	}
}

static void feed(struct fx *x, const void *p, size_t len)
{
	assert_int_equal(write(x->in[1], p, len), (ssize_t)len);
}

/* Input bytes still in the pipe: what no guest buffer has taken. */
static int unread(struct fx *x)
{
	int n = -1;
	assert_int_equal(ioctl(x->in[0], FIONREAD, &n), 0);
	return n;
}

static uint64_t intx_fired(struct fx *x)
{
	return efd_take(x->t->intx.fd);
}

static uint8_t status(struct fx *x)
{
	return R8(VPCI_STATUS);
}

/* ---- identity, features, config ---- */

static void test_identity_queues_and_config(void **state)
{
	struct fx *x = *state;
	assert_int_equal(pci_func_cfg_read(&x->t->func, PCI_VENDOR_ID, 2), 0x1af4);
	assert_int_equal(pci_func_cfg_read(&x->t->func, PCI_DEVICE_ID, 2), 0x1040 + VIRTIO_ID_CONSOLE);
	/* Non-transitional: subsystem ID 0x40 + type (virtio 1.x 4.1.2.1). */
	assert_int_equal(pci_func_cfg_read(&x->t->func, PCI_SUBSYS_ID, 2), 0x40 + VIRTIO_ID_CONSOLE);
	assert_int_equal(pci_func_cfg_read(&x->t->func, 0x08, 4) >> 8, 0x078000);
	assert_int_equal(R16(VPCI_NUM_QUEUES), 4);  /* port 0 and the control queues */
	uint64_t f = device_features(x);
	assert_false(f & F_SIZE);                   /* the output is a pipe, not a terminal */
	assert_true(f & F_MULTIPORT);
	assert_true(f & F_VERSION_1);
	assert_int_equal(f & 0xfffffc, 0);          /* no EMERG_WRITE */
	assert_int_equal(b0r(x, VPCI_DEVICE_OFF, 4), 0);         /* no size */
	assert_int_equal(b0r(x, VPCI_DEVICE_OFF + 4, 4), 1);     /* max_nr_ports */
	assert_int_equal(b0r(x, VPCI_DEVICE_OFF + 8, 4), 0xffffffff); /* past the end */
	b0w(x, VPCI_DEVICE_OFF + 4, 0x10, 4);                    /* read-only */
	assert_int_equal(b0r(x, VPCI_DEVICE_OFF + 4, 4), 1);
	/* The driver may leave MULTIPORT out and use the first two queues only. */
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	assert_true(x->t->negotiated == F_VERSION_1);
	bring_up_n(x, F_VERSION_1 | F_MULTIPORT, NQ, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	assert_true(x->t->negotiated == (F_VERSION_1 | F_MULTIPORT));
}

/* ---- transmitq ---- */

static void test_tx_chains_reach_the_pipe_in_order(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	static const uint8_t bin[] = { 0x00, 0xff, '\n', 0x1b, '[', 'm', 0x00 };
	struct tbuf a[] = { { "hello, ", 7, false, 0 } };
	struct tbuf b[] = { { "wor", 3, false, 0 }, { "", 0, false, 0 }, { "ld\n", 3, false, 0 } };
	struct tbuf c[] = { { bin, sizeof(bin), false, 0 } };
	uint16_t ha = post(x, TXQ, a, 1), hb = post(x, TXQ, b, 3);
	virtio_pci_kick(x->t, TXQ);
	uint16_t hc = post(x, TXQ, c, 1);
	virtio_pci_kick(x->t, TXQ);

	uint8_t got[64];
	size_t n = drain_out(x, got, sizeof(got));
	static const uint8_t want[] = "hello, world\n\x00\xff\n\x1b[m";
	assert_int_equal(n, sizeof(want));             /* the trailing NUL is bin's last byte */
	assert_memory_equal(got, want, sizeof(want));

	assert_int_equal(used_idx(x, TXQ), 3);
	assert_used(x, TXQ, 1, ha, 0);                  /* nothing written into a tx chain */
	assert_used(x, TXQ, 2, hb, 0);
	assert_used(x, TXQ, 3, hc, 0);
	assert_int_equal(x->con->stats.bytes_out, sizeof(want));
	assert_int_equal(x->con->stats.chains_out, 3);
	assert_int_equal(x->con->stats.bytes_dropped, 0);
	assert_int_equal(intx_fired(x), 1);             /* the line stays raised until the EOI */
	assert_int_equal(b0r(x, VPCI_ISR_OFF, 1), 0x1);
	assert_int_equal(status(x) & NEEDS_RESET, 0);
}

/* Regression (hardening review): console output to a file could fill the
 * host's disk. The cap keeps what fits and drops (and counts) the rest. */
static void test_tx_output_cap(void **state)
{
	struct fx *x = *state;
	x->con->io.out_max = 10;
	x->con->io.out_used = 4;              /* a file that already held 4 bytes */
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	struct tbuf a[] = { { "0123456789", 10, false, 0 } };
	uint16_t ha = post(x, TXQ, a, 1);
	virtio_pci_kick(x->t, TXQ);
	struct tbuf b[] = { { "more", 4, false, 0 } };
	uint16_t hb = post(x, TXQ, b, 1);
	virtio_pci_kick(x->t, TXQ);
	uint8_t got[64];
	assert_int_equal(drain_out(x, got, sizeof(got)), 6);
	assert_memory_equal(got, "012345", 6);
	assert_used(x, TXQ, 1, ha, 0);        /* the chains still complete */
	assert_used(x, TXQ, 2, hb, 0);
	assert_int_equal(x->con->stats.bytes_out, 6);
	assert_int_equal(x->con->stats.bytes_dropped, 8);
	assert_int_equal(status(x) & NEEDS_RESET, 0);
}

static void test_tx_many_chains_wrap_the_ring(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	uint8_t want[3 * QSIZE * 10], got[sizeof(want) + 16];
	size_t off = 0;
	for (unsigned round = 0; round < 3 * QSIZE; round++) {
		char line[16];
		int len = snprintf(line, sizeof(line), "line %04u\n", round);
		struct tbuf b = { line, (uint32_t)len, false, 0 };
		if (x->next_data > DATA_GPA + 0x10000)
			x->next_data = DATA_GPA;
		post(x, TXQ, &b, 1);
		memcpy(want + off, line, (size_t)len);
		off += (size_t)len;
		if (round % 5 == 4 || round == 3 * QSIZE - 1)
			virtio_pci_kick(x->t, TXQ);
	}
	size_t n = drain_out(x, got, sizeof(got));
	assert_int_equal(n, off);
	assert_memory_equal(got, want, off);
	assert_int_equal(used_idx(x, TXQ), 3 * QSIZE);
}

static void test_tx_writable_buffer_needs_reset(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	struct tbuf good[] = { { "ok", 2, false, 0 } };
	struct tbuf bad[] = { { "xx", 2, false, 0 }, { NULL, 16, true, 0 } };
	post(x, TXQ, good, 1);
	post(x, TXQ, bad, 2);
	virtio_pci_kick(x->t, TXQ);

	uint8_t got[16];
	assert_int_equal(drain_out(x, got, sizeof(got)), 2);   /* the good chain only */
	assert_memory_equal(got, "ok", 2);
	assert_int_equal(used_idx(x, TXQ), 1);
	assert_int_not_equal(status(x) & NEEDS_RESET, 0);
	assert_null(virtio_pci_queue(x->t, TXQ));
	assert_int_equal(b0r(x, VPCI_ISR_OFF, 1), 0x3);         /* queue and config */
	assert_int_equal(ram_r32(x, bad[1].gpa), 0xeeeeeeee);  /* the writable buffer untouched */
	/* Nothing moves until the driver resets... */
	struct tbuf more[] = { { "zz", 2, false, 0 } };
	post(x, TXQ, more, 1);
	virtio_pci_kick(x->t, TXQ);
	assert_int_equal(drain_out(x, got, sizeof(got)), 0);
	/* ...and after a reset the device works again. */
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	assert_int_equal(status(x) & NEEDS_RESET, 0);
	post(x, TXQ, more, 1);
	virtio_pci_kick(x->t, TXQ);
	assert_int_equal(drain_out(x, got, sizeof(got)), 2);
	assert_memory_equal(got, "zz", 2);
}

static void test_tx_malformed_ring_needs_reset(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	put_desc(x, TXQ, 0, FAKE_RAM_SIZE - 4, 64, 0, 0);       /* runs past the end of RAM */
	ram16(x, AVAIL_GPA(TXQ) + 4, 0);
	ram16(x, AVAIL_GPA(TXQ) + 2, 1);
	virtio_pci_kick(x->t, TXQ);
	assert_int_not_equal(status(x) & NEEDS_RESET, 0);
	assert_int_equal(used_idx(x, TXQ), 0);
	uint8_t got[8];
	assert_int_equal(drain_out(x, got, sizeof(got)), 0);
}

static void test_tx_write_error_drops_bytes_and_completes(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	close(x->out[0]);                                    /* the reader is gone: EPIPE */
	x->out[0] = -1;
	struct tbuf a[] = { { "lost", 4, false, 0 } }, b[] = { { "also", 4, false, 0 } };
	post(x, TXQ, a, 1);
	post(x, TXQ, b, 1);
	virtio_pci_kick(x->t, TXQ);                          /* no SIGPIPE: we are still here */
	assert_int_equal(used_idx(x, TXQ), 2);
	assert_int_equal(x->con->stats.bytes_dropped, 8);
	assert_int_equal(x->con->stats.bytes_out, 0);
	assert_true(x->con->out_failed);
	assert_int_equal(status(x) & NEEDS_RESET, 0);
	sigset_t pending;
	sigpending(&pending);
	assert_false(sigismember(&pending, SIGPIPE));       /* taken back, not left pending */
}

static void test_tx_event_idx_asks_for_the_next_kick(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1 | F_EVENT_IDX, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	struct tbuf a[] = { { "a", 1, false, 0 } }, b[] = { { "b", 1, false, 0 } };
	post(x, TXQ, a, 1);
	post(x, TXQ, b, 1);
	virtio_pci_kick(x->t, TXQ);
	/* avail_event (after the used ring) = the next avail index the device wants to hear of. */
	assert_int_equal(ram_r16(x, USED_GPA(TXQ) + 4 + 8 * QSIZE), 2);
	uint8_t got[4];
	assert_int_equal(drain_out(x, got, sizeof(got)), 2);
}

/* ---- receiveq ---- */

static void test_rx_pipe_bytes_reach_a_posted_buffer(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	uint64_t gpa = post_rx(x, 64);
	virtio_pci_kick(x->t, RXQ);                 /* nothing to read yet: the fd is watched */
	assert_int_equal(used_idx(x, RXQ), 0);
	assert_true(x->con->in_watched);
	assert_int_equal(evloop_run_once(&x->loop, 0), 0);

	feed(x, "ls -l\n", 6);
	assert_int_equal(evloop_run_once(&x->loop, 1000), 1);
	assert_int_equal(used_idx(x, RXQ), 1);
	assert_used(x, RXQ, 1, 0, 6);
	assert_memory_equal(x->vm->ram + gpa, "ls -l\n", 6);
	assert_int_equal(x->vm->ram[gpa + 6], 0xee);   /* nothing past the used length */
	assert_int_equal(intx_fired(x), 1);
	assert_int_equal(x->con->stats.bytes_in, 6);
	assert_false(x->con->in_watched);           /* no buffer left: input rests */
}

static void test_rx_input_splits_across_buffers(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	uint8_t data[100];
	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	struct tbuf two[] = { { NULL, 32, true, 0 }, { NULL, 32, true, 0 } };
	post(x, RXQ, two, 2);                       /* one chain of two writable buffers */
	uint64_t g2 = post_rx(x, 64);
	virtio_pci_kick(x->t, RXQ);
	feed(x, data, sizeof(data));
	assert_int_equal(evloop_run_once(&x->loop, 1000), 1);
	assert_int_equal(used_idx(x, RXQ), 2);
	assert_used(x, RXQ, 1, 0, 64);
	assert_used(x, RXQ, 2, 2, 36);
	assert_memory_equal(x->vm->ram + two[0].gpa, data, 32);
	assert_memory_equal(x->vm->ram + two[1].gpa, data + 32, 32);
	assert_memory_equal(x->vm->ram + g2, data + 64, 36);
	assert_int_equal(x->con->stats.chains_in, 2);
}

static void test_rx_without_buffers_waits_for_a_kick(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	feed(x, "0123456789", 10);
	/* No buffer: the device does not watch the fd, so the loop stays idle. */
	assert_false(x->con->in_watched);
	assert_int_equal(evloop_run_once(&x->loop, 0), 0);
	x->con->in_handler.cb(x->con->in_handler.opaque, EPOLLIN); /* a stale wakeup reads nothing */
	assert_int_equal(unread(x), 10);
	assert_int_equal(used_idx(x, RXQ), 0);
	assert_int_equal(intx_fired(x), 0);

	uint64_t g1 = post_rx(x, 4);
	virtio_pci_kick(x->t, RXQ);                 /* delivered by the kick itself */
	assert_int_equal(used_idx(x, RXQ), 1);
	assert_used(x, RXQ, 1, 0, 4);
	assert_memory_equal(x->vm->ram + g1, "0123", 4);
	assert_int_equal(intx_fired(x), 1);
	/* Only what the buffer took was read: six bytes wait in the pipe, again without a watch
	 * (and would wait there for the next boot's driver). */
	assert_int_equal(unread(x), 6);
	assert_false(x->con->in_watched);
	assert_int_equal(evloop_run_once(&x->loop, 0), 0);

	uint64_t g2 = post_rx(x, 4);
	virtio_pci_kick(x->t, RXQ);
	uint64_t g3 = post_rx(x, 16), g4 = post_rx(x, 8);
	virtio_pci_kick(x->t, RXQ);
	assert_int_equal(used_idx(x, RXQ), 3);
	assert_used(x, RXQ, 2, 1, 4);
	assert_used(x, RXQ, 3, 2, 2);
	assert_memory_equal(x->vm->ram + g2, "4567", 4);
	assert_memory_equal(x->vm->ram + g3, "89", 2);
	assert_int_equal(x->con->stats.bytes_in, 10);
	/* The pipe is empty and g4 waits: now the fd is watched. */
	assert_true(x->con->in_watched);
	feed(x, "!", 1);
	assert_int_equal(evloop_run_once(&x->loop, 1000), 1);
	assert_int_equal(used_idx(x, RXQ), 4);
	assert_used(x, RXQ, 4, 3, 1);
	assert_int_equal(x->vm->ram[g4], '!');
	assert_false(x->con->in_watched);           /* no buffer left */
}

static void test_rx_readable_buffer_needs_reset(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	struct tbuf bad[] = { { "in?", 3, false, 0 }, { NULL, 8, true, 0 } };
	post(x, RXQ, bad, 2);
	feed(x, "data", 4);
	virtio_pci_kick(x->t, RXQ);
	assert_int_not_equal(status(x) & NEEDS_RESET, 0);
	assert_int_equal(used_idx(x, RXQ), 0);
	assert_false(x->con->in_watched);
	assert_int_equal(b0r(x, VPCI_ISR_OFF, 1), 0x2);
	/* The input read so far is kept for the next driver. */
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	uint64_t g = post_rx(x, 8);
	virtio_pci_kick(x->t, RXQ);
	assert_int_equal(used_idx(x, RXQ), 1);
	assert_used(x, RXQ, 1, 0, 4);
	assert_memory_equal(x->vm->ram + g, "data", 4);
}

static void test_rx_end_of_input(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	post_rx(x, 8);
	virtio_pci_kick(x->t, RXQ);
	assert_true(x->con->in_watched);
	feed(x, "bye", 3);
	close(x->in[1]);
	x->in[1] = -1;
	assert_int_equal(evloop_run_once(&x->loop, 1000), 1);
	assert_int_equal(used_idx(x, RXQ), 1);
	assert_used(x, RXQ, 1, 0, 3);
	post_rx(x, 8);
	virtio_pci_kick(x->t, RXQ);                 /* reads EOF: input ends, nothing used */
	assert_true(x->con->in_eof);
	assert_false(x->con->in_watched);
	assert_int_equal(used_idx(x, RXQ), 1);
	assert_int_equal(evloop_run_once(&x->loop, 0), 0);
}

static void test_rx_reset_stops_watching(void **state)
{
	struct fx *x = *state;
	bring_up(x, F_VERSION_1, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	post_rx(x, 8);
	virtio_pci_kick(x->t, RXQ);
	assert_true(x->con->in_watched);
	W8(VPCI_STATUS, 0);
	assert_false(x->con->in_watched);
	feed(x, "x", 1);
	assert_int_equal(evloop_run_once(&x->loop, 0), 0);
	assert_int_equal(used_idx(x, RXQ), 0);
}

/* ---- MULTIPORT: control queues, the port opened by the driver ---- */

/* One control message from the driver on the control transmitq, and the kick. */
/* Sends one control message; returns the head of its chain. */
static uint16_t ctl_send(struct fx *x, uint32_t id, uint16_t event, uint16_t value)
{
	uint8_t m[8];
	uint32_t i = htole32(id);
	uint16_t e = htole16(event), v = htole16(value);
	memcpy(m, &i, 4);
	memcpy(m + 4, &e, 2);
	memcpy(m + 6, &v, 2);
	struct tbuf b = { m, 8, false, 0 };
	uint16_t head = post(x, CTXQ, &b, 1);
	virtio_pci_kick(x->t, CTXQ);
	return head;
}

/* Posts `n` control receive buffers of `len` bytes and kicks. */
static void ctl_post(struct fx *x, unsigned n, uint32_t len)
{
	for (unsigned i = 0; i < n; i++) {
		struct tbuf b = { .len = len, .write = true };
		uint16_t head = post(x, CRXQ, &b, 1);
		x->ctl_gpa[head] = b.gpa;
	}
	virtio_pci_kick(x->t, CRXQ);
}

/* The next device -> driver control message is (id 0, event, value) of `len` bytes. */
static void ctl_expect(struct fx *x, uint16_t event, uint16_t value, uint32_t len)
{
	assert_true(used_idx(x, CRXQ) > x->ctl_seen);
	uint32_t slot = x->ctl_seen++ % QSIZE;
	uint32_t head = ram_r32(x, USED_GPA(CRXQ) + 4 + 8 * slot);
	assert_int_equal(ram_r32(x, USED_GPA(CRXQ) + 4 + 8 * slot + 4), len);
	uint64_t g = x->ctl_gpa[head % QSIZE];
	assert_int_equal(ram_r32(x, g), 0);
	assert_int_equal(ram_r16(x, g + 4), event);
	assert_int_equal(ram_r16(x, g + 6), value);
}

/* Linux's order: DRIVER_OK, control buffers, DEVICE_READY; PORT_ADD ->
 * receive buffers for the port, PORT_READY; CONSOLE_PORT -> PORT_OPEN. */
static void mp_handshake_to_open(struct fx *x, uint64_t features)
{
	bring_up_n(x, F_VERSION_1 | F_MULTIPORT | features, NQ, VIRTIO_NO_VECTOR,
		   VIRTIO_NO_VECTOR);
	ctl_post(x, 8, 64);
	assert_int_equal(used_idx(x, CRXQ), 0);     /* the device speaks when spoken to */
	ctl_send(x, 0xffffffff, VIRTIO_CONSOLE_DEVICE_READY, 1);
	assert_int_equal(used_idx(x, CTXQ), 1);
	ctl_expect(x, VIRTIO_CONSOLE_PORT_ADD, 0, 8);
	assert_int_equal(used_idx(x, CRXQ), 1);
}

static void test_mp_input_before_the_driver_waits_for_port_open(void **state)
{
	struct fx *x = *state;
	/* A line is in the input before the VM starts (issue 17). */
	feed(x, "root\n", 5);
	mp_handshake_to_open(x, 0);
	/* Linux posts the port's buffers (a kick per buffer) before it has
	 * registered the port; what arrives then it throws away. */
	uint64_t g = post_rx(x, 64);
	virtio_pci_kick(x->t, RXQ);
	post_rx(x, 64);
	virtio_pci_kick(x->t, RXQ);
	assert_int_equal(used_idx(x, RXQ), 0);
	assert_int_equal(unread(x), 5);             /* not even read */
	assert_false(x->con->in_watched);
	assert_int_equal(evloop_run_once(&x->loop, 0), 0);
	ctl_send(x, 0, VIRTIO_CONSOLE_PORT_READY, 1);
	ctl_expect(x, VIRTIO_CONSOLE_CONSOLE_PORT, 1, 8);
	ctl_expect(x, VIRTIO_CONSOLE_PORT_OPEN, 1, 8);  /* the host side is connected */
	assert_int_equal(used_idx(x, CRXQ), 3);     /* no RESIZE: not a terminal */
	assert_int_equal(used_idx(x, RXQ), 0);
	/* The console port is set up: the driver opens it and the line arrives. */
	uint16_t open = ctl_send(x, 0, VIRTIO_CONSOLE_PORT_OPEN, 1);
	/* The open's own chain comes back, not the receive chain the open filled. */
	assert_used(x, CTXQ, used_idx(x, CTXQ), open, 0);
	assert_int_not_equal(open, 0);
	assert_int_equal(used_idx(x, RXQ), 1);
	assert_used(x, RXQ, 1, 0, 5);
	assert_memory_equal(x->vm->ram + g, "root\n", 5);
	assert_int_equal(x->con->stats.bytes_in, 5);
	assert_true(x->con->in_watched);            /* one buffer left, the pipe empty */
	feed(x, "ls\n", 3);
	assert_int_equal(evloop_run_once(&x->loop, 1000), 1);
	assert_int_equal(used_idx(x, RXQ), 2);
	assert_used(x, RXQ, 2, 1, 3);
	assert_int_equal(status(x) & NEEDS_RESET, 0);
}

static void test_mp_port_close_and_reset_hold_input(void **state)
{
	struct fx *x = *state;
	mp_handshake_to_open(x, 0);
	ctl_send(x, 0, VIRTIO_CONSOLE_PORT_READY, 1);
	ctl_send(x, 0, VIRTIO_CONSOLE_PORT_OPEN, 1);
	/* DEVICE_READY again: port 0 is not added a second time (5.3.6.2.1). */
	uint16_t sent = used_idx(x, CRXQ);
	ctl_send(x, 0xffffffff, VIRTIO_CONSOLE_DEVICE_READY, 1);
	assert_int_equal(used_idx(x, CRXQ), sent);
	post_rx(x, 4);
	virtio_pci_kick(x->t, RXQ);
	assert_true(x->con->in_watched);
	ctl_send(x, 0, VIRTIO_CONSOLE_PORT_OPEN, 0); /* closed: input rests */
	assert_false(x->con->in_watched);
	feed(x, "abcdef", 6);
	virtio_pci_kick(x->t, RXQ);
	assert_int_equal(used_idx(x, RXQ), 0);
	ctl_send(x, 0, VIRTIO_CONSOLE_PORT_OPEN, 1);
	assert_int_equal(used_idx(x, RXQ), 1);
	assert_used(x, RXQ, 1, 0, 4);
	assert_int_equal(unread(x), 2);             /* "ef" not read */
	/* A reset forgets the open port; the unread bytes wait for the next one. */
	W8(VPCI_STATUS, 0);
	mp_handshake_to_open(x, 0);
	uint64_t g = post_rx(x, 8);
	virtio_pci_kick(x->t, RXQ);
	assert_int_equal(used_idx(x, RXQ), 0);
	ctl_send(x, 0, VIRTIO_CONSOLE_PORT_READY, 1);
	ctl_send(x, 0, VIRTIO_CONSOLE_PORT_OPEN, 1);
	assert_int_equal(used_idx(x, RXQ), 1);
	assert_used(x, RXQ, 1, 0, 2);
	assert_memory_equal(x->vm->ram + g, "ef", 2);
}

static void test_mp_bad_control_messages_need_reset(void **state)
{
	struct fx *x = *state;
	static const struct { uint32_t id; uint16_t event, value; } bad[] = {
		{ 1, VIRTIO_CONSOLE_PORT_OPEN, 1 },      /* no such port */
		{ 0, VIRTIO_CONSOLE_PORT_ADD, 1 },       /* a device -> driver event */
		{ 0, 99, 0 },                            /* no such event */
		{ 0, VIRTIO_CONSOLE_PORT_OPEN, 2 },      /* value not 0 or 1 */
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mp_handshake_to_open(x, 0);
		ctl_send(x, bad[i].id, bad[i].event, bad[i].value);
		assert_int_not_equal(status(x) & NEEDS_RESET, 0);
		assert_false(x->con->port_open);
	}
	/* Shorter than a message. */
	mp_handshake_to_open(x, 0);
	struct tbuf s[] = { { "\0\0\0\0\6\0", 6, false, 0 } };
	post(x, CTXQ, s, 1);
	virtio_pci_kick(x->t, CTXQ);
	assert_int_not_equal(status(x) & NEEDS_RESET, 0);
	/* A writable buffer on the control transmitq. */
	mp_handshake_to_open(x, 0);
	struct tbuf w[] = { { NULL, 8, true, 0 } };
	post(x, CTXQ, w, 1);
	virtio_pci_kick(x->t, CTXQ);
	assert_int_not_equal(status(x) & NEEDS_RESET, 0);
	/* A control receive buffer too small for a message. */
	bring_up_n(x, F_VERSION_1 | F_MULTIPORT, NQ, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	ctl_post(x, 1, 4);
	ctl_send(x, 0, VIRTIO_CONSOLE_DEVICE_READY, 1);
	assert_int_not_equal(status(x) & NEEDS_RESET, 0);
	assert_int_equal(used_idx(x, CRXQ), 0);
	/* Control queue kicks from a driver without MULTIPORT are ignored. */
	bring_up_n(x, F_VERSION_1, NQ, VIRTIO_NO_VECTOR, VIRTIO_NO_VECTOR);
	ctl_post(x, 1, 64);
	ctl_send(x, 0, VIRTIO_CONSOLE_DEVICE_READY, 1);
	assert_int_equal(used_idx(x, CRXQ), 0);
	assert_int_equal(used_idx(x, CTXQ), 0);
	assert_int_equal(status(x) & NEEDS_RESET, 0);
	/* PORT_READY over and over: the answers wait in a bounded list. */
	mp_handshake_to_open(x, 0);
	for (unsigned i = 0; i < 3 * VIRTIO_CONSOLE_CTRL_MAX; i++)
		ctl_send(x, 0, VIRTIO_CONSOLE_PORT_READY, 1);
	assert_int_equal(used_idx(x, CRXQ), 8);     /* the driver's 8 buffers */
	assert_int_equal(x->con->ctl_n, VIRTIO_CONSOLE_CTRL_MAX);
	assert_int_equal(status(x) & NEEDS_RESET, 0);
}

/* ---- the size of a terminal ---- */

static void test_tty_size_in_config_and_resize(void **state)
{
	struct fx *x = *state;
	uint64_t f = device_features(x);
	assert_true(f & F_SIZE);
	assert_int_equal(b0r(x, VPCI_DEVICE_OFF, 2), 132);       /* cols */
	assert_int_equal(b0r(x, VPCI_DEVICE_OFF + 2, 2), 43);    /* rows */
	/* MULTIPORT: the size follows CONSOLE_PORT in a RESIZE message. */
	mp_handshake_to_open(x, F_SIZE);
	ctl_send(x, 0, VIRTIO_CONSOLE_PORT_READY, 1);
	ctl_expect(x, VIRTIO_CONSOLE_CONSOLE_PORT, 1, 8);
	ctl_expect(x, VIRTIO_CONSOLE_PORT_OPEN, 1, 8);
	uint64_t g = x->ctl_gpa[ram_r32(x, USED_GPA(CRXQ) + 4 + 8 * 3) % QSIZE];
	ctl_expect(x, VIRTIO_CONSOLE_RESIZE, 0, 12);
	assert_int_equal(ram_r16(x, g + 8), 132);   /* cols, then rows (virtio 1.2 5.3.6.2) */
	assert_int_equal(ram_r16(x, g + 10), 43);
	/* The terminal changes size (msivm gets SIGWINCH): one more RESIZE; the same size
	 * again sends nothing. */
	struct winsize ws = { .ws_row = 50, .ws_col = 100 };
	assert_int_equal(ioctl(x->pty, TIOCSWINSZ, &ws), 0);
	virtio_console_resize(x->con);
	uint64_t g2 = x->ctl_gpa[ram_r32(x, USED_GPA(CRXQ) + 4 + 8 * 4) % QSIZE];
	ctl_expect(x, VIRTIO_CONSOLE_RESIZE, 0, 12);
	assert_int_equal(ram_r16(x, g2 + 8), 100);
	assert_int_equal(ram_r16(x, g2 + 10), 50);
	assert_int_equal(b0r(x, VPCI_DEVICE_OFF, 2), 100);
	virtio_console_resize(x->con);
	assert_int_equal(used_idx(x, CRXQ), 5);
	/* Output reaches the terminal. */
	struct tbuf a[] = { { "hi", 2, false, 0 } };
	post(x, TXQ, a, 1);
	virtio_pci_kick(x->t, TXQ);
	char got[8];
	assert_int_equal(read(x->pty, got, sizeof(got)), 2);
}

/* ---- interrupts per queue under MSI-X ---- */

static void msix_on(struct fx *x)
{
	const struct bus_ops *ops = x->t->func.bars[VPCI_MSIX_BAR].ops;
	void *opaque = x->t->func.bars[VPCI_MSIX_BAR].opaque;
	pci_func_cfg_write(&x->t->func, x->t->msix.cap + 2, 2, MSIX_CTRL_ENABLE);
	for (unsigned v = 0; v < x->t->msix.nvec; v++) {
		uint32_t words[4] = { MSI_ADDR, 0, 0x40 + v, 0 };
		for (unsigned w = 0; w < 4; w++)
			ops->write(opaque, v * MSIX_ENTRY_SIZE + 4u * w, &words[w], 4);
	}
}

static void test_msix_each_queue_signals_its_vector(void **state)
{
	struct fx *x = *state;
	assert_int_equal(x->t->msix.nvec, 5);       /* config + four queues */
	msix_on(x);
	bring_up(x, F_VERSION_1, 1, 2);
	struct tbuf a[] = { { "out", 3, false, 0 } };
	post(x, TXQ, a, 1);
	virtio_pci_kick(x->t, TXQ);
	assert_int_equal(efd_take(x->t->msix.vecs[2].efd), 1);
	assert_int_equal(efd_take(x->t->msix.vecs[1].efd), 0);
	post_rx(x, 8);
	virtio_pci_kick(x->t, RXQ);
	feed(x, "in", 2);
	assert_int_equal(evloop_run_once(&x->loop, 1000), 1);
	assert_int_equal(efd_take(x->t->msix.vecs[1].efd), 1);
	assert_int_equal(efd_take(x->t->msix.vecs[2].efd), 0);
	assert_int_equal(efd_take(x->t->msix.vecs[0].efd), 0);
	assert_int_equal(intx_fired(x), 0);
}

/* ---- opening the host files ---- */

static void test_open_io(void **state)
{
	(void)state;
	char dir[] = "/tmp/msivm-con-XXXXXX", out[64], in[64];
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(in, sizeof(in), "%s/in", dir);
	struct virtio_console_opts o = { .out_path = "", .in_path = "" };
	struct virtio_console_io io;
	struct error err;
	/* Defaults: the given stdout, no input, nothing to close. */
	assert_int_equal(virtio_console_open_io(&o, 1, &io, &err), 0);
	assert_int_equal(io.out_fd, 1);
	assert_int_equal(io.in_fd, -1);
	assert_false(io.close_out || io.close_in);
	/* A missing input file is refused by name, and the output opened for it is closed. */
	snprintf(o.out_path, sizeof(o.out_path), "%s", out);
	snprintf(o.in_path, sizeof(o.in_path), "%s", in);
	assert_int_equal(virtio_console_open_io(&o, 1, &io, &err), -ENOENT);
	assert_non_null(strstr(err.msg, in));
	/* Files: output truncated, input nonblocking. */
	FILE *f = fopen(out, "w");
	assert_non_null(f);
	fputs("old", f);
	fclose(f);
	f = fopen(in, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(virtio_console_open_io(&o, 1, &io, &err), 0);
	assert_true(io.close_out && io.close_in);
	assert_true(fcntl(io.in_fd, F_GETFL) & O_NONBLOCK);
	assert_int_equal(lseek(io.out_fd, 0, SEEK_END), 0);
	close(io.out_fd);
	close(io.in_fd);
	/* After a guest reboot: appended to, not truncated. */
	f = fopen(out, "w");
	assert_non_null(f);
	fputs("boot1", f);
	fclose(f);
	o.append = true;
	assert_int_equal(virtio_console_open_io(&o, 1, &io, &err), 0);
	assert_int_equal(write(io.out_fd, "+", 1), 1);
	assert_int_equal(lseek(io.out_fd, 0, SEEK_CUR), 6);
	close(io.out_fd);
	close(io.in_fd);
	/* A cap counts what the file already holds. */
	o.max_out = 100;
	assert_int_equal(virtio_console_open_io(&o, 1, &io, &err), 0);
	assert_int_equal(io.out_max, 100);
	assert_int_equal(io.out_used, 6);
	close(io.out_fd);
	close(io.in_fd);
	o.append = false;
	snprintf(o.out_path, sizeof(o.out_path), "%s/no/such/dir", dir);
	o.in_path[0] = 0;
	assert_int_equal(virtio_console_open_io(&o, 1, &io, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "console output"));
	unlink(out);
	unlink(in);
	rmdir(dir);
}

int main(void)
{
#define TI(f) cmocka_unit_test_setup_teardown(f, setup_intx, teardown)
#define TX(f) cmocka_unit_test_setup_teardown(f, setup_msix, teardown)
	const struct CMUnitTest tests[] = {
		TI(test_identity_queues_and_config),
		TI(test_tx_chains_reach_the_pipe_in_order),
		TI(test_tx_output_cap),
		TI(test_tx_many_chains_wrap_the_ring),
		TI(test_tx_writable_buffer_needs_reset),
		TI(test_tx_malformed_ring_needs_reset),
		TI(test_tx_write_error_drops_bytes_and_completes),
		TI(test_tx_event_idx_asks_for_the_next_kick),
		TI(test_rx_pipe_bytes_reach_a_posted_buffer),
		TI(test_rx_input_splits_across_buffers),
		TI(test_rx_without_buffers_waits_for_a_kick),
		TI(test_rx_readable_buffer_needs_reset),
		TI(test_rx_end_of_input),
		TI(test_rx_reset_stops_watching),
		TI(test_mp_input_before_the_driver_waits_for_port_open),
		TI(test_mp_port_close_and_reset_hold_input),
		TI(test_mp_bad_control_messages_need_reset),
		cmocka_unit_test_setup_teardown(test_tty_size_in_config_and_resize, setup_tty,
						teardown),
		TX(test_msix_each_queue_signals_its_vector),
		cmocka_unit_test(test_open_io),
	};
#undef TI
#undef TX
	return cmocka_run_group_tests(tests, NULL, NULL);
}
