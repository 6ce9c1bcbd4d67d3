/* Unit tests: virtio-vsock: connections both ways through unix sockets, credit, the state machine's refusals, hostile packets, the connection cap, reset. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "devices/virtio_vsock.h"
#include "fake_driver.h"
#include "fake_vm.h"
#include "virtio/virtio_pci_state.h"

#define QSIZE        256
#define DESC_GPA(q)  (0x1000u + 0x4000u * (q))
#define AVAIL_GPA(q) (DESC_GPA(q) + 0x1000u)
#define USED_GPA(q)  (DESC_GPA(q) + 0x2000u)
#define DATA_GPA     0x20000u
#define CID          42u
#define RXBUF        (VSOCK_HDR_SIZE + 4096u)

struct fx {
	struct fake_vm *vm;
	struct evloop loop;
	struct virtio_vsock *v;
	struct virtio_pci *t;
	char dir[32], path[64];
	uint16_t avail_idx[VSOCK_NQUEUES], next_desc[VSOCK_NQUEUES], rx_seen;
	uint64_t rx_gpa[QSIZE];  /* the receive buffer of each descriptor head */
	uint32_t next_data;
};

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	if (!x || !(x->vm = fake_vm_new()) || !(x->v = calloc(1, sizeof(*x->v))) ||
	    evloop_init(&x->loop))
		return -1;
	snprintf(x->dir, sizeof(x->dir), "/tmp/vsockXXXXXX");
	if (!mkdtemp(x->dir))
		return -1;
	snprintf(x->path, sizeof(x->path), "%s/v.sock", x->dir);
	struct virtio_vsock_opts o = { .cid = CID };
	snprintf(o.path, sizeof(o.path), "%s", x->path);
	struct virtio_pci_config cfg = { .mode = IRQ_MODE_MSIX, .vectors = -1 };
	struct error err;
	if (virtio_vsock_init(x->v, 0, &o, &cfg, &x->vm->mem, -1, &x->vm->routes, &x->loop,
			      &x->vm->mmio, fake_window(), &err)) {
		print_error("virtio_vsock_init: %s\n", err.msg);
		return -1;
	}
	x->t = &x->v->pci;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	virtio_vsock_destroy(x->v);
	free(x->v);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", x->dir);
	if (system(cmd)) {
	}
	evloop_destroy(&x->loop);
	fake_vm_free(x->vm);
	free(x);
	return 0;
}

/* ---- the driver ---- */

static void ram16(struct fx *x, uint64_t gpa, uint16_t v)
{
	v = htole16(v);
	memcpy(x->vm->ram + gpa, &v, 2);
}

static uint32_t ram32(struct fx *x, uint64_t gpa)
{
	uint32_t v;
	memcpy(&v, x->vm->ram + gpa, 4);
	return le32toh(v);
}

static void put_desc(struct fx *x, uint16_t q, uint16_t i, uint64_t addr, uint32_t len, uint16_t flags)
{
	uint8_t *p = x->vm->ram + DESC_GPA(q) + 16u * i;
	uint64_t a = htole64(addr);
	uint32_t l = htole32(len);
	uint16_t f = htole16(flags), n = 0;
	memcpy(p, &a, 8);
	memcpy(p + 8, &l, 4);
	memcpy(p + 12, &f, 2);
	memcpy(p + 14, &n, 2);
}

/* One buffer on queue q: device-readable with data, or writable of len bytes. Returns the head. */
static uint16_t post1(struct fx *x, uint16_t q, const void *data, uint32_t len, bool write)
{
	uint16_t d = x->next_desc[q];
	uint64_t gpa = x->next_data;
	x->next_data += (len + 63u) & ~63u;
	assert_true(x->next_data < FAKE_RAM_SIZE);
	if (data)
		memcpy(x->vm->ram + gpa, data, len);
	put_desc(x, q, d, gpa, len, write ? VIRTQ_DESC_F_WRITE : 0);
	x->next_desc[q] = (uint16_t)((d + 1) % QSIZE);
	ram16(x, AVAIL_GPA(q) + 4 + 2u * (x->avail_idx[q] % QSIZE), d);
	x->avail_idx[q]++;
	ram16(x, AVAIL_GPA(q) + 2, x->avail_idx[q]);
	if (q == VSOCK_RXQ)
		x->rx_gpa[d] = gpa;
	return d;
}

static void bring_up(struct fx *x)
{
	vdrv_negotiate(x->t, 0);
	for (uint16_t q = 0; q < VSOCK_NQUEUES; q++)
		vdrv_enable_queue(x->t, q, QSIZE, DESC_GPA(q), AVAIL_GPA(q), USED_GPA(q));
	vdrv_write(x->t, VPCI_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER |
		   VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK, 1);
	x->next_data = DATA_GPA;
}

static void post_rx(struct fx *x, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		post1(x, VSOCK_RXQ, NULL, RXBUF, true);
	virtio_pci_kick(x->t, VSOCK_RXQ);
}

/* The guest sends one packet (header and payload in one buffer) and kicks. */
static void send_pkt(struct fx *x, uint16_t op, uint32_t src_port, uint32_t dst_port,
		     const void *payload, uint32_t len, uint32_t buf_alloc, uint32_t fwd_cnt)
{
	uint8_t b[VSOCK_HDR_SIZE + 256];
	struct vsock_hdr h = { .src_cid = CID, .dst_cid = VSOCK_HOST_CID, .src_port = src_port,
			       .dst_port = dst_port, .len = len, .type = VSOCK_TYPE_STREAM, .op = op,
			       .buf_alloc = buf_alloc, .fwd_cnt = fwd_cnt };
	assert_true(len <= 256);
	vsock_hdr_encode(&h, b);
	if (len)
		memcpy(b + VSOCK_HDR_SIZE, payload, len);
	post1(x, VSOCK_TXQ, b, VSOCK_HDR_SIZE + len, false);
	virtio_pci_kick(x->t, VSOCK_TXQ);
}

/* Sends raw header bytes as the guest (for hostile packets). */
static void send_hdr(struct fx *x, const struct vsock_hdr *h, uint32_t buflen)
{
	uint8_t b[VSOCK_HDR_SIZE + 64] = { 0 };
	vsock_hdr_encode(h, b);
	post1(x, VSOCK_TXQ, b, buflen, false);
	virtio_pci_kick(x->t, VSOCK_TXQ);
}

/* Lets the event loop serve what the host sockets did. */
static void spin(struct fx *x)
{
	for (int i = 0; i < 20; i++)
		evloop_run_once(&x->loop, 5);
}

/* The next packet the device put on the receive queue, or false if none. */
static bool next_rx(struct fx *x, struct vsock_hdr *h, uint8_t *payload)
{
	uint16_t idx;
	memcpy(&idx, x->vm->ram + USED_GPA(VSOCK_RXQ) + 2, 2);
	if (le16toh(idx) == x->rx_seen)
		return false;
	uint32_t slot = x->rx_seen++ % QSIZE;
	uint32_t id = ram32(x, USED_GPA(VSOCK_RXQ) + 4 + 8 * slot);
	uint32_t len = ram32(x, USED_GPA(VSOCK_RXQ) + 8 + 8 * slot);
	const uint8_t *b = x->vm->ram + x->rx_gpa[id];
	vsock_hdr_decode(b, h);
	assert_int_equal(len, VSOCK_HDR_SIZE + h->len);
	assert_int_equal(h->src_cid, VSOCK_HOST_CID);
	assert_int_equal(h->dst_cid, CID);
	if (payload && h->len)
		memcpy(payload, b + VSOCK_HDR_SIZE, h->len);
	return true;
}

static void expect_rx(struct fx *x, uint16_t op, uint32_t src_port, uint32_t dst_port,
		      struct vsock_hdr *out)
{
	struct vsock_hdr h;
	if (!next_rx(x, &h, NULL))
		fail_msg("no packet on the receive queue (want op %u)", op);
	if (h.op != op || h.src_port != src_port || h.dst_port != dst_port)
		fail_msg("got op %u %u -> %u, want op %u %u -> %u", h.op, h.src_port, h.dst_port, op,
			 src_port, dst_port);
	if (out)
		*out = h;
}

/* A host service at PATH_port. */
static int host_listen(struct fx *x, uint32_t port)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s_%u", x->path, port);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 128), 0);
	return fd;
}

static int host_connect(struct fx *x)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", x->path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static ssize_t read_some(int fd, void *buf, size_t n)
{
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return read(fd, buf, n);
}

/* ---- tests ---- */

/* The config space holds the guest's CID; STREAM is offered. */
static void test_config_and_features(void **state)
{
	struct fx *x = *state;
	vdrv_acknowledge(x->t);
	assert_int_equal(vdrv_config(x->t, 0, 8), CID);
	vdrv_write(x->t, VPCI_DFSELECT, 0, 4);
	assert_true(vdrv_read(x->t, VPCI_DF, 4) & (1u << VIRTIO_VSOCK_F_STREAM));
}

/* Guest -> host: REQUEST to port 1234 reaches PATH_1234 (RESPONSE), bytes flow both ways with
 * the credit of each side, and the guest's SHUTDOWN ends it with an RST and the host's EOF. */
static void test_guest_connects_to_a_host_port(void **state)
{
	struct fx *x = *state;
	int lfd = host_listen(x, 1234);
	bring_up(x);
	post_rx(x, 8);
	send_pkt(x, VSOCK_OP_REQUEST, 5000, 1234, NULL, 0, 65536, 0);
	spin(x);
	struct vsock_hdr h;
	expect_rx(x, VSOCK_OP_RESPONSE, 1234, 5000, &h);
	assert_int_equal(h.buf_alloc, VSOCK_BUF_ALLOC);
	int s = accept(lfd, NULL, NULL);
	assert_true(s >= 0);
	send_pkt(x, VSOCK_OP_RW, 5000, 1234, "hello", 5, 65536, 0);
	char buf[64] = "";
	assert_int_equal(read(s, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(write(s, "world!", 6), 6);
	spin(x);
	uint8_t p[4096];
	assert_true(next_rx(x, &h, p));
	assert_int_equal(h.op, VSOCK_OP_RW);
	assert_int_equal(h.len, 6);
	assert_memory_equal(p, "world!", 6);
	assert_int_equal(h.fwd_cnt, 5); /* the guest's 5 bytes went into the socket */
	send_hdr(x, &(struct vsock_hdr){ .src_cid = CID, .dst_cid = 2, .src_port = 5000,
		 .dst_port = 1234, .type = 1, .op = VSOCK_OP_SHUTDOWN,
		 .flags = VSOCK_SHUTDOWN_RCV | VSOCK_SHUTDOWN_SEND }, VSOCK_HDR_SIZE);
	expect_rx(x, VSOCK_OP_RST, 1234, 5000, NULL);
	assert_int_equal(read(s, buf, sizeof(buf)), 0); /* EOF: msivm closed its end */
	assert_int_equal(x->v->stats.conns_guest, 1);
	close(s);
	close(lfd);
}

/* Host -> guest: "CONNECT 52\n" on PATH becomes a REQUEST to port 52; the guest's RESPONSE
 * answers the client "OK <host port>\n"; bytes flow; the client's end of file is a SHUTDOWN
 * SEND, the guest's RST ends the stream. */
static void test_host_connects_with_a_connect_line(void **state)
{
	struct fx *x = *state;
	bring_up(x);
	post_rx(x, 8);
	int c = host_connect(x);
	assert_int_equal(write(c, "CONNECT 52\n", 11), 11);
	spin(x);
	struct vsock_hdr h;
	assert_true(next_rx(x, &h, NULL));
	assert_int_equal(h.op, VSOCK_OP_REQUEST);
	assert_int_equal(h.dst_port, 52);
	assert_true(h.src_port >= 1u << 30);
	uint32_t hp = h.src_port;
	send_pkt(x, VSOCK_OP_RESPONSE, 52, hp, NULL, 0, 65536, 0);
	char buf[64] = "", want[32];
	snprintf(want, sizeof(want), "OK %u\n", hp);
	assert_int_equal(read(c, buf, strlen(want)), (ssize_t)strlen(want));
	assert_memory_equal(buf, want, strlen(want));
	assert_int_equal(write(c, "ping", 4), 4);
	spin(x);
	uint8_t p[4096];
	assert_true(next_rx(x, &h, p));
	assert_int_equal(h.op, VSOCK_OP_RW);
	assert_memory_equal(p, "ping", 4);
	send_pkt(x, VSOCK_OP_RW, 52, hp, "pong", 4, 65536, 4);
	assert_int_equal(read(c, buf, 4), 4);
	assert_memory_equal(buf, "pong", 4);
	close(c);
	spin(x);
	assert_true(next_rx(x, &h, NULL));
	assert_int_equal(h.op, VSOCK_OP_SHUTDOWN);
	assert_int_equal(h.flags, VSOCK_SHUTDOWN_SEND); /* the host sends no more */
	send_pkt(x, VSOCK_OP_RST, 52, hp, NULL, 0, 65536, 4);
	assert_null(vsock_conn_find(x->v, hp, 52));
	assert_int_equal(x->v->stats.conns_host, 1);
}

/* The device never sends past the guest's credit: buf_alloc 8 lets 8 bytes through; a
 * CREDIT_UPDATE with fwd_cnt 8 lets the next 8; a CREDIT_REQUEST is answered. */
static void test_credit_to_the_guest(void **state)
{
	struct fx *x = *state;
	int lfd = host_listen(x, 7);
	bring_up(x);
	post_rx(x, 8);
	send_pkt(x, VSOCK_OP_REQUEST, 9, 7, NULL, 0, 8, 0);
	spin(x);
	expect_rx(x, VSOCK_OP_RESPONSE, 7, 9, NULL);
	int s = accept(lfd, NULL, NULL);
	assert_int_equal(write(s, "0123456789abcdefXYZ", 19), 19);
	spin(x);
	struct vsock_hdr h;
	uint8_t p[4096];
	assert_true(next_rx(x, &h, p));
	assert_int_equal(h.len, 8);
	assert_memory_equal(p, "01234567", 8);
	assert_false(next_rx(x, &h, p)); /* no credit left: nothing more */
	send_pkt(x, VSOCK_OP_CREDIT_UPDATE, 9, 7, NULL, 0, 8, 8);
	assert_true(next_rx(x, &h, p));
	assert_int_equal(h.len, 8);
	assert_memory_equal(p, "89abcdef", 8);
	assert_false(next_rx(x, &h, p));
	send_pkt(x, VSOCK_OP_CREDIT_REQUEST, 9, 7, NULL, 0, 8, 8); /* 16 sent, 8 consumed: none */
	expect_rx(x, VSOCK_OP_CREDIT_UPDATE, 7, 9, &h);
	assert_int_equal(h.buf_alloc, VSOCK_BUF_ALLOC);
	assert_false(next_rx(x, &h, p));
	close(s);
	close(lfd);
}

/* A guest that sends past the credit msivm gave is reset, not buffered without bound. */
static void test_guest_past_its_credit_is_reset(void **state)
{
	struct fx *x = *state;
	int lfd = host_listen(x, 8);
	bring_up(x);
	post_rx(x, 8);
	send_pkt(x, VSOCK_OP_REQUEST, 10, 8, NULL, 0, 65536, 0);
	spin(x);
	expect_rx(x, VSOCK_OP_RESPONSE, 8, 10, NULL);
	int s = accept(lfd, NULL, NULL); /* never reads: the socket buffer fills, then msivm's */
	int big = 4096;
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	uint8_t chunk[256];
	memset(chunk, 'z', sizeof(chunk));
	unsigned sent = 0;
	for (; sent < 2 * VSOCK_BUF_ALLOC / sizeof(chunk) && vsock_conn_find(x->v, 8, 10) &&
	       vsock_conn_find(x->v, 8, 10)->state == VC_ESTABLISHED; sent++)
		send_pkt(x, VSOCK_OP_RW, 10, 8, chunk, sizeof(chunk), 65536, 0);
	assert_true(sent < 2 * VSOCK_BUF_ALLOC / sizeof(chunk));
	struct vsock_hdr h;
	expect_rx(x, VSOCK_OP_RST, 8, 10, &h);
	assert_true(x->v->conns[0].pend_len <= VSOCK_BUF_ALLOC);
	assert_int_equal(x->v->stats.bad_packets, 1);
	close(s);
	close(lfd);
}

/* Refusals: no service at PATH_P, packets of no connection, and malformed packets (wrong
 * CIDs, type, operation, length, payload on a control packet). */
static void test_refusals_and_hostile_packets(void **state)
{
	struct fx *x = *state;
	bring_up(x);
	post_rx(x, 16);
	send_pkt(x, VSOCK_OP_REQUEST, 1, 999, NULL, 0, 65536, 0); /* nobody at PATH_999 */
	spin(x);
	expect_rx(x, VSOCK_OP_RST, 999, 1, NULL);
	assert_int_equal(x->v->stats.refused, 1);
	send_pkt(x, VSOCK_OP_RW, 2, 998, "x", 1, 65536, 0); /* no such connection */
	expect_rx(x, VSOCK_OP_RST, 998, 2, NULL);
	send_pkt(x, VSOCK_OP_RST, 3, 997, NULL, 0, 0, 0); /* an RST is never answered */
	struct vsock_hdr h;
	assert_false(next_rx(x, &h, NULL));
	struct vsock_hdr bad[] = {
		{ .src_cid = CID, .dst_cid = 7, .src_port = 4, .dst_port = 5, .type = 1, .op = 1 },
		{ .src_cid = CID, .dst_cid = 2, .src_port = 4, .dst_port = 5, .type = 2, .op = 1 },
		{ .src_cid = CID, .dst_cid = 2, .src_port = 4, .dst_port = 5, .type = 1, .op = 9 },
		{ .src_cid = CID, .dst_cid = 2, .src_port = 4, .dst_port = 5, .type = 1, .op = 5,
		  .len = 1000 },
		{ .src_cid = CID, .dst_cid = 2, .src_port = 4, .dst_port = 5, .type = 1, .op = 1,
		  .len = 4 },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		send_hdr(x, &bad[i], VSOCK_HDR_SIZE + (bad[i].len == 4 ? 4 : 0));
		expect_rx(x, VSOCK_OP_RST, 5, 4, NULL);
	}
	/* a packet claiming another source CID is dropped unanswered; so is a short one */
	send_hdr(x, &(struct vsock_hdr){ .src_cid = 99, .dst_cid = 2, .type = 1, .op = 1 },
		 VSOCK_HDR_SIZE);
	post1(x, VSOCK_TXQ, "short", 5, false);
	virtio_pci_kick(x->t, VSOCK_TXQ);
	assert_false(next_rx(x, &h, NULL));
	assert_int_equal(x->v->stats.bad_packets, 7);
	assert_false(vdrv_read(x->t, VPCI_STATUS, 1) & VIRTIO_STATUS_NEEDS_RESET);
}

/* At most VSOCK_MAX_CONNS connections: the next REQUEST is refused with an RST. */
static void test_connection_cap(void **state)
{
	struct fx *x = *state;
	int lfd = host_listen(x, 80);
	bring_up(x);
	post_rx(x, VSOCK_MAX_CONNS + 4);
	for (uint32_t i = 0; i <= VSOCK_MAX_CONNS; i++)
		send_pkt(x, VSOCK_OP_REQUEST, 100 + i, 80, NULL, 0, 65536, 0);
	/* the one over the cap is refused at once; the others are connected by the I/O thread */
	expect_rx(x, VSOCK_OP_RST, 80, 100 + VSOCK_MAX_CONNS, NULL);
	spin(x);
	for (uint32_t i = 0; i < VSOCK_MAX_CONNS; i++)
		expect_rx(x, VSOCK_OP_RESPONSE, 80, 100 + i, NULL);
	assert_int_equal(x->v->stats.refused, 1);
	close(lfd);
}

/* A device reset ends every connection: the host sides see EOF. */
static void test_reset_closes_connections(void **state)
{
	struct fx *x = *state;
	int lfd = host_listen(x, 11);
	bring_up(x);
	post_rx(x, 4);
	send_pkt(x, VSOCK_OP_REQUEST, 12, 11, NULL, 0, 65536, 0);
	spin(x);
	expect_rx(x, VSOCK_OP_RESPONSE, 11, 12, NULL);
	int s = accept(lfd, NULL, NULL);
	vdrv_write(x->t, VPCI_STATUS, 0, 1);
	char b;
	assert_int_equal(read(s, &b, 1), 0);
	assert_null(vsock_conn_find(x->v, 11, 12));
	close(s);
	close(lfd);
}

/* A snapshot drops the connections (it says how many); the restored device owes the driver a
 * TRANSPORT_RESET, sent in the first event buffer (here given after the restore) and only once. */
static void test_restore_sends_transport_reset(void **state)
{
	struct fx *x = *state;
	int lfd = host_listen(x, 11);
	bring_up(x);
	post_rx(x, 4);
	send_pkt(x, VSOCK_OP_REQUEST, 12, 11, NULL, 0, 65536, 0);
	spin(x);
	expect_rx(x, VSOCK_OP_RESPONSE, 11, 12, NULL);
	struct error err = { "" };
	json_t *st = virtio_pci_state_save(x->t, &err);
	assert_non_null(st);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(st, "device"),
							    "connections_dropped")), 1);
	/* the restore, into the same device after a reset: the event queue has no buffer yet */
	vdrv_write(x->t, VPCI_STATUS, 0, 1);
	assert_int_equal(virtio_pci_state_load(x->t, st, &err), 0);
	json_decref(st);
	assert_true(x->v->owe_reset);
	uint16_t used0 = (uint16_t)(ram32(x, USED_GPA(VSOCK_EVQ)) >> 16);
	uint16_t head = post1(x, VSOCK_EVQ, NULL, 8, true);
	virtio_pci_kick(x->t, VSOCK_EVQ);
	uint16_t used1 = (uint16_t)(ram32(x, USED_GPA(VSOCK_EVQ)) >> 16);
	assert_int_equal((uint16_t)(used1 - used0), 1);
	uint32_t slot = used0 % QSIZE;
	assert_int_equal(ram32(x, USED_GPA(VSOCK_EVQ) + 4 + 8 * slot), head);
	assert_int_equal(ram32(x, USED_GPA(VSOCK_EVQ) + 8 + 8 * slot), 4);
	uint64_t gpa = x->next_data - 64;
	assert_int_equal(ram32(x, gpa), VSOCK_EVENT_TRANSPORT_RESET);
	assert_false(x->v->owe_reset);
	post1(x, VSOCK_EVQ, NULL, 8, true); /* once only */
	virtio_pci_kick(x->t, VSOCK_EVQ);
	assert_int_equal((uint16_t)(ram32(x, USED_GPA(VSOCK_EVQ)) >> 16), used1);
	assert_int_equal(x->v->transport_resets, 1);
	close(lfd);
}

/* A host client whose first line is not "CONNECT <port>" is closed; the guest hears nothing. */
static void test_bad_connect_line(void **state)
{
	struct fx *x = *state;
	bring_up(x);
	post_rx(x, 4);
	int c = host_connect(x);
	assert_int_equal(write(c, "HELLO 1\n", 8), 8);
	spin(x);
	char b;
	assert_int_equal(read_some(c, &b, 1), 0);
	struct vsock_hdr h;
	assert_false(next_rx(x, &h, NULL));
	close(c);
}

/* PATH exists already: msivm refuses to start instead of taking it over. */
static void test_existing_path_is_refused(void **state)
{
	struct fx *x = *state;
	struct virtio_vsock *w = calloc(1, sizeof(*w));
	struct virtio_vsock_opts o = { .cid = 5 };
	snprintf(o.path, sizeof(o.path), "%s", x->path);
	struct virtio_pci_config cfg = { .mode = IRQ_MODE_MSIX, .vectors = -1 };
	struct error err;
	assert_int_equal(virtio_vsock_init(w, 1, &o, &cfg, &x->vm->mem, -1, &x->vm->routes, NULL,
					   &x->vm->mmio, fake_window(), &err), -EADDRINUSE);
	assert_non_null(strstr(err.msg, "remove it first"));
	virtio_vsock_destroy(w);
	free(w);
	assert_int_equal(access(x->path, F_OK), 0); /* the first device's socket is untouched */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_config_and_features, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_connects_to_a_host_port, setup, teardown),
		cmocka_unit_test_setup_teardown(test_host_connects_with_a_connect_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credit_to_the_guest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guest_past_its_credit_is_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals_and_hostile_packets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_closes_connections, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_connect_line, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restore_sends_transport_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_path_is_refused, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
