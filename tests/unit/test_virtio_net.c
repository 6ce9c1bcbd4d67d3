/* Unit tests for virtio-net: a fake driver in fake guest RAM drives the device over the built-in peer, a scripted test backend and the socket backend. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <endian.h>
#include <errno.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fake_driver.h"
#include "backends/net_backend.h"
#include "devices/virtio_net.h"
#include "util/log.h"
#include "virtio/virtio_pci_common.h"
#include "core/evloop.h"

#define RAM_SIZE     (8u << 20)
#define HOLE_START   0xC0000000ull
#define HOLE_END     0x100000000ull
#define QSIZE        256u
#define MAXQ         16u
#define RING_GPA(q)  (0x10000u + (uint32_t)(q) * 0x8000u)
#define DESC_GPA(q)  RING_GPA(q)
#define AVAIL_GPA(q) (RING_GPA(q) + 0x1000u)
#define USED_GPA(q)  (RING_GPA(q) + 0x2000u)
#define CTRL_GPA     0x0a0000u    /* control commands and acks */
#define TX_GPA       0x100000u    /* 16 transmit slots of 128 KiB */
#define TX_SLOT      0x20000u
#define RX_GPA       0x400000u    /* receive buffers */
#define HDR          VIRTIO_NET_HDR_LEN

#define RD 0u
#define WR VIRTQ_DESC_F_WRITE
#define F(x) (1ull << (x))

static const uint8_t guest_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x00 };
static const uint8_t peer_mac[6] = NET_PEER_MAC;
#define GUEST_IP 0x0a00020fu

struct seg { uint64_t gpa; uint32_t len; uint16_t flags; };

/* A scripted backend: records what is sent, hands out injected frames. */
#define FAKE_FRAMES 8
struct fake {
	uint8_t *frame[FAKE_FRAMES];
	size_t len[FAKE_FRAMES];
	unsigned head, count;
	int send_ret;              /* what send returns (0: record the frame) */
	ssize_t recv_ret;          /* if not 0: what recv returns */
	uint8_t sent[70000];
	size_t sent_len;
	unsigned sends;
	unsigned offload_calls, offloads;
};

struct fx {
	uint8_t *ram;
	struct guest_mem gm;
	struct gsi_routes routes;
	struct bus mmio;
	struct virtio_net *net;
	struct fake *fake;
	uint16_t nq;                  /* queues the driver enabled */
	uint64_t offered;
	uint16_t qsize[MAXQ], avail_idx[MAXQ], used_seen[MAXQ], next_desc[MAXQ];
	unsigned tx_slot;
	uint32_t last_id, last_len;
	char dir[64];
	struct evloop loop;
	bool loop_up;
	pthread_t loop_thread;
	atomic_bool loop_stop, loop_running;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || !(f->ram = calloc(1, RAM_SIZE)) ||
	    guest_mem_init(&f->gm, f->ram, RAM_SIZE, HOLE_START, HOLE_END) ||
	    gsi_routes_init(&f->routes, -1) || bus_init(&f->mmio, "mmio"))
		return -1;
	for (unsigned q = 0; q < MAXQ; q++)
		f->qsize[q] = QSIZE;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (atomic_load(&f->loop_running)) {
		atomic_store(&f->loop_stop, true);
		pthread_join(f->loop_thread, NULL);
	}
	if (f->net) {
		virtio_net_destroy(f->net);
		free(f->net);
	}
	if (f->loop_up)
		evloop_destroy(&f->loop);
	if (f->dir[0])
		rmdir(f->dir);
	bus_destroy(&f->mmio);
	gsi_routes_destroy(&f->routes);
	free(f->ram);
	free(f);
	return 0;
}

/* ---- guest memory ---- */

static void wr16(struct fx *f, uint64_t gpa, uint16_t v) { v = htole16(v); memcpy(f->ram + gpa, &v, 2); }
static void wr32(struct fx *f, uint64_t gpa, uint32_t v) { v = htole32(v); memcpy(f->ram + gpa, &v, 4); }
static void wr64(struct fx *f, uint64_t gpa, uint64_t v) { v = htole64(v); memcpy(f->ram + gpa, &v, 8); }
static uint16_t rd16(struct fx *f, uint64_t gpa) { uint16_t v; memcpy(&v, f->ram + gpa, 2); return le16toh(v); }
static uint32_t rd32(struct fx *f, uint64_t gpa) { uint32_t v; memcpy(&v, f->ram + gpa, 4); return le32toh(v); }

/* ---- packets ---- */

static uint16_t get16be(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32be(const uint8_t *p) { return (uint32_t)get16be(p) << 16 | get16be(p + 2); }
static void put16be(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32be(uint8_t *p, uint32_t v) { put16be(p, (uint16_t)(v >> 16)); put16be(p + 2, (uint16_t)v); }

/* RFC 1071 sum, folded, not complemented. */
static uint16_t fold(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += get16be(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static bool csum_ok(const uint8_t *p, size_t len) { return fold(p, len, 0) == 0xffff; }

static bool udp_csum_ok(const uint8_t *ip)
{
	size_t n = get16be(ip + 20 + 4);
	uint8_t ph[12];
	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = 17;
	put16be(ph + 10, (uint16_t)n);
	return fold(ip + 20, n, fold(ph, 12, 0)) == 0xffff;
}

static size_t eth(uint8_t *p, const uint8_t *dst, uint16_t type)
{
	memcpy(p, dst, 6);
	memcpy(p + 6, guest_mac, 6);
	put16be(p + 12, type);
	return 14;
}

static size_t arp_request(uint8_t *p, uint32_t target)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	size_t n = eth(p, bcast, 0x0806);
	uint8_t *a = p + n;
	put16be(a, 1);
	put16be(a + 2, 0x0800);
	a[4] = 6;
	a[5] = 4;
	put16be(a + 6, 1);
	memcpy(a + 8, guest_mac, 6);
	put32be(a + 14, GUEST_IP);
	memset(a + 18, 0, 6);
	put32be(a + 24, target);
	return n + 28;
}

/* Ethernet + IPv4 (no options) to `dst` around `n` payload bytes already at p + 34. */
static size_t ipv4(uint8_t *p, uint8_t proto, uint32_t dst, size_t n)
{
	eth(p, peer_mac, 0x0800);
	uint8_t *ip = p + 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	put16be(ip + 2, (uint16_t)(20 + n));
	put16be(ip + 4, 0x1234);
	ip[8] = 64;
	ip[9] = proto;
	put32be(ip + 12, GUEST_IP);
	put32be(ip + 16, dst);
	put16be(ip + 10, (uint16_t)~fold(ip, 20, 0));
	return 34 + n;
}

static size_t icmp_echo(uint8_t *p, uint16_t id, uint16_t seq, size_t datalen)
{
	uint8_t *m = p + 34;
	m[0] = 8;
	m[1] = 0;
	put16be(m + 2, 0);
	put16be(m + 4, id);
	put16be(m + 6, seq);
	for (size_t i = 0; i < datalen; i++)
		m[8 + i] = (uint8_t)(i * 3 + seq);
	put16be(m + 2, (uint16_t)~fold(m, 8 + datalen, 0));
	return ipv4(p, 1, NET_PEER_IP, 8 + datalen);
}

static size_t udp(uint8_t *p, uint16_t sport, uint16_t dport, size_t datalen)
{
	uint8_t *u = p + 34;
	put16be(u, sport);
	put16be(u + 2, dport);
	put16be(u + 4, (uint16_t)(8 + datalen));
	put16be(u + 6, 0);
	for (size_t i = 0; i < datalen; i++)
		u[8 + i] = (uint8_t)(i ^ 0x5a);
	return ipv4(p, 17, NET_PEER_IP, 8 + datalen);
}

/* ---- the fake driver ---- */

static void cw(struct fx *f, uint64_t off, uint64_t v, uint32_t len) { vdrv_write(&f->net->pci, off, v, len); }
static uint64_t cr(struct fx *f, uint64_t off, uint32_t len) { return vdrv_read(&f->net->pci, off, len); }
static uint64_t cfg(struct fx *f, uint32_t off, uint32_t len) { return vdrv_config(&f->net->pci, off, len); }
static uint8_t dev_status(struct fx *f) { return (uint8_t)cr(f, VPCI_STATUS, 1); }

/* Resets the device and brings it up with every offered feature except
 * `drop`; enables the queues those features use (3, or 2 * pairs + 1 with MQ). */
static void drv_init(struct fx *f, uint64_t drop)
{
	f->offered = vdrv_negotiate(&f->net->pci, drop);
	uint64_t want = f->offered & ~drop;
	assert_true(dev_status(f) & VIRTIO_STATUS_FEATURES_OK);
	f->nq = (want & F(VIRTIO_NET_F_MQ)) ? (uint16_t)(2 * f->net->max_pairs + 1) : 3;
	for (uint16_t q = 0; q < f->nq; q++) {
		memset(f->ram + RING_GPA(q), 0, 0x8000);
		f->avail_idx[q] = f->used_seen[q] = f->next_desc[q] = 0;
		vdrv_enable_queue(&f->net->pci, q, f->qsize[q], DESC_GPA(q), AVAIL_GPA(q), USED_GPA(q));
		assert_int_equal(cr(f, VPCI_Q_ENABLE, 2), 1);
	}
	cw(f, VPCI_STATUS, 0x0f, 1);
	assert_int_equal(dev_status(f), 0x0f);
}

static void start_with(struct fx *f, struct net_backend *be, uint16_t queues, uint16_t mtu,
		       uint64_t drop)
{
	f->net = calloc(1, sizeof(*f->net));
	assert_non_null(f->net);
	struct virtio_net_opts o = { .queues = queues, .mtu = mtu };
	struct virtio_pci_config pc = { .mode = IRQ_MODE_MSIX, .vectors = -1 };
	struct pci_window win = { 0xC0000000ull, 0xE0000000ull };
	struct error err;
	int ret = virtio_net_init(f->net, 0, &o, be, &pc, &f->gm, -1, &f->routes,
				  f->loop_up ? &f->loop : NULL, &f->mmio, win, &err);
	if (ret)
		fprintf(stderr, "init: %s\n", err.msg);
	assert_int_equal(ret, 0);
	drv_init(f, drop);
}

static struct net_backend *open_peer(enum net_peer_mode mode, uint32_t rate, uint32_t size)
{
	struct net_open_cfg c = { .kind = NET_BE_PEER, .nqueues = 1, .peer_mode = mode,
				  .rate = rate, .size = size };
	struct net_backend *be;
	struct error err;
	assert_int_equal(net_backend_open(&be, &c, &err), 0);
	return be;
}

/* The device over a responder peer. */
static void start_peer(struct fx *f, uint16_t queues, uint64_t drop)
{
	start_with(f, open_peer(NET_PEER_RESPONDER, 0, 0), queues, 0, drop);
}

static void put_desc(struct fx *f, uint16_t q, uint16_t i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	uint64_t p = DESC_GPA(q) + (uint64_t)i * 16;
	wr64(f, p, addr);
	wr32(f, p + 8, len);
	wr16(f, p + 12, flags);
	wr16(f, p + 14, next);
}

static void publish(struct fx *f, uint16_t q, uint16_t head)
{
	wr16(f, AVAIL_GPA(q) + 4 + 2u * (f->avail_idx[q] % f->qsize[q]), head);
	f->avail_idx[q]++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr16(f, AVAIL_GPA(q) + 2, f->avail_idx[q]);
}

static uint16_t post(struct fx *f, uint16_t q, const struct seg *s, unsigned n)
{
	uint16_t size = f->qsize[q], head = f->next_desc[q];
	for (unsigned i = 0; i < n; i++) {
		uint16_t idx = (uint16_t)((head + i) % size), next = (uint16_t)((idx + 1) % size);
		put_desc(f, q, idx, s[i].gpa, s[i].len,
			 (uint16_t)(s[i].flags | (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0)), next);
	}
	f->next_desc[q] = (uint16_t)((head + n) % size);
	publish(f, q, head);
	return head;
}

static void kick(struct fx *f, uint16_t q) { virtio_pci_kick(&f->net->pci, q); }
static void poll_dev(struct fx *f) { virtio_net_poll(f->net); }

/* Takes the next used element of queue q, if any. */
static bool take_used(struct fx *f, uint16_t q)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (rd16(f, USED_GPA(q) + 2) == f->used_seen[q])
		return false;
	uint64_t e = USED_GPA(q) + 4 + 8u * (f->used_seen[q] % f->qsize[q]);
	f->last_id = rd32(f, e);
	f->last_len = rd32(f, e + 4);
	f->used_seen[q]++;
	return true;
}

/* Posts receive buffer `i` (gpa RX_GPA + i * 0x10000, `len` bytes) on queue q. */
static uint64_t rx_buf(unsigned i) { return RX_GPA + i * 0x10000u; }

static void rx_post(struct fx *f, uint16_t q, unsigned i, uint32_t len)
{
	memset(f->ram + rx_buf(i), 0xcc, len);
	struct seg s = { rx_buf(i), len, WR };
	post(f, q, &s, 1);
}

/* Sends `frame` with header `hdr` (NULL: zero) on transmit queue q; returns the chain's head. */
static uint16_t tx_hdr(struct fx *f, uint16_t q, const uint8_t *hdr, const uint8_t *frame,
		       size_t len)
{
	uint64_t gpa = TX_GPA + (f->tx_slot++ % 16) * TX_SLOT;
	memset(f->ram + gpa, 0, HDR);
	if (hdr)
		memcpy(f->ram + gpa, hdr, HDR);
	memcpy(f->ram + gpa + HDR, frame, len);
	struct seg s[] = { { gpa, HDR, RD }, { gpa + HDR, (uint32_t)len, RD } };
	uint16_t head = post(f, q, s, len ? 2 : 1);
	kick(f, q);
	return head;
}

static uint16_t tx(struct fx *f, const uint8_t *frame, size_t len)
{
	return tx_hdr(f, 1, NULL, frame, len);
}

/* The TX chain came back with a used length of 0. */
static void tx_done(struct fx *f, uint16_t q, uint16_t head)
{
	assert_true(take_used(f, q));
	assert_int_equal(f->last_id, head);
	assert_int_equal(f->last_len, 0);
}

/* Waits for one RX used element on queue q: the frame starts at buffer `i` + HDR. */
static const uint8_t *rx_frame(struct fx *f, uint16_t q, unsigned i, uint32_t *len)
{
	poll_dev(f);
	assert_true(take_used(f, q));
	assert_true(f->last_len >= HDR);
	*len = f->last_len - HDR;
	return f->ram + rx_buf(i) + HDR;
}

/* ---- config and features ---- */

static void test_config_and_features(void **state)
{
	struct fx *f = *state;
	start_peer(f, 1, 0);
	uint64_t want = F(VIRTIO_NET_F_MAC) | F(VIRTIO_NET_F_MTU) | F(VIRTIO_NET_F_STATUS) |
			F(VIRTIO_NET_F_MRG_RXBUF) | F(VIRTIO_NET_F_CTRL_VQ) | F(VIRTIO_F_VERSION_1) |
			F(VIRTIO_F_EVENT_IDX);
	assert_true((f->offered & want) == want);
	/* The peer carries no offloads and there is one pair: none of these. */
	uint64_t none = F(VIRTIO_NET_F_MQ) | F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM) |
			F(VIRTIO_NET_F_HOST_TSO4) | F(VIRTIO_NET_F_GUEST_TSO4) |
			F(VIRTIO_NET_F_HOST_TSO6) | F(VIRTIO_NET_F_GUEST_TSO6) |
			F(VIRTIO_NET_F_GUEST_UFO);
	assert_true((f->offered & none) == 0);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(cfg(f, i, 1), guest_mac[i]);
	assert_int_equal(cfg(f, 6, 2), VIRTIO_NET_S_LINK_UP);
	assert_int_equal(cfg(f, 8, 2), 1);
	assert_int_equal(cfg(f, 10, 2), 1500);
	assert_int_equal(cr(f, VPCI_NUM_QUEUES, 2), 3);
	assert_int_equal(f->net->pci.info.device_id, VIRTIO_ID_NET);
	assert_int_equal(f->net->pci.info.pci_class, 0x020000);
	assert_int_equal(f->net->pci.msix.nvec, 4);
	/* The config is read-only. */
	uint8_t junk[6] = { 1, 2, 3, 4, 5, 6 };
	pthread_mutex_lock(&f->net->pci.lock);
	f->net->pci.ops->config_write(f->net->pci.opaque, 0, junk, 6);
	pthread_mutex_unlock(&f->net->pci.lock);
	assert_int_equal(cfg(f, 0, 1), 0x52);
}

/* Creates device `index` over a responder peer with --net mtu=9000,mac=02:aa:bb:cc:dd:ee; the
 * driver has not touched it yet. */
static void init_mtu9000_mac(struct fx *f, unsigned index)
{
	f->net = calloc(1, sizeof(*f->net));
	assert_non_null(f->net);
	struct virtio_net_opts o = { .queues = 1, .mtu = 9000, .mac_set = true,
				     .mac = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee } };
	struct virtio_pci_config pc = { .mode = IRQ_MODE_MSIX, .vectors = -1 };
	struct pci_window win = { 0xC0000000ull, 0xE0000000ull };
	struct error err;
	assert_int_equal(virtio_net_init(f->net, index, &o, open_peer(NET_PEER_RESPONDER, 0, 0), &pc,
					 &f->gm, -1, &f->routes, NULL, &f->mmio, win, &err), 0);
}

/* 2.5.1: the MAC, status, pairs and MTU are readable through BAR0 before FEATURES_OK (Linux
 * reads the MTU while it validates features) and read the same afterwards. */
static void test_config_readable_before_features_ok(void **state)
{
	struct fx *f = *state;
	init_mtu9000_mac(f, 0);
	struct virtio_pci *t = &f->net->pci;
	vdrv_acknowledge(t);
	assert_int_equal(dev_status(f), VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER);
	uint64_t lo = vdrv_bar0_read(t, VPCI_DEVICE_OFF, 4), hi = vdrv_bar0_read(t, VPCI_DEVICE_OFF + 4, 2);
	assert_int_equal(lo, 0xccbbaa02u);
	assert_int_equal(hi, 0xeedd);
	uint64_t status = vdrv_bar0_read(t, VPCI_DEVICE_OFF + 6, 2);
	assert_int_equal(status, VIRTIO_NET_S_LINK_UP);
	assert_int_equal(vdrv_bar0_read(t, VPCI_DEVICE_OFF + 8, 2), 1);
	assert_int_equal(vdrv_bar0_read(t, VPCI_DEVICE_OFF + 10, 2), 9000);
	drv_init(f, 0);
	assert_int_equal(vdrv_bar0_read(t, VPCI_DEVICE_OFF, 4), lo);
	assert_int_equal(vdrv_bar0_read(t, VPCI_DEVICE_OFF + 4, 2), hi);
	assert_int_equal(vdrv_bar0_read(t, VPCI_DEVICE_OFF + 6, 2), status);
	assert_int_equal(vdrv_bar0_read(t, VPCI_DEVICE_OFF + 10, 2), 9000);
}

static void test_mac_and_mtu_options(void **state)
{
	struct fx *f = *state;
	init_mtu9000_mac(f, 3);
	drv_init(f, 0);
	assert_int_equal(cfg(f, 0, 1), 0x02);
	assert_int_equal(cfg(f, 5, 1), 0xee);
	assert_int_equal(cfg(f, 10, 2), 9000);
	assert_string_equal(f->net->name, "net3");
	/* A 9018-byte frame passes the size check, 9019 does not. */
	static uint8_t frame[9100];
	udp(frame, 1000, 9, 9018 - 42);
	tx_done(f, 1, tx(f, frame, 9018));
	tx_done(f, 1, tx(f, frame, 9019));
	assert_int_equal(f->net->stats.tx_frames, 1);
	assert_int_equal(f->net->stats.drops[VNET_DROP_TX_TOO_BIG], 1);
}

static void test_default_mac_per_index(void **state)
{
	struct fx *f = *state;
	f->net = calloc(1, sizeof(*f->net));
	struct virtio_net_opts o = { .queues = 1 };
	struct virtio_pci_config pc = { .mode = IRQ_MODE_MSIX, .vectors = -1 };
	struct pci_window win = { 0xC0000000ull, 0xE0000000ull };
	struct error err;
	assert_int_equal(virtio_net_init(f->net, 5, &o, open_peer(NET_PEER_RESPONDER, 0, 0), &pc,
					 &f->gm, -1, &f->routes, NULL, &f->mmio, win, &err), 0);
	uint8_t mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x05 };
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(cfg(f, i, 1), mac[i]);
	/* Out-of-range queue pairs are refused. */
	struct virtio_net *n2 = calloc(1, sizeof(*n2));
	o.queues = VIRTIO_NET_MAX_PAIRS + 1;
	assert_int_equal(virtio_net_init(n2, 1, &o, open_peer(NET_PEER_RESPONDER, 0, 0), &pc,
					 &f->gm, -1, &f->routes, NULL, &f->mmio, win, &err), -EINVAL);
	virtio_net_destroy(n2);
	free(n2);
}

/* ---- the peer answers ---- */

static void arp_round(struct fx *f)
{
	rx_post(f, 0, 0, 2048);
	uint8_t req[64];
	size_t n = arp_request(req, NET_PEER_IP);
	tx_done(f, 1, tx(f, req, n));
	uint32_t len;
	const uint8_t *r = rx_frame(f, 0, 0, &len);
	const uint8_t *h = r - HDR;
	assert_int_equal(h[0], 0);             /* flags */
	assert_int_equal(h[1], 0);             /* gso none */
	assert_int_equal(h[10] | h[11] << 8, 1); /* num_buffers, with or without MRG_RXBUF */
	assert_int_equal(len, 42);
	assert_memory_equal(r, guest_mac, 6);
	assert_memory_equal(r + 6, peer_mac, 6);
	assert_int_equal(get16be(r + 12), 0x0806);
	const uint8_t *a = r + 14;
	assert_int_equal(get16be(a), 1);
	assert_int_equal(get16be(a + 2), 0x0800);
	assert_int_equal(get16be(a + 6), 2);   /* reply */
	assert_memory_equal(a + 8, peer_mac, 6);
	assert_int_equal(get32be(a + 14), NET_PEER_IP);
	assert_memory_equal(a + 18, guest_mac, 6);
	assert_int_equal(get32be(a + 24), GUEST_IP);
}

static void test_arp_reply(void **state)
{
	struct fx *f = *state;
	start_peer(f, 1, 0);
	arp_round(f);
	assert_int_equal(f->net->stats.tx_frames, 1);
	assert_int_equal(f->net->stats.rx_frames, 1);
	assert_int_equal(f->net->stats.rx_bytes, 42);
	/* Without mergeable buffers the header is the same. */
	drv_init(f, F(VIRTIO_NET_F_MRG_RXBUF));
	arp_round(f);
	/* An ARP request for another address gets nothing. */
	rx_post(f, 0, 1, 2048);
	uint8_t req[64];
	tx_done(f, 1, tx(f, req, arp_request(req, 0x0a000203)));
	poll_dev(f);
	assert_false(take_used(f, 0));
}

static void test_icmp_echo(void **state)
{
	struct fx *f = *state;
	start_peer(f, 1, 0);
	rx_post(f, 0, 0, 2048);
	uint8_t req[1600];
	size_t n = icmp_echo(req, 0xbeef, 7, 56);
	tx_done(f, 1, tx(f, req, n));
	uint32_t len;
	const uint8_t *r = rx_frame(f, 0, 0, &len);
	assert_int_equal(len, n);
	assert_memory_equal(r, guest_mac, 6);
	assert_memory_equal(r + 6, peer_mac, 6);
	const uint8_t *ip = r + 14, *m = ip + 20;
	assert_int_equal(ip[0], 0x45);
	assert_int_equal(ip[9], 1);
	assert_true(csum_ok(ip, 20));
	assert_int_equal(get32be(ip + 12), NET_PEER_IP);
	assert_int_equal(get32be(ip + 16), GUEST_IP);
	assert_int_equal(m[0], 0);             /* echo reply */
	assert_int_equal(m[1], 0);
	assert_int_equal(get16be(m + 4), 0xbeef);
	assert_int_equal(get16be(m + 6), 7);
	assert_memory_equal(m + 8, req + 42, 56);
	assert_true(csum_ok(m, 8 + 56));
	/* An odd-length payload: the checksum still holds. */
	rx_post(f, 0, 1, 2048);
	n = icmp_echo(req, 1, 2, 1001);
	tx_done(f, 1, tx(f, req, n));
	r = rx_frame(f, 0, 1, &len);
	assert_int_equal(len, n);
	assert_true(csum_ok(r + 34, 8 + 1001));
	assert_memory_equal(r + 42, req + 42, 1001);
}

static void test_udp_echo(void **state)
{
	struct fx *f = *state;
	start_peer(f, 1, 0);
	rx_post(f, 0, 0, 2048);
	uint8_t req[1600];
	size_t n = udp(req, 40000, 7, 333);
	tx_done(f, 1, tx(f, req, n));
	uint32_t len;
	const uint8_t *r = rx_frame(f, 0, 0, &len);
	assert_int_equal(len, n);
	const uint8_t *ip = r + 14, *u = ip + 20;
	assert_true(csum_ok(ip, 20));
	assert_int_equal(get32be(ip + 16), GUEST_IP);
	assert_int_equal(get16be(u), 7);
	assert_int_equal(get16be(u + 2), 40000);
	assert_int_equal(get16be(u + 4), 8 + 333);
	assert_true(udp_csum_ok(ip));
	assert_memory_equal(u + 8, req + 42, 333);
	/* Another port, a bad IP checksum, a fragment: no answer, counted as ignored. */
	rx_post(f, 0, 1, 2048);
	n = udp(req, 40000, 9, 10);
	tx_done(f, 1, tx(f, req, n));
	n = udp(req, 40000, 7, 10);
	req[14 + 10] ^= 0xff;
	tx_done(f, 1, tx(f, req, n));
	n = udp(req, 40000, 7, 10);
	put16be(req + 14 + 6, 0x2000);      /* more fragments */
	put16be(req + 14 + 10, 0);
	put16be(req + 14 + 10, (uint16_t)~fold(req + 14, 20, 0));
	tx_done(f, 1, tx(f, req, n));
	poll_dev(f);
	assert_false(take_used(f, 0));
	struct net_be_stat st[NET_BE_MAX_STATS];
	unsigned k = net_backend_stats(f->net->be, st, NET_BE_MAX_STATS);
	uint64_t ignored = 0, echoes = 0;
	for (unsigned i = 0; i < k; i++) {
		if (!strcmp(st[i].name, "ignored"))
			ignored = st[i].value;
		if (!strcmp(st[i].name, "udp_echoes"))
			echoes = st[i].value;
	}
	assert_int_equal(ignored, 3);
	assert_int_equal(echoes, 1);
}

/* ---- size limits ---- */

static void test_tx_size_limits(void **state)
{
	struct fx *f = *state;
	start_peer(f, 1, 0);
	static uint8_t frame[2000];
	udp(frame, 1, 9, 1518 - 42);
	tx_done(f, 1, tx(f, frame, 1518));     /* MTU + Ethernet + VLAN: fine */
	tx_done(f, 1, tx(f, frame, 1519));     /* one more: dropped */
	tx_done(f, 1, tx(f, frame, 13));       /* shorter than an Ethernet header */
	assert_int_equal(f->net->stats.tx_frames, 1);
	assert_int_equal(f->net->stats.tx_bytes, 1518);
	assert_int_equal(f->net->stats.drops[VNET_DROP_TX_TOO_BIG], 1);
	assert_int_equal(f->net->stats.drops[VNET_DROP_TX_RUNT], 1);
	/* Offload flags that were not negotiated (nor offered). */
	uint8_t hdr[HDR] = { VIRTIO_NET_HDR_F_NEEDS_CSUM, 0, 0, 0, 0, 0, 34, 0, 6, 0 };
	tx_done(f, 1, tx_hdr(f, 1, hdr, frame, 100));
	uint8_t gso[HDR] = { 0, VIRTIO_NET_HDR_GSO_TCPV4 };
	tx_done(f, 1, tx_hdr(f, 1, gso, frame, 100));
	assert_int_equal(f->net->stats.drops[VNET_DROP_TX_BAD_HDR], 2);
	/* Flag bits the device does not know (or DATA_VALID, not the driver's to set) are
	 * ignored (5.1.6.2.2) and counted: the frame itself goes out. */
	uint64_t sent = f->net->stats.tx_frames;
	uint8_t valid[HDR] = { VIRTIO_NET_HDR_F_DATA_VALID };
	tx_done(f, 1, tx_hdr(f, 1, valid, frame, 100));
	uint8_t unknown[HDR] = { 0x80 | 0x08 };
	tx_done(f, 1, tx_hdr(f, 1, unknown, frame, 100));
	assert_int_equal(f->net->stats.drops[VNET_DROP_TX_BAD_HDR], 2);
	assert_int_equal(f->net->stats.tx_frames, sent + 2);
	assert_int_equal(f->net->stats.tx_flags_ignored, 2);
	/* None of this hurt the device. */
	assert_int_equal(dev_status(f), 0x0f);
	arp_round(f);
}

static void test_rx_too_big_without_mrg(void **state)
{
	struct fx *f = *state;
	start_peer(f, 1, F(VIRTIO_NET_F_MRG_RXBUF));
	rx_post(f, 0, 0, 100);
	uint8_t req[1600];
	size_t n = udp(req, 5, 7, 200);        /* the echo needs 12 + 242 bytes */
	tx_done(f, 1, tx(f, req, n));
	poll_dev(f);
	assert_false(take_used(f, 0));
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_TOO_BIG], 1);
	assert_int_equal(f->ram[rx_buf(0) + 99], 0xcc);   /* not truncated into the buffer */
	/* The buffer is still the device's: a small answer uses it. */
	n = udp(req, 5, 7, 30);                /* 12 + 72 bytes */
	tx_done(f, 1, tx(f, req, n));
	uint32_t len;
	const uint8_t *r = rx_frame(f, 0, 0, &len);
	assert_int_equal(len, n);
	assert_int_equal(get16be(r + 34 + 2), 5);
	assert_int_equal(f->net->stats.rx_frames, 1);
	/* Exactly the chain's size fits. */
	rx_post(f, 0, 1, 12 + 42 + 46);
	n = udp(req, 5, 7, 46 - 8);
	tx_done(f, 1, tx(f, req, n));
	r = rx_frame(f, 0, 1, &len);
	assert_int_equal(len, 42 + 38);
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_TOO_BIG], 1);
}

static void test_rx_mergeable(void **state)
{
	struct fx *f = *state;
	f->qsize[0] = 4;
	start_peer(f, 1, 0);
	for (unsigned i = 0; i < 4; i++)
		rx_post(f, 0, i, 128);
	uint8_t req[1600];
	/* 12 + 642 bytes need 6 buffers of 128: more than the whole ring holds. */
	size_t n = udp(req, 6, 7, 600);
	tx_done(f, 1, tx(f, req, n));
	poll_dev(f);
	assert_false(take_used(f, 0));
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_TOO_BIG], 1);
	assert_int_equal(f->net->pci.queues[0].vq.popped, 0);  /* every chain given back */
	/* 12 + 300 bytes: three buffers, num_buffers 3, the frame in order, published whole: one
	 * used->idx store for its three elements (a driver polling on another vCPU never sees the
	 * first buffer of a frame without the others). */
	const struct virtq *rxq = &f->net->pci.queues[0].vq;
	uint64_t stores = rxq->publishes;
	n = udp(req, 6, 7, 300 - 42);
	tx_done(f, 1, tx(f, req, n));
	poll_dev(f);
	assert_int_equal(rxq->publishes - stores, 1);
	assert_int_equal(rd16(f, USED_GPA(0) + 2), 3);
	uint32_t lens[3];
	for (unsigned i = 0; i < 3; i++) {
		assert_true(take_used(f, 0));
		assert_int_equal(f->last_id, i);
		lens[i] = f->last_len;
	}
	assert_int_equal(lens[0], 128);
	assert_int_equal(lens[1], 128);
	assert_int_equal(lens[2], 312 - 256);
	assert_int_equal(rd16(f, rx_buf(0) + 10), 3);
	uint8_t got[312];
	memcpy(got, f->ram + rx_buf(0), 128);
	memcpy(got + 128, f->ram + rx_buf(1), 128);
	memcpy(got + 256, f->ram + rx_buf(2), 56);
	assert_int_equal(get16be(got + HDR + 34 + 2), 6);          /* echoed back to port 6 */
	assert_memory_equal(got + HDR + 42, req + 42, 300 - 42);
	assert_true(udp_csum_ok(got + HDR + 14));
	/* The fourth buffer takes an ARP reply alone. */
	uint8_t arp[64];
	tx_done(f, 1, tx(f, arp, arp_request(arp, NET_PEER_IP)));
	poll_dev(f);
	assert_true(take_used(f, 0));
	assert_int_equal(f->last_id, 3);
	assert_int_equal(f->last_len, 12 + 42);
	assert_int_equal(rd16(f, rx_buf(3) + 10), 1);
	assert_int_equal(f->net->stats.rx_frames, 2);
	/* Two buffers for a frame that needs three, in a ring that could hold more:
	 * it waits, takes nothing, and goes out whole once the third is posted. */
	rx_post(f, 0, 0, 128);
	rx_post(f, 0, 1, 128);
	tx_done(f, 1, tx(f, req, udp(req, 8, 7, 300 - 42)));
	poll_dev(f);
	assert_false(take_used(f, 0));
	assert_int_equal(f->net->pci.queues[0].vq.popped, 4);
	assert_int_equal(f->net->stats.rx_stalls, 1);
	rx_post(f, 0, 2, 128);
	kick(f, 0);
	for (unsigned i = 0; i < 3; i++)
		assert_true(take_used(f, 0));
	assert_int_equal(rd16(f, rx_buf(0) + 10), 3);
	assert_int_equal(get16be(f->ram + rx_buf(0) + HDR + 34 + 2), 8);
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_TOO_BIG], 1);
}

/* ---- RX waits for buffers ---- */

static void test_rx_stall_recovery(void **state)
{
	struct fx *f = *state;
	start_peer(f, 1, 0);
	arp_round(f);                          /* one buffer used: the next available index is 1 */
	uint8_t frame[256];
	/* Three requests, no receive buffer: the answers wait. */
	tx_done(f, 1, tx(f, frame, arp_request(frame, NET_PEER_IP)));
	tx_done(f, 1, tx(f, frame, icmp_echo(frame, 1, 1, 8)));
	tx_done(f, 1, tx(f, frame, udp(frame, 77, 7, 4)));
	poll_dev(f);
	assert_false(take_used(f, 0));
	assert_int_equal(f->net->stats.rx_stalls, 1);
	assert_true(f->net->bq[0].stalled);
	assert_int_equal(f->net->bq[0].len, 12 + 42);     /* the ARP reply, staged */
	/* The device asked to be kicked at the next buffer (event index: avail_event). */
	assert_int_equal(rd16(f, USED_GPA(0) + 4 + 8 * QSIZE), 1);
	/* A buffer without a kick: a stalled queue is not read. */
	rx_post(f, 0, 0, 2048);
	poll_dev(f);
	assert_false(take_used(f, 0));
	/* The kick delivers. */
	kick(f, 0);
	assert_true(take_used(f, 0));
	assert_int_equal(f->last_len, 12 + 42);
	assert_int_equal(get16be(f->ram + rx_buf(0) + HDR + 12), 0x0806);
	rx_post(f, 0, 1, 2048);
	rx_post(f, 0, 2, 2048);
	kick(f, 0);
	assert_true(take_used(f, 0));
	assert_int_equal(f->ram[rx_buf(1) + HDR + 23], 1);   /* ICMP */
	assert_true(take_used(f, 0));
	assert_int_equal(f->ram[rx_buf(2) + HDR + 23], 17);  /* UDP */
	assert_false(take_used(f, 0));
	assert_int_equal(f->net->stats.rx_frames, 4);
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_TOO_BIG], 0);
	assert_false(f->net->bq[0].stalled);
	/* A reset drops what waits and nothing old reaches the new rings. */
	tx_done(f, 1, tx(f, frame, arp_request(frame, NET_PEER_IP)));
	tx_done(f, 1, tx(f, frame, arp_request(frame, NET_PEER_IP)));
	poll_dev(f);
	assert_true(take_used(f, 0) == false);
	drv_init(f, 0);
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_RESET], 1);
	rx_post(f, 0, 0, 2048);
	kick(f, 0);
	poll_dev(f);
	assert_true(take_used(f, 0));       /* the second reply was still in the peer */
	assert_false(take_used(f, 0));
}

/* ---- malformed chains ---- */

static void test_tx_without_header_needs_reset(void **state)
{
	struct fx *f = *state;
	start_peer(f, 1, 0);
	struct seg s = { TX_GPA, 8, RD };
	post(f, 1, &s, 1);
	kick(f, 1);
	assert_true(dev_status(f) & VIRTIO_STATUS_NEEDS_RESET);
	assert_false(take_used(f, 1));
	drv_init(f, 0);
	arp_round(f);
	/* A transmit chain with a device-writable buffer. */
	struct seg w[] = { { TX_GPA, 60, RD }, { RX_GPA, 16, WR } };
	post(f, 1, w, 2);
	kick(f, 1);
	assert_true(dev_status(f) & VIRTIO_STATUS_NEEDS_RESET);
	drv_init(f, 0);
	arp_round(f);
}

static void test_descriptor_loop_needs_reset(void **state)
{
	struct fx *f = *state;
	start_peer(f, 1, 0);
	/* TX: 0 -> 1 -> 0 ... */
	put_desc(f, 1, 0, TX_GPA, 12, VIRTQ_DESC_F_NEXT, 1);
	put_desc(f, 1, 1, TX_GPA + 12, 60, VIRTQ_DESC_F_NEXT, 0);
	publish(f, 1, 0);
	kick(f, 1);
	assert_true(dev_status(f) & VIRTIO_STATUS_NEEDS_RESET);
	assert_false(take_used(f, 1));
	drv_init(f, 0);
	/* RX: a looping receive chain is found when a frame arrives. */
	put_desc(f, 0, 0, RX_GPA, 1024, WR | VIRTQ_DESC_F_NEXT, 0);
	publish(f, 0, 0);
	kick(f, 0);
	uint8_t frame[64];
	tx_done(f, 1, tx(f, frame, arp_request(frame, NET_PEER_IP)));
	poll_dev(f);
	assert_true(dev_status(f) & VIRTIO_STATUS_NEEDS_RESET);
	assert_false(take_used(f, 0));
	drv_init(f, 0);
	arp_round(f);
}

static void test_rx_readable_buffer_needs_reset(void **state)
{
	struct fx *f = *state;
	start_peer(f, 1, 0);
	struct seg s = { RX_GPA, 2048, RD };
	post(f, 0, &s, 1);
	uint8_t frame[64];
	tx_done(f, 1, tx(f, frame, arp_request(frame, NET_PEER_IP)));
	poll_dev(f);
	assert_true(dev_status(f) & VIRTIO_STATUS_NEEDS_RESET);
	assert_false(take_used(f, 0));
	drv_init(f, 0);
	/* A buffer smaller than the header is as bad. */
	struct seg tiny = { RX_GPA, 8, WR };
	post(f, 0, &tiny, 1);
	tx_done(f, 1, tx(f, frame, arp_request(frame, NET_PEER_IP)));
	poll_dev(f);
	assert_true(dev_status(f) & VIRTIO_STATUS_NEEDS_RESET);
}

/* ---- control queue, multiqueue ---- */

/* Sends a control command on queue q; returns the ack byte (or -1 if none came). */
static int ctrl(struct fx *f, uint16_t q, uint8_t cls, uint8_t cmd, const uint8_t *data,
		uint32_t n)
{
	f->ram[CTRL_GPA] = cls;
	f->ram[CTRL_GPA + 1] = cmd;
	memcpy(f->ram + CTRL_GPA + 2, data, n);
	f->ram[CTRL_GPA + 0x1000] = 0xee;
	struct seg s[] = { { CTRL_GPA, 2 + n, RD }, { CTRL_GPA + 0x1000, 1, WR } };
	post(f, q, s, 2);
	kick(f, q);
	if (!take_used(f, q))
		return -1;
	return f->ram[CTRL_GPA + 0x1000];
}

static void test_multiqueue_and_control(void **state)
{
	struct fx *f = *state;
	start_peer(f, 4, 0);
	assert_true(f->offered & F(VIRTIO_NET_F_MQ));
	assert_int_equal(cfg(f, 8, 2), 4);
	assert_int_equal(cr(f, VPCI_NUM_QUEUES, 2), 9);
	assert_int_equal(f->net->pci.msix.nvec, 10);   /* config + one per queue */
	assert_int_equal(f->nq, 9);
	uint8_t two[2] = { 2, 0 }, zero[2] = { 0, 0 }, five[2] = { 5, 0 };
	assert_int_equal(ctrl(f, 8, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, two, 2),
			 VIRTIO_NET_OK);
	assert_int_equal(f->net->curr_pairs, 2);
	assert_int_equal(ctrl(f, 8, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, zero, 2),
			 VIRTIO_NET_ERR);
	assert_int_equal(ctrl(f, 8, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, five, 2),
			 VIRTIO_NET_ERR);
	assert_int_equal(ctrl(f, 8, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, two, 1),
			 VIRTIO_NET_ERR);
	assert_int_equal(ctrl(f, 8, 9 /* no such class */, 0, two, 1), VIRTIO_NET_ERR);
	assert_int_equal(f->net->curr_pairs, 2);
	assert_int_equal(f->net->stats.ctrl_ok, 1);
	assert_int_equal(f->net->stats.ctrl_err, 4);
	/* A frame sent on the second pair is answered on receiveq1 (the peer has one queue). */
	rx_post(f, 0, 0, 2048);
	uint8_t frame[64];
	tx_done(f, 3, tx_hdr(f, 3, NULL, frame, arp_request(frame, NET_PEER_IP)));
	poll_dev(f);
	assert_true(take_used(f, 0));
	assert_int_equal(f->last_len, 12 + 42);
	/* A command without an ack byte: reset. */
	struct seg s = { CTRL_GPA, 4, RD };
	post(f, 8, &s, 1);
	kick(f, 8);
	assert_true(dev_status(f) & VIRTIO_STATUS_NEEDS_RESET);
	/* Without MQ the control queue is queue 2 and VQ_PAIRS_SET is refused. */
	drv_init(f, F(VIRTIO_NET_F_MQ));
	assert_int_equal(f->net->curr_pairs, 1);
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_MQ, VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET, two, 2),
			 VIRTIO_NET_ERR);
	arp_round(f);
}

/* ---- a scripted backend: errors and offload headers ---- */

static int fake_send(struct net_backend *b, unsigned q, const struct iovec *iov, int iovcnt)
{
	struct fake *k = b->priv;
	k->sends++;
	if (k->send_ret)
		return k->send_ret;
	k->sent_len = 0;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(k->sent + k->sent_len, iov[i].iov_base, iov[i].iov_len);
		k->sent_len += iov[i].iov_len;
	}
	return 0;
}

static ssize_t fake_recv(struct net_backend *b, unsigned q, void *buf, size_t len)
{
	struct fake *k = b->priv;
	if (k->recv_ret)
		return k->recv_ret;
	if (!k->count)
		return -EAGAIN;
	unsigned i = k->head;
	k->head = (k->head + 1) % FAKE_FRAMES;
	k->count--;
	if (k->len[i] > len)
		return -EMSGSIZE;
	memcpy(buf, k->frame[i], k->len[i]);
	return (ssize_t)k->len[i];
}

static int fake_set_offload(struct net_backend *b, unsigned flags)
{
	struct fake *k = b->priv;
	k->offload_calls++;
	k->offloads = flags;
	return 0;
}

static void fake_close(struct net_backend *b)
{
	struct fake *k = b->priv;
	for (unsigned i = 0; i < FAKE_FRAMES; i++)
		free(k->frame[i]);
	free(k);
}

static const struct net_backend_ops fake_ops = {
	.send = fake_send, .recv = fake_recv, .set_offload = fake_set_offload, .close = fake_close,
};

static struct net_backend *open_fake(struct fx *f, uint32_t hdr_len, unsigned offloads)
{
	struct net_backend *be = net_backend_alloc();
	assert_non_null(be);
	f->fake = calloc(1, sizeof(*f->fake));
	assert_non_null(f->fake);
	be->ops = &fake_ops;
	be->priv = f->fake;
	be->kind = "fake";
	be->nqueues = 1;
	be->hdr_len = hdr_len;
	be->offloads = offloads;
	return be;
}

static void inject(struct fx *f, const uint8_t *data, size_t len)
{
	struct fake *k = f->fake;
	unsigned i = (k->head + k->count) % FAKE_FRAMES;
	free(k->frame[i]);
	k->frame[i] = malloc(len);
	memcpy(k->frame[i], data, len);
	k->len[i] = len;
	k->count++;
}

/* Injects a 60-byte frame for `dst` through the fake backend; true if it reached buffer 0. */
static bool rx_to(struct fx *f, const uint8_t *dst)
{
	uint8_t frame[60] = { 0 };
	memcpy(frame, dst, 6);
	memcpy(frame + 6, peer_mac, 6);
	frame[12] = 0x08;
	rx_post(f, 0, 0, 2048);
	kick(f, 0);
	inject(f, frame, sizeof(frame));
	poll_dev(f);
	if (!take_used(f, 0))
		return false;
	assert_memory_equal(f->ram + rx_buf(0) + HDR, dst, 6);
	return true;
}

/* CTRL_RX and CTRL_MAC: promiscuous after reset; with it off, only the station address,
 * broadcast, and the multicast the driver asked for; malformed tables change nothing. */
static void test_ctrl_rx_filter(void **state)
{
	struct fx *f = *state;
	start_with(f, open_fake(f, 0, 0), 1, 0, 0);
	assert_true(f->offered & F(VIRTIO_NET_F_CTRL_RX));
	const uint8_t other[6] = { 0x02, 0, 0, 0, 0, 9 }, bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	const uint8_t mc1[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 }, mc2[6] = { 0x33, 0x33, 0, 0, 0, 1 };
	assert_true(rx_to(f, other));                           /* promiscuous after reset */
	uint8_t off = 0, one = 1;
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, &off, 1),
			 VIRTIO_NET_OK);
	assert_false(rx_to(f, other));
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_FILTERED], 1);
	assert_true(rx_to(f, guest_mac));
	assert_true(rx_to(f, bcast));
	assert_false(rx_to(f, mc1));
	/* TABLE_SET: one unicast (other), one multicast (mc1). */
	uint8_t t[4 + 6 + 4 + 6];
	uint32_t le1 = htole32(1);
	memcpy(t, &le1, 4);
	memcpy(t + 4, other, 6);
	memcpy(t + 10, &le1, 4);
	memcpy(t + 14, mc1, 6);
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_TABLE_SET, t, sizeof(t)),
			 VIRTIO_NET_OK);
	assert_true(rx_to(f, other));
	assert_true(rx_to(f, mc1));
	assert_false(rx_to(f, mc2));
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_ALLMULTI, &one, 1),
			 VIRTIO_NET_OK);
	assert_true(rx_to(f, mc2));
	/* Malformed: an entry count past the data, trailing bytes, a wrong length for PROMISC. */
	uint32_t huge = htole32(1000);
	uint8_t bad[14];
	memcpy(bad, &huge, 4);
	memset(bad + 4, 0, 10);
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_TABLE_SET, bad, 14),
			 VIRTIO_NET_ERR);
	uint8_t trail[sizeof(t) + 1];
	memcpy(trail, t, sizeof(t));
	trail[sizeof(t)] = 0;
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_TABLE_SET, trail,
			      sizeof(trail)), VIRTIO_NET_ERR);
	uint8_t two[2] = { 1, 1 };
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, two, 2),
			 VIRTIO_NET_ERR);
	assert_true(rx_to(f, other));                           /* the table is unchanged */
	/* A table longer than the device keeps: that class is accepted whole. */
	static uint8_t big[4 + 6 * (VIRTIO_NET_MAC_TABLE_MAX + 1) + 4];
	uint32_t n = htole32(VIRTIO_NET_MAC_TABLE_MAX + 1), z = 0;
	memcpy(big, &n, 4);
	for (unsigned i = 0; i <= VIRTIO_NET_MAC_TABLE_MAX; i++) {
		uint8_t m[6] = { 0x02, 1, 0, 0, 0, (uint8_t)i };
		memcpy(big + 4 + 6 * i, m, 6);
	}
	memcpy(big + sizeof(big) - 4, &z, 4);
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_TABLE_SET, big,
			      sizeof(big)), VIRTIO_NET_OK);
	const uint8_t unlisted[6] = { 0x02, 7, 7, 7, 7, 7 };
	assert_true(rx_to(f, unlisted));
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_ALLMULTI, &off, 1),
			 VIRTIO_NET_OK);
	assert_false(rx_to(f, mc1));                            /* the multicast table is empty now */
	/* Reset: promiscuous again, and the MAC tables empty (5.1.6.5.2): an address the table held
	 * before is filtered once promiscuous mode is off again. */
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_TABLE_SET, t, sizeof(t)),
			 VIRTIO_NET_OK);
	assert_true(rx_to(f, other));
	assert_true(rx_to(f, mc1));
	drv_init(f, 0);
	assert_true(rx_to(f, mc2));
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, &off, 1),
			 VIRTIO_NET_OK);
	assert_false(rx_to(f, other));
	assert_false(rx_to(f, mc1));
	assert_true(rx_to(f, guest_mac));
	/* Without CTRL_RX negotiated the commands fail and nothing is filtered. */
	drv_init(f, F(VIRTIO_NET_F_CTRL_RX));
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, &off, 1),
			 VIRTIO_NET_ERR);
	assert_true(rx_to(f, other));
	assert_int_equal(dev_status(f), 0x0f);
}

/* CTRL_MAC_ADDR: ADDR_SET changes the station address (config and filter); a multicast
 * address or a wrong length is refused; reset restores the configured one. */
static void test_ctrl_mac_addr(void **state)
{
	struct fx *f = *state;
	start_with(f, open_fake(f, 0, 0), 1, 0, 0);
	assert_true(f->offered & F(VIRTIO_NET_F_CTRL_MAC_ADDR));
	const uint8_t mac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	const uint8_t mcast[6] = { 0x03, 0x11, 0x22, 0x33, 0x44, 0x55 };
	uint8_t gen = (uint8_t)cr(f, VPCI_CFG_GEN, 1);
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_ADDR_SET, mac, 6),
			 VIRTIO_NET_OK);
	assert_int_equal((uint8_t)cr(f, VPCI_CFG_GEN, 1), (uint8_t)(gen + 1)); /* mac changed */
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(cfg(f, i, 1), mac[i]);
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_ADDR_SET, mcast, 6),
			 VIRTIO_NET_ERR);
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_ADDR_SET, mac, 5),
			 VIRTIO_NET_ERR);
	uint8_t off = 0;
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, &off, 1),
			 VIRTIO_NET_OK);
	assert_true(rx_to(f, mac));                             /* the new address is ours */
	assert_false(rx_to(f, guest_mac));                      /* the old one no longer */
	drv_init(f, 0);
	assert_int_equal(cfg(f, 5, 1), guest_mac[5]);
	drv_init(f, F(VIRTIO_NET_F_CTRL_MAC_ADDR));
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_ADDR_SET, mac, 6),
			 VIRTIO_NET_ERR);
}

/* CTRL_GUEST_OFFLOADS (what `ethtool -K eth0 rx-gro-hw off` sends): the backend follows, frames
 * with a switched-off offload are no longer passed; bits not negotiated are refused. */
static void test_ctrl_guest_offloads(void **state)
{
	struct fx *f = *state;
	unsigned all = NET_OFFLOAD_CSUM | NET_OFFLOAD_TSO4 | NET_OFFLOAD_TSO6 | NET_OFFLOAD_ECN;
	start_with(f, open_fake(f, HDR, all), 1, 0, 0);
	assert_true(f->offered & F(VIRTIO_NET_F_CTRL_GUEST_OFFLOADS));
	rx_post(f, 0, 0, 0x10000);
	kick(f, 0);
	assert_int_equal(f->fake->offloads, all);
	uint64_t csum_only = htole64(F(VIRTIO_NET_F_GUEST_CSUM));
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_GUEST_OFFLOADS,
			      VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET, (uint8_t *)&csum_only, 8),
			 VIRTIO_NET_OK);
	uint8_t in[200] = { VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_GSO_TCPV4, 54, 0, 0xb4, 0x05,
			    34, 0, 16, 0, 0, 0 };
	inject(f, in, sizeof(in));                              /* a TSO frame: no longer wanted */
	poll_dev(f);
	assert_int_equal(f->fake->offloads, NET_OFFLOAD_CSUM);
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_BAD_HDR], 1);
	in[1] = VIRTIO_NET_HDR_GSO_NONE;                        /* checksum offload still on */
	inject(f, in, sizeof(in));
	poll_dev(f);
	assert_true(take_used(f, 0));
	assert_int_equal(f->ram[rx_buf(0)], VIRTIO_NET_HDR_F_NEEDS_CSUM);
	/* Bits not negotiated, a wrong length: refused, state unchanged. */
	uint64_t ufo = htole64(F(VIRTIO_NET_F_GUEST_UFO));
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_GUEST_OFFLOADS,
			      VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET, (uint8_t *)&ufo, 8), VIRTIO_NET_ERR);
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_GUEST_OFFLOADS,
			      VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET, (uint8_t *)&csum_only, 4),
			 VIRTIO_NET_ERR);
	uint64_t none = 0;
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_GUEST_OFFLOADS,
			      VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET, (uint8_t *)&none, 8), VIRTIO_NET_OK);
	rx_post(f, 0, 0, 0x10000);
	kick(f, 0);
	assert_int_equal(f->fake->offloads, 0);
	/* A reset gives the negotiated offloads back. */
	drv_init(f, 0);
	rx_post(f, 0, 0, 0x10000);
	kick(f, 0);
	assert_int_equal(f->fake->offloads, all);
}

/* F_MTU: no non-GSO frame longer than MTU + 18 reaches the driver (5.1.6.3); the MTU offered
 * follows the host interface's unless mtu= says otherwise. */
static void test_rx_mtu(void **state)
{
	struct fx *f = *state;
	struct net_backend *be = open_fake(f, 0, 0);
	be->mtu = 1400;
	start_with(f, be, 1, 0, 0);
	assert_int_equal(cfg(f, 10, 2), 1400);
	static uint8_t frame[2000];
	memcpy(frame, guest_mac, 6);
	rx_post(f, 0, 0, 4096);
	kick(f, 0);
	inject(f, frame, 1400 + 18 + 1);
	poll_dev(f);
	assert_false(take_used(f, 0));
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_OVER_MTU], 1);
	inject(f, frame, 1400 + 18);
	poll_dev(f);
	assert_true(take_used(f, 0));
	assert_int_equal(f->last_len, HDR + 1418);
	/* Without F_MTU negotiated the driver was promised nothing: the frame passes. */
	drv_init(f, F(VIRTIO_NET_F_MTU));
	rx_post(f, 0, 0, 4096);
	kick(f, 0);
	inject(f, frame, 1500);
	poll_dev(f);
	assert_true(take_used(f, 0));
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_OVER_MTU], 1);
}

/* mtu= wins over the host interface's MTU. */
static void test_mtu_option_over_backend(void **state)
{
	struct fx *f = *state;
	struct net_backend *be = open_fake(f, 0, 0);
	be->mtu = 9000;
	start_with(f, be, 1, 1500, 0);
	assert_int_equal(cfg(f, 10, 2), 1500);
}

static void test_backend_errors(void **state)
{
	struct fx *f = *state;
	start_with(f, open_fake(f, 0, 0), 1, 0, 0);
	uint8_t frame[128];
	size_t n = udp(frame, 1, 2, 20);
	tx_done(f, 1, tx(f, frame, n));
	assert_int_equal(f->fake->sent_len, n);               /* no header for this backend */
	assert_memory_equal(f->fake->sent, frame, n);
	/* The backend went away: frames are dropped and counted, the device works on. */
	f->fake->send_ret = -ENODEV;
	tx_done(f, 1, tx(f, frame, n));
	tx_done(f, 1, tx(f, frame, n));
	assert_int_equal(f->net->stats.drops[VNET_DROP_TX_BACKEND], 2);
	assert_int_equal(f->net->stats.tx_frames, 1);
	assert_int_equal(dev_status(f), 0x0f);
	/* A receive error ends reading that queue (no busy loop), nothing else. */
	rx_post(f, 0, 0, 2048);
	kick(f, 0);
	f->fake->recv_ret = -ENODEV;
	poll_dev(f);
	assert_true(f->net->bq[0].dead);
	f->fake->recv_ret = 0;
	inject(f, frame, n);
	poll_dev(f);
	kick(f, 0);
	assert_false(take_used(f, 0));
	f->fake->send_ret = 0;
	tx_done(f, 1, tx(f, frame, n));
	assert_int_equal(f->net->stats.tx_frames, 2);
	assert_int_equal(dev_status(f), 0x0f);
}

static void test_backend_frames_and_limits(void **state)
{
	struct fx *f = *state;
	start_with(f, open_fake(f, 0, 0), 1, 0, 0);
	rx_post(f, 0, 0, 2048);
	kick(f, 0);
	static uint8_t frame[70000];
	memset(frame, 0x11, sizeof(frame));
	inject(f, frame, 10);                  /* a runt: dropped */
	inject(f, frame, 1514);
	poll_dev(f);
	assert_true(take_used(f, 0));
	assert_int_equal(f->last_len, 12 + 1514);
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_BAD_HDR], 1);
	/* Longer than the staging buffer: the backend drops it (-EMSGSIZE), counted. */
	inject(f, frame, sizeof(frame));
	poll_dev(f);
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_TOO_BIG], 1);
	/* Many segments are copied, not passed as they are. */
	uint64_t gpa = TX_GPA;
	memset(f->ram + gpa, 0, HDR);
	struct seg s[VIRTIO_NET_TX_IOV + 2];
	s[0] = (struct seg){ gpa, HDR, RD };
	for (unsigned i = 0; i <= VIRTIO_NET_TX_IOV; i++) {
		f->ram[gpa + 0x100 + i * 16] = (uint8_t)i;
		s[i + 1] = (struct seg){ gpa + 0x100 + i * 16, 1, RD };
	}
	uint16_t head = post(f, 1, s, VIRTIO_NET_TX_IOV + 2);
	kick(f, 1);
	tx_done(f, 1, head);
	assert_int_equal(f->fake->sent_len, VIRTIO_NET_TX_IOV + 1);
	for (unsigned i = 0; i <= VIRTIO_NET_TX_IOV; i++)
		assert_int_equal(f->fake->sent[i], i);
}

static void test_offload_header(void **state)
{
	struct fx *f = *state;
	unsigned all = NET_OFFLOAD_CSUM | NET_OFFLOAD_TSO4 | NET_OFFLOAD_TSO6 | NET_OFFLOAD_ECN;
	start_with(f, open_fake(f, HDR, all), 1, 0, 0);
	uint64_t want = F(VIRTIO_NET_F_CSUM) | F(VIRTIO_NET_F_GUEST_CSUM) |
			F(VIRTIO_NET_F_HOST_TSO4) | F(VIRTIO_NET_F_GUEST_TSO4) |
			F(VIRTIO_NET_F_HOST_TSO6) | F(VIRTIO_NET_F_GUEST_TSO6) |
			F(VIRTIO_NET_F_HOST_ECN) | F(VIRTIO_NET_F_GUEST_ECN);
	assert_true((f->offered & want) == want);
	assert_false(f->offered & F(VIRTIO_NET_F_GUEST_UFO));
	/* TX: a TSO frame longer than the MTU passes with its header. */
	static uint8_t frame[70000];
	memset(frame, 0x22, sizeof(frame));
	uint8_t tso[HDR] = { VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_GSO_TCPV4, 54, 0,
			     0xb4, 0x05, 34, 0, 16, 0, 0x77, 0x77 };
	tx_done(f, 1, tx_hdr(f, 1, tso, frame, 30000));
	assert_int_equal(f->fake->sent_len, HDR + 30000);
	assert_memory_equal(f->fake->sent, tso, 10);
	assert_int_equal(f->fake->sent[10] | f->fake->sent[11], 0);  /* num_buffers cleared */
	tx_done(f, 1, tx_hdr(f, 1, tso, frame, VIRTIO_NET_GSO_FRAME_MAX + 1));
	assert_int_equal(f->net->stats.drops[VNET_DROP_TX_TOO_BIG], 1);
	uint8_t bad[HDR] = { VIRTIO_NET_HDR_F_NEEDS_CSUM, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0 };
	tx_done(f, 1, tx_hdr(f, 1, bad, frame, 100));  /* checksum position past the end */
	uint8_t nocsum[HDR] = { 0, VIRTIO_NET_HDR_GSO_TCPV6, 0, 0, 0xb4, 0x05 };
	tx_done(f, 1, tx_hdr(f, 1, nocsum, frame, 100));  /* GSO without NEEDS_CSUM */
	assert_int_equal(f->net->stats.drops[VNET_DROP_TX_BAD_HDR], 2);
	/* RX: the driver's offloads were handed to the backend when it first read. */
	rx_post(f, 0, 0, 0x10000);
	kick(f, 0);
	assert_int_equal(f->fake->offloads, all);
	uint8_t in[200] = { VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_GSO_TCPV4, 54, 0, 0xb4, 0x05,
			    34, 0, 16, 0, 0x99, 0x99 };
	memset(in + HDR, 0x33, sizeof(in) - HDR);
	inject(f, in, sizeof(in));
	poll_dev(f);
	assert_true(take_used(f, 0));
	assert_int_equal(f->last_len, sizeof(in));
	assert_memory_equal(f->ram + rx_buf(0), in, 10);
	assert_int_equal(rd16(f, rx_buf(0) + 10), 1);
	/* A driver without GUEST_TSO4 / GUEST_CSUM: such frames are dropped, DATA_VALID cleared. */
	drv_init(f, F(VIRTIO_NET_F_GUEST_TSO4) | F(VIRTIO_NET_F_GUEST_CSUM) |
		    F(VIRTIO_NET_F_GUEST_TSO6) | F(VIRTIO_NET_F_GUEST_ECN));
	assert_int_equal(f->fake->offloads, 0);     /* the reset took them back */
	rx_post(f, 0, 0, 0x10000);
	kick(f, 0);
	inject(f, in, sizeof(in));
	in[0] = VIRTIO_NET_HDR_F_DATA_VALID;
	in[1] = 0;
	inject(f, in, sizeof(in));
	poll_dev(f);
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_BAD_HDR], 1);
	assert_true(take_used(f, 0));
	assert_int_equal(f->ram[rx_buf(0)], 0);    /* DATA_VALID not passed on */
}

/* 2.2.1 / 5.1.3.1: no feature is offered without the feature it depends on, whatever offloads
 * the backend claims (including ECN or TSO without checksum offload) and with one or two pairs. */
static void assert_feature_deps(uint64_t o)
{
	const struct { int feat, needs, or_needs; } deps[] = {
		{ VIRTIO_NET_F_HOST_TSO4, VIRTIO_NET_F_CSUM, -1 },
		{ VIRTIO_NET_F_HOST_TSO6, VIRTIO_NET_F_CSUM, -1 },
		{ 14 /* HOST_UFO */, VIRTIO_NET_F_CSUM, -1 },
		{ VIRTIO_NET_F_HOST_ECN, VIRTIO_NET_F_HOST_TSO4, VIRTIO_NET_F_HOST_TSO6 },
		{ VIRTIO_NET_F_GUEST_TSO4, VIRTIO_NET_F_GUEST_CSUM, -1 },
		{ VIRTIO_NET_F_GUEST_TSO6, VIRTIO_NET_F_GUEST_CSUM, -1 },
		{ VIRTIO_NET_F_GUEST_UFO, VIRTIO_NET_F_GUEST_CSUM, -1 },
		{ VIRTIO_NET_F_GUEST_ECN, VIRTIO_NET_F_GUEST_TSO4, VIRTIO_NET_F_GUEST_TSO6 },
		{ VIRTIO_NET_F_CTRL_RX, VIRTIO_NET_F_CTRL_VQ, -1 },
		{ 19 /* CTRL_VLAN */, VIRTIO_NET_F_CTRL_VQ, -1 },
		{ 21 /* GUEST_ANNOUNCE */, VIRTIO_NET_F_CTRL_VQ, -1 },
		{ VIRTIO_NET_F_MQ, VIRTIO_NET_F_CTRL_VQ, -1 },
		{ VIRTIO_NET_F_CTRL_MAC_ADDR, VIRTIO_NET_F_CTRL_VQ, -1 },
		{ VIRTIO_NET_F_CTRL_GUEST_OFFLOADS, VIRTIO_NET_F_CTRL_VQ, -1 },
	};
	for (size_t i = 0; i < sizeof(deps) / sizeof(deps[0]); i++) {
		if (!(o & F(deps[i].feat)))
			continue;
		bool met = (o & F(deps[i].needs)) || (deps[i].or_needs >= 0 && (o & F(deps[i].or_needs)));
		if (!met)
			fail_msg("feature %d offered without %d (offered 0x%llx)", deps[i].feat,
				 deps[i].needs, (unsigned long long)o);
	}
}

static void test_feature_dependencies(void **state)
{
	struct fx *f = *state;
	const unsigned C = NET_OFFLOAD_CSUM, T4 = NET_OFFLOAD_TSO4, T6 = NET_OFFLOAD_TSO6,
		       E = NET_OFFLOAD_ECN;
	const unsigned sets[] = { 0, C, C | T4, C | T6, C | E, C | T4 | T6 | E, T4 | T6 | E, E, T4 | E };
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		for (uint16_t pairs = 1; pairs <= 2; pairs++) {
			struct net_backend *be = open_fake(f, HDR, sets[i]);
			be->nqueues = pairs;
			start_with(f, be, pairs, 0, 0);
			assert_feature_deps(f->offered);
			virtio_net_destroy(f->net);
			free(f->net);
			f->net = NULL;
		}
	}
}

/* 5.1.6.4.1: frames from the backend reach the driver only with header bits it accepts: an ECN
 * GSO frame is dropped without GUEST_ECN (a SHOULD NOT), RSC_INFO (bit 2) is never passed on
 * (RSC_EXT is never offered), and a VLAN-tagged frame for the station address passes the
 * filter with promiscuous mode off (5.1.6.5.3: no CTRL_VLAN, so no VLAN filtering). */
static void test_rx_header_bits_and_vlan(void **state)
{
	struct fx *f = *state;
	start_with(f, open_fake(f, HDR, NET_OFFLOAD_CSUM | NET_OFFLOAD_TSO4), 1, 0, 0);
	assert_false(f->offered & F(VIRTIO_NET_F_GUEST_ECN));
	assert_false(f->offered & (1ull << 61)); /* RSC_EXT */
	uint8_t in[200] = { VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_GSO_TCPV4 | VIRTIO_NET_HDR_GSO_ECN,
			    54, 0, 0xb4, 0x05, 34, 0, 16, 0, 0, 0 };
	memcpy(in + HDR, guest_mac, 6);
	memcpy(in + HDR + 6, peer_mac, 6);
	in[HDR + 12] = 0x08;
	rx_post(f, 0, 0, 0x10000);
	kick(f, 0);
	inject(f, in, sizeof(in));
	poll_dev(f);
	assert_false(take_used(f, 0));
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_BAD_HDR], 1);
	in[0] = VIRTIO_NET_HDR_F_DATA_VALID | 4 /* RSC_INFO */;
	in[1] = VIRTIO_NET_HDR_GSO_NONE;
	inject(f, in, sizeof(in));
	poll_dev(f);
	assert_true(take_used(f, 0));
	assert_int_equal(f->ram[rx_buf(0)], VIRTIO_NET_HDR_F_DATA_VALID);
	/* VLAN: promiscuous off; tagged frames for the station pass, for another address do not. */
	uint8_t off = 0;
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_RX, VIRTIO_NET_CTRL_RX_PROMISC, &off, 1),
			 VIRTIO_NET_OK);
	uint8_t tagged[HDR + 64] = { 0 };
	memcpy(tagged + HDR, guest_mac, 6);
	memcpy(tagged + HDR + 6, peer_mac, 6);
	tagged[HDR + 12] = 0x81; /* 802.1Q, VLAN 5, then IPv4 */
	tagged[HDR + 15] = 5;
	tagged[HDR + 16] = 0x08;
	rx_post(f, 0, 0, 0x10000);
	kick(f, 0);
	inject(f, tagged, sizeof(tagged));
	poll_dev(f);
	assert_true(take_used(f, 0));
	assert_int_equal(f->ram[rx_buf(0) + HDR + 12], 0x81);
	tagged[HDR + 5] ^= 1; /* another station */
	rx_post(f, 0, 0, 0x10000);
	kick(f, 0);
	inject(f, tagged, sizeof(tagged));
	poll_dev(f);
	assert_false(take_used(f, 0));
	assert_int_equal(f->net->stats.drops[VNET_DROP_RX_FILTERED], 1);
}

/* 5.1.6.2.2: the device relies neither on hdr_len (a hint: a wrong one still sends the frame as
 * it came) nor, without NEEDS_CSUM, on the packet's checksum (a frame with a wrong UDP checksum
 * goes out unchanged). */
static void test_tx_trusts_neither_hdr_len_nor_checksum(void **state)
{
	struct fx *f = *state;
	start_with(f, open_fake(f, HDR, NET_OFFLOAD_CSUM | NET_OFFLOAD_TSO4), 1, 0, 0);
	static uint8_t frame[3000];
	memset(frame, 0x44, sizeof(frame));
	const uint16_t lens[] = { 0, 1, 0xffff };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint8_t tso[HDR] = { VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_GSO_TCPV4,
				     (uint8_t)lens[i], (uint8_t)(lens[i] >> 8), 0xb4, 0x05, 34, 0, 16, 0 };
		tx_done(f, 1, tx_hdr(f, 1, tso, frame, sizeof(frame)));
		assert_int_equal(f->fake->sent_len, HDR + sizeof(frame));
		assert_memory_equal(f->fake->sent, tso, 10);
	}
	uint8_t p[128];
	size_t n = udp(p, 1000, 9, 40);
	put16be(p + 34 + 6, 0x1234); /* a UDP checksum that does not match */
	assert_false(udp_csum_ok(p + 14));
	tx_done(f, 1, tx(f, p, n));
	assert_int_equal(f->fake->sent_len, HDR + n);
	assert_memory_equal(f->fake->sent + HDR, p, n);
	assert_int_equal(f->net->stats.drops[VNET_DROP_TX_BAD_HDR], 0);
}

/* 5.1.4.1: the MTU the device reports never changes: not across a reset, a renegotiation
 * without VIRTIO_NET_F_MTU, or a MAC change. */
static void test_mtu_never_changes(void **state)
{
	struct fx *f = *state;
	start_with(f, open_fake(f, 0, 0), 1, 4000, 0);
	assert_int_equal(cfg(f, 10, 2), 4000);
	const uint8_t mac[6] = { 0x02, 1, 2, 3, 4, 5 };
	assert_int_equal(ctrl(f, 2, VIRTIO_NET_CTRL_MAC, VIRTIO_NET_CTRL_MAC_ADDR_SET, mac, 6),
			 VIRTIO_NET_OK);
	assert_int_equal(cfg(f, 10, 2), 4000);
	drv_init(f, F(VIRTIO_NET_F_MTU));
	assert_int_equal(cfg(f, 10, 2), 4000);
	drv_init(f, 0);
	assert_int_equal(cfg(f, 10, 2), 4000);
}

/* ---- peer modes ---- */

static void test_sink_and_source(void **state)
{
	struct fx *f = *state;
	start_with(f, open_peer(NET_PEER_SINK, 0, 0), 1, 0, 0);
	rx_post(f, 0, 0, 2048);
	uint8_t frame[64];
	tx_done(f, 1, tx(f, frame, arp_request(frame, NET_PEER_IP)));
	poll_dev(f);
	assert_false(take_used(f, 0));
	struct net_be_stat st[NET_BE_MAX_STATS];
	unsigned k = net_backend_stats(f->net->be, st, NET_BE_MAX_STATS);
	assert_true(k >= 2);
	assert_string_equal(st[0].name, "frames_in");
	assert_int_equal(st[0].value, 1);
	assert_int_equal(st[1].value, 42);
	virtio_net_destroy(f->net);
	free(f->net);
	f->net = NULL;

	start_with(f, open_peer(NET_PEER_SOURCE, 1000, 100), 1, 0, 0);
	for (unsigned i = 0; i < 8; i++)
		rx_post(f, 0, i, 2048);
	kick(f, 0);
	usleep(20000);
	poll_dev(f);
	assert_true(take_used(f, 0));
	assert_int_equal(f->last_len, 12 + 100);
	const uint8_t *r = f->ram + rx_buf(0) + HDR;
	const uint8_t *ip = r + 14, *u = ip + 20;
	assert_true(csum_ok(ip, 20));
	assert_int_equal(get32be(ip + 16), GUEST_IP);
	assert_int_equal(get16be(u + 2), NET_PEER_SOURCE_PORT);
	assert_true(udp_csum_ok(ip));
	assert_int_equal(get32be(u + 8 + 4), 0);      /* sequence number 0 first */
}

/* ---- the socket backend ---- */

static void test_socket_backend(void **state)
{
	struct fx *f = *state;
	snprintf(f->dir, sizeof(f->dir), "/tmp/msivm-net-test-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	struct net_open_cfg c = { .kind = NET_BE_SOCKET, .nqueues = 1 };
	snprintf(c.path, sizeof(c.path), "%s/link", f->dir);
	struct net_backend *a, *b, *x;
	struct error err;
	assert_int_equal(net_backend_open(&a, &c, &err), 0);
	assert_int_equal(net_backend_open(&b, &c, &err), 0);
	assert_non_null(strstr(a->desc, "link.0 -> "));
	assert_non_null(strstr(b->desc, "link.1 -> "));
	assert_int_equal(net_backend_open(&x, &c, &err), -EADDRINUSE);
	assert_non_null(strstr(err.msg, "already joined"));
	uint8_t frame[1514], got[2048];
	for (unsigned i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)i;
	struct iovec iov[2] = { { frame, 100 }, { frame + 100, 1414 } };
	assert_int_equal(a->ops->send(a, 0, iov, 2), 0);
	assert_int_equal(b->ops->recv(b, 0, got, sizeof(got)), 1514);
	assert_memory_equal(got, frame, 1514);
	assert_int_equal(b->ops->recv(b, 0, got, sizeof(got)), -EAGAIN);
	assert_int_equal(b->ops->send(b, 0, iov, 1), 0);
	assert_int_equal(a->ops->recv(a, 0, got, 50), -EMSGSIZE);   /* too long: dropped */
	/* The other end gone: frames are dropped and counted. */
	net_backend_close(b);
	assert_int_equal(a->ops->send(a, 0, iov, 2), -ENOTCONN);
	struct net_be_stat st[NET_BE_MAX_STATS];
	assert_true(net_backend_stats(a, st, NET_BE_MAX_STATS) >= 1);
	assert_string_equal(st[0].name, "peer_absent");
	assert_int_equal(st[0].value, 1);
	/* A socket file left by a dead process is taken over. */
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s.1", c.path);
	const char *stale = sa.sun_path;
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_int_equal(net_backend_open(&b, &c, &err), 0);
	assert_non_null(strstr(b->desc, "link.1 -> "));
	assert_int_equal(a->ops->send(a, 0, iov, 1), 0);
	assert_int_equal(b->ops->recv(b, 0, got, sizeof(got)), 100);
	net_backend_close(a);
	net_backend_close(b);
	/* Files are removed at close; a path that is not a socket is refused. */
	struct stat sb;
	assert_int_equal(stat(stale, &sb), -1);
	char reg[128];
	snprintf(reg, sizeof(reg), "%s.0", c.path);
	FILE *fp = fopen(reg, "w");
	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(net_backend_open(&x, &c, &err), -EEXIST);
	assert_non_null(strstr(err.msg, "not a socket"));
	unlink(reg);
}

/* ---- on an event loop thread, as in msivm ---- */

static void *loop_main(void *arg)
{
	struct fx *f = arg;
	vdrv_run_loop(&f->loop, &f->loop_stop);
	return NULL;
}

static bool wait_used_idx(struct fx *f, uint16_t q, uint16_t want)
{
	return vdrv_wait_used_idx(f->ram + USED_GPA(q) + 2, want);
}

static void test_event_loop_thread(void **state)
{
	struct fx *f = *state;
	assert_int_equal(evloop_init(&f->loop), 0);
	f->loop_up = true;
	start_peer(f, 1, 0);
	atomic_store(&f->loop_running, true);
	assert_int_equal(pthread_create(&f->loop_thread, NULL, loop_main, f), 0);
	uint8_t frame[256];
	/* Buffers first: answers arrive through the peer's eventfd on the loop thread. */
	for (unsigned i = 0; i < 4; i++)
		rx_post(f, 0, i, 2048);
	kick(f, 0);
	for (unsigned i = 0; i < 4; i++)
		tx_done(f, 1, tx(f, frame, icmp_echo(frame, 9, (uint16_t)i, 32)));
	assert_true(wait_used_idx(f, 0, 4));
	/* No buffers: the loop stops watching; a kick resumes. */
	for (unsigned i = 0; i < 3; i++)
		tx_done(f, 1, tx(f, frame, icmp_echo(frame, 9, (uint16_t)(10 + i), 32)));
	usleep(30000);
	assert_int_equal(rd16(f, USED_GPA(0) + 2), 4);
	pthread_mutex_lock(&f->net->pci.lock);
	assert_true(f->net->bq[0].stalled);
	assert_false(f->net->bq[0].watched);
	pthread_mutex_unlock(&f->net->pci.lock);
	for (unsigned i = 0; i < 3; i++)
		rx_post(f, 0, 4 + i, 2048);
	kick(f, 0);
	assert_true(wait_used_idx(f, 0, 7));
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(get16be(f->ram + rx_buf(4 + i) + HDR + 34 + 6), 10 + i);
}

/* ---- a real tap, in a network namespace of the test's own (root only) ---- */

/* Waits up to 1 s for a frame on packet socket ps that starts with `want` (16 bytes). */
static ssize_t packet_wait(int ps, const uint8_t *want, uint8_t *buf, size_t len)
{
	for (int i = 0; i < 100; i++) {
		struct pollfd p = { ps, POLLIN, 0 };
		if (poll(&p, 1, 10) <= 0)
			continue;
		ssize_t n = recv(ps, buf, len, 0);
		if (n >= 16 && !memcmp(buf, want, 16))
			return n;
	}
	return -1;
}

static void test_tap_backend(void **state)
{
	struct fx *f = *state;
	if (unshare(CLONE_NEWNET))
		skip(); /* not root: the e2e tests cover what they can */
	FILE *v6 = fopen("/proc/sys/net/ipv6/conf/default/disable_ipv6", "w");
	if (v6) {                             /* no router solicitations on the tap */
		fputs("1", v6);
		fclose(v6);
	}
	struct net_open_cfg c = { .kind = NET_BE_TAP, .nqueues = 1, .ifname = "msivmut0" };
	struct net_backend *be;
	struct error err;
	if (net_backend_open(&be, &c, &err))
		skip(); /* no /dev/net/tun here */
	assert_int_equal(be->hdr_len, HDR);
	assert_true(be->offloads & NET_OFFLOAD_CSUM);
	assert_string_equal(be->desc, "tap msivmut0");
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "msivmut0");
	assert_int_equal(ioctl(s, SIOCGIFFLAGS, &ifr), 0);
	ifr.ifr_flags |= IFF_UP;
	assert_int_equal(ioctl(s, SIOCSIFFLAGS, &ifr), 0);
	close(s);
	int ps = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	assert_true(ps >= 0);
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = (int)if_nametoindex("msivmut0") };
	assert_int_equal(bind(ps, (struct sockaddr *)&sll, sizeof(sll)), 0);
	start_with(f, be, 1, 0, 0);
	assert_true(f->offered & F(VIRTIO_NET_F_HOST_TSO4));

	/* TX: the guest's frame comes out of the tap as it was sent. */
	uint8_t frame[1514], got[2048];
	size_t n = udp(frame, 1111, 2222, 500);
	tx_done(f, 1, tx(f, frame, n));
	assert_int_equal(packet_wait(ps, frame, got, sizeof(got)), (ssize_t)n);
	assert_memory_equal(got, frame, n);
	assert_int_equal(f->net->stats.tx_frames, 1);

	/* RX: a frame sent into the tap reaches a receive buffer, offloads handed over. */
	for (unsigned i = 0; i < 4; i++)
		rx_post(f, 0, i, 2048);
	kick(f, 0);
	assert_true(f->net->offloads_on & NET_OFFLOAD_CSUM);
	uint8_t in[200];
	memcpy(in, guest_mac, 6);
	memcpy(in + 6, peer_mac, 6);
	put16be(in + 12, 0x88b5);               /* local experimental ethertype */
	for (unsigned i = 14; i < sizeof(in); i++)
		in[i] = (uint8_t)i;
	assert_int_equal(send(ps, in, sizeof(in), 0), (ssize_t)sizeof(in));
	bool found = false;
	for (int i = 0; i < 100 && !found; i++) {
		poll_dev(f);
		while (!found && take_used(f, 0))
			found = f->last_len == HDR + sizeof(in) &&
				!memcmp(f->ram + rx_buf(f->last_id) + HDR, in, sizeof(in));
		if (!found)
			usleep(10000);
	}
	assert_true(found);

	/* The tap is deleted: reported, TX dropped and counted, the device works on. */
	if (system("ip link del msivmut0 2>/dev/null") != 0) {
		close(ps);
		return;
	}
	tx_done(f, 1, tx(f, frame, n));
	tx_done(f, 1, tx(f, frame, n));
	assert_int_equal(f->net->stats.drops[VNET_DROP_TX_BACKEND], 2);
	poll_dev(f);
	assert_true(f->net->bq[0].dead);
	assert_int_equal(dev_status(f), 0x0f);
	struct net_be_stat st[NET_BE_MAX_STATS];
	unsigned k = net_backend_stats(f->net->be, st, NET_BE_MAX_STATS);
	assert_int_equal(k, 3);
	assert_string_equal(st[2].name, "gone");
	assert_int_equal(st[2].value, 1);
	close(ps);
}

int main(void)
{
	log_set_level(LOG_ERROR); /* the guest errors below are expected */
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_config_and_features),
		T(test_config_readable_before_features_ok),
		T(test_feature_dependencies),
		T(test_rx_header_bits_and_vlan),
		T(test_tx_trusts_neither_hdr_len_nor_checksum),
		T(test_mtu_never_changes),
		T(test_mac_and_mtu_options),
		T(test_default_mac_per_index),
		T(test_arp_reply),
		T(test_icmp_echo),
		T(test_udp_echo),
		T(test_tx_size_limits),
		T(test_rx_too_big_without_mrg),
		T(test_ctrl_rx_filter),
		T(test_ctrl_mac_addr),
		T(test_ctrl_guest_offloads),
		T(test_rx_mtu),
		T(test_mtu_option_over_backend),
		T(test_rx_mergeable),
		T(test_rx_stall_recovery),
		T(test_tx_without_header_needs_reset),
		T(test_descriptor_loop_needs_reset),
		T(test_rx_readable_buffer_needs_reset),
		T(test_multiqueue_and_control),
		T(test_backend_errors),
		T(test_backend_frames_and_limits),
		T(test_offload_header),
		T(test_sink_and_source),
		T(test_socket_backend),
		T(test_event_loop_thread),
		T(test_tap_backend),     /* last: it moves the process into a new network namespace */
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
