/* Unit tests for virtio-blk: a fake driver in fake guest RAM drives the device over real, io_uring and fault-injecting backends on a temp file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_driver.h"
#include "backends/blk_backend.h"
#include "blk_fault.h"
#include "devices/virtio_blk.h"
#include "virtio/budget.h"
#include "util/log.h"
#include "virtio/virtio_pci_common.h"
#include "core/evloop.h"

#define RAM_SIZE     (8u << 20)
#define HOLE_START   0xC0000000ull
#define HOLE_END     0x100000000ull
#define QSIZE        256u
#define RING_GPA(q)  (0x10000u + (uint32_t)(q) * 0x8000u)
#define DESC_GPA(q)  RING_GPA(q)
#define AVAIL_GPA(q) (RING_GPA(q) + 0x1000u)
#define USED_GPA(q)  (RING_GPA(q) + 0x2000u)
#define HDR_GPA      0x60000u     /* 4096 header slots of 16 bytes */
#define STATUS_GPA   0x70000u     /* 4096 status bytes */
#define SEG_GPA      0x78000u     /* discard/write-zeroes segments */
#define DATA_GPA     0x100000u    /* 3 MiB of buffers to write from */
#define READ_GPA     0x400000u    /* 3 MiB of buffers to read into */
#define DISK_SIZE    (4u << 20)
#define DISK_SECTORS (DISK_SIZE / 512u)

#define RD 0u
#define WR VIRTQ_DESC_F_WRITE

enum kind { SYNC, URING, FAULT, FAULT_DEFERRED };

struct seg { uint64_t gpa; uint32_t len; uint16_t flags; };

struct fx {
	uint8_t *ram;
	struct guest_mem gm;
	struct gsi_routes routes;
	struct bus mmio;
	struct virtio_blk *blk;
	struct fault *fault;          /* the fault engine's state, if installed */
	char path[64];
	int fd;                       /* the image, for checks behind the device's back */
	char loopdev[64];              /* a loop device over the image, detached at teardown */
	void (*tweak)(struct blk_backend *); /* changes the backend before the device sees it */
	uint16_t nq;
	uint64_t offered;
	uint16_t avail_idx[VIRTIO_BLK_MAX_QUEUES], used_seen[VIRTIO_BLK_MAX_QUEUES];
	uint16_t next_desc[VIRTIO_BLK_MAX_QUEUES];
	unsigned slot;                /* next header/status slot */
	uint16_t last_head;
	uint32_t last_len;            /* used length of the last completion */
	/* An event loop on its own thread, as in msivm (only some tests). */
	struct evloop loop;
	bool loop_up;
	pthread_t loop_thread;
	atomic_bool loop_stop, loop_running;
};

static uint8_t file_byte(uint64_t off) { return (uint8_t)(off / 512 * 13 + off % 251 + 1); }

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || !(f->ram = calloc(1, RAM_SIZE)) ||
	    guest_mem_init(&f->gm, f->ram, RAM_SIZE, HOLE_START, HOLE_END) ||
	    gsi_routes_init(&f->routes, -1) || bus_init(&f->mmio, "mmio"))
		return -1;
	snprintf(f->path, sizeof(f->path), "/tmp/msivm-blk-test-XXXXXX");
	f->fd = mkstemp(f->path);
	if (f->fd < 0)
		return -1;
	uint8_t *img = malloc(DISK_SIZE);
	if (!img)
		return -1;
	for (uint64_t i = 0; i < DISK_SIZE; i++)
		img[i] = file_byte(i);
	ssize_t n = pwrite(f->fd, img, DISK_SIZE, 0);
	free(img);
	if (n != DISK_SIZE)
		return -1;
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
	if (f->blk) {
		virtio_blk_destroy(f->blk);
		free(f->blk);
	}
	if (f->loop_up)
		evloop_destroy(&f->loop);
	if (f->loopdev[0]) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "losetup -d %s", f->loopdev);
		if (system(cmd) != 0)
			fprintf(stderr, "teardown: '%s' failed\n", cmd);
	}
	bus_destroy(&f->mmio);
	gsi_routes_destroy(&f->routes);
	close(f->fd);
	unlink(f->path);
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

static void fill(struct fx *f, uint64_t gpa, uint32_t len, uint8_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		f->ram[gpa + i] = (uint8_t)(seed * 31 + i * 7 + i / 512);
}

/* FNV-1a of the whole image, read behind the device's back. */
static uint64_t file_hash(struct fx *f)
{
	uint8_t *buf = malloc(DISK_SIZE);
	assert_non_null(buf);
	assert_int_equal(pread(f->fd, buf, DISK_SIZE, 0), DISK_SIZE);
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < DISK_SIZE; i++)
		h = (h ^ buf[i]) * 0x100000001b3ull;
	free(buf);
	return h;
}

static void file_read(struct fx *f, uint64_t off, void *buf, size_t len)
{
	assert_int_equal(pread(f->fd, buf, len, (off_t)off), (ssize_t)len);
}

/* ---- the fake driver: common config, config space, rings ---- */

static void cw(struct fx *f, uint64_t off, uint64_t v, uint32_t len) { vdrv_write(&f->blk->pci, off, v, len); }
static uint64_t cr(struct fx *f, uint64_t off, uint32_t len) { return vdrv_read(&f->blk->pci, off, len); }
static uint64_t cfg(struct fx *f, uint32_t off, uint32_t len) { return vdrv_config(&f->blk->pci, off, len); }
static uint8_t dev_status(struct fx *f) { return (uint8_t)cr(f, VPCI_STATUS, 1); }
static void cfg_write8(struct fx *f, uint32_t off, uint8_t v)
{
	vdrv_bar0_write(&f->blk->pci, VPCI_DEVICE_OFF + off, v, 1);
}

/* Resets the device and brings it up again with every offered feature except `drop`. */
static void drv_init(struct fx *f, uint64_t drop)
{
	f->offered = vdrv_negotiate(&f->blk->pci, drop);
	assert_true(dev_status(f) & VIRTIO_STATUS_FEATURES_OK);
	for (uint16_t q = 0; q < f->nq; q++) {
		memset(f->ram + RING_GPA(q), 0, 0x8000);
		f->avail_idx[q] = f->used_seen[q] = f->next_desc[q] = 0;
		vdrv_enable_queue(&f->blk->pci, q, QSIZE, DESC_GPA(q), AVAIL_GPA(q), USED_GPA(q));
		assert_int_equal(cr(f, VPCI_Q_ENABLE, 2), 1);
	}
	cw(f, VPCI_STATUS, 0x0f, 1);
	assert_int_equal(dev_status(f), 0x0f);
}

/* Opens the image with engine `k` and creates the device. False if the
 * engine is unavailable here (io_uring). */
static bool start_dev(struct fx *f, enum kind k, bool ro, uint16_t nq, uint64_t drop)
{
	struct blk_open_cfg oc = { .path = f->loopdev[0] ? f->loopdev : f->path, .ro = ro, .depth = nq * QSIZE,
				   .engine = k == URING ? BLK_ENGINE_URING : BLK_ENGINE_SYNC };
	struct blk_backend *be;
	struct error err;
	int ret = blk_backend_open(&be, &oc, &err);
	if (ret && k == URING) {
		/* Skipped (visibly) only when this host has no io_uring at all; when it has one, a
		 * backend that cannot open its ring is a failure of the code under test. */
		struct io_uring probe;
		int pr = io_uring_queue_init(8, &probe, 0);
		if (pr == 0) {
			io_uring_queue_exit(&probe);
			fail_msg("the io_uring engine did not open (%s) though this host has io_uring", err.msg);
		}
		print_message("skipped: this host has no io_uring (io_uring_queue_init: %s)\n", strerror(-pr));
		return false;
	}
	assert_int_equal(ret, 0);
	if (k == FAULT || k == FAULT_DEFERRED)
		assert_non_null(f->fault = fault_install(be, k == FAULT_DEFERRED));
	if (f->tweak)
		f->tweak(be);
	f->blk = calloc(1, sizeof(*f->blk));
	assert_non_null(f->blk);
	struct virtio_pci_config pc = { .mode = IRQ_MODE_MSIX, .vectors = -1 };
	struct pci_window win = { 0xC0000000ull, 0xE0000000ull };
	ret = virtio_blk_init(f->blk, 0, nq, be, &pc, &f->gm, -1, &f->routes,
			      f->loop_up ? &f->loop : NULL, &f->mmio, win, &err);
	assert_int_equal(ret, 0);
	f->nq = nq;
	drv_init(f, drop);
	return true;
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
	wr16(f, AVAIL_GPA(q) + 4 + 2u * (f->avail_idx[q] % QSIZE), head);
	f->avail_idx[q]++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr16(f, AVAIL_GPA(q) + 2, f->avail_idx[q]);
}

/* Writes a chain of `n` descriptors and makes it available. Returns its head. */
static uint16_t post(struct fx *f, uint16_t q, const struct seg *s, unsigned n)
{
	uint16_t head = f->next_desc[q];
	for (unsigned i = 0; i < n; i++) {
		uint16_t idx = (uint16_t)((head + i) % QSIZE), next = (uint16_t)((idx + 1) % QSIZE);
		put_desc(f, q, idx, s[i].gpa, s[i].len,
			 (uint16_t)(s[i].flags | (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0)), next);
	}
	f->next_desc[q] = (uint16_t)((head + n) % QSIZE);
	publish(f, q, head);
	return head;
}

static void kick(struct fx *f, uint16_t q) { virtio_pci_kick(&f->blk->pci, q); }

/* What the event loop does with a handler that ran out of budget: kick again
 * while the queue rescheduled itself (its kick eventfd is readable). Returns
 * the number of extra kicks. */
static unsigned kick_resumed(struct fx *f, uint16_t q)
{
	unsigned n = 0;
	uint64_t v;
	while (read(f->blk->pci.queues[q].kick_fd, &v, sizeof(v)) == sizeof(v)) {
		kick(f, q);
		n++;
	}
	return n;
}

/* Takes the next used element of queue q, running completions while waiting. */
static bool take_used(struct fx *f, uint16_t q)
{
	for (int i = 0; i < 1000; i++) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (rd16(f, USED_GPA(q) + 2) != f->used_seen[q]) {
			uint64_t e = USED_GPA(q) + 4 + 8u * (f->used_seen[q] % QSIZE);
			f->last_head = (uint16_t)rd32(f, e);
			f->last_len = rd32(f, e + 4);
			f->used_seen[q]++;
			return true;
		}
		struct blk_backend *be = f->blk->be;
		if (!be->inflight && i > 0)
			return false;
		if (be->event_fd >= 0) {
			struct pollfd p = { .fd = be->event_fd, .events = POLLIN };
			poll(&p, 1, 10);
		}
		virtio_blk_complete(f->blk);
	}
	return false;
}

/* Header, data segments, status byte: each its own descriptor. Returns the
 * head; *status points at the status byte (set to 0xee). */
static uint16_t post_req(struct fx *f, uint16_t q, uint32_t type, uint64_t sector,
			 const struct seg *data, unsigned ndata, uint8_t **status)
{
	unsigned slot = f->slot++ % 4096;
	uint64_t hdr = HDR_GPA + slot * 16u, st = STATUS_GPA + slot;
	wr32(f, hdr, type);
	wr32(f, hdr + 4, 0);
	wr64(f, hdr + 8, sector);
	f->ram[st] = 0xee;
	struct seg s[VIRTIO_BLK_SEG_MAX + 8];
	unsigned n = 0;
	s[n++] = (struct seg){ hdr, 16, RD };
	for (unsigned i = 0; i < ndata; i++)
		s[n++] = data[i];
	s[n++] = (struct seg){ st, 1, WR };
	*status = f->ram + st;
	return post(f, q, s, n);
}

/* One request with the data segments given; waits for it. Returns the status byte. */
static int req_segs(struct fx *f, uint16_t q, uint32_t type, uint64_t sector,
		    const struct seg *data, unsigned ndata)
{
	uint8_t *status;
	uint16_t head = post_req(f, q, type, sector, data, ndata, &status);
	kick(f, q);
	if (!take_used(f, q))
		return -1;
	assert_int_equal(f->last_head, head);
	return *status;
}

/* One request with one data buffer (none if len is 0). */
static int req(struct fx *f, uint16_t q, uint32_t type, uint64_t sector, uint64_t gpa,
	       uint32_t len)
{
	bool to_guest = type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID;
	struct seg d = { gpa, len, to_guest ? WR : RD };
	return req_segs(f, q, type, sector, &d, len ? 1 : 0);
}

static int dwz(struct fx *f, uint32_t type, uint64_t sector, uint32_t num, uint32_t flags)
{
	wr64(f, SEG_GPA, sector);
	wr32(f, SEG_GPA + 8, num);
	wr32(f, SEG_GPA + 12, flags);
	return req(f, 0, type, 0, SEG_GPA, 16);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* ---- configuration ---- */

static void test_config_and_features(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	uint64_t want = 1ull << VIRTIO_BLK_F_SIZE_MAX | 1ull << VIRTIO_BLK_F_SEG_MAX |
			1ull << VIRTIO_BLK_F_FLUSH | 1ull << VIRTIO_F_VERSION_1;
	assert_int_equal(f->offered & want, want);
	assert_false(f->offered & (1ull << VIRTIO_BLK_F_RO));
	assert_false(f->offered & (1ull << VIRTIO_BLK_F_MQ));
	assert_int_equal(!!(f->offered & (1ull << VIRTIO_BLK_F_DISCARD)), f->blk->be->can_discard);
	assert_int_equal(!!(f->offered & (1ull << VIRTIO_BLK_F_WRITE_ZEROES)),
			 f->blk->be->can_write_zeroes);
	assert_int_equal(cfg(f, 0, 8), DISK_SECTORS);
	assert_int_equal(cfg(f, 8, 4), VIRTIO_BLK_SIZE_MAX);
	assert_int_equal(cfg(f, 12, 4), VIRTIO_BLK_SEG_MAX);
	assert_int_equal(cfg(f, 32, 1), 1);   /* writeback: FLUSH negotiated */
	assert_int_equal(cfg(f, 34, 2), 1);
	assert_int_equal(cfg(f, 40, 4), 1);   /* max_discard_seg */
	assert_int_equal(cfg(f, 52, 4), 1);   /* max_write_zeroes_seg */
	assert_int_equal(f->blk->pci.info.pci_class, 0x010000);
	assert_int_equal(f->blk->pci.info.device_id, 2);
	/* Writes to the config space change nothing. */
	uint64_t v = 0;
	f->blk->pci.ops->config_write(f->blk, 0, &v, 8);
	assert_int_equal(cfg(f, 0, 8), DISK_SECTORS);
}

static void test_multiqueue(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 4, 0));
	assert_true(f->offered & (1ull << VIRTIO_BLK_F_MQ));
	assert_int_equal(cfg(f, 34, 2), 4);
	assert_int_equal(f->blk->pci.msix.nvec, 5); /* one vector per queue plus config */
	fill(f, DATA_GPA, 4096, 9);
	assert_int_equal(req(f, 3, VIRTIO_BLK_T_OUT, 64, DATA_GPA, 4096), VIRTIO_BLK_S_OK);
	assert_int_equal(req(f, 1, VIRTIO_BLK_T_IN, 64, READ_GPA, 4096), VIRTIO_BLK_S_OK);
	assert_memory_equal(f->ram + READ_GPA, f->ram + DATA_GPA, 4096);
	assert_int_equal(f->used_seen[0], 0);
}

static void test_open_errors(void **state)
{
	struct fx *f = *state;
	struct blk_backend *be;
	struct error err;
	struct blk_open_cfg oc = { .path = f->path, .engine = BLK_ENGINE_SYNC, .depth = 1 };
	assert_int_equal(ftruncate(f->fd, 1000), 0);
	assert_int_equal(blk_backend_open(&be, &oc, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not a multiple of 512"));
	oc.path = "/nonexistent/msivm.img";
	assert_int_equal(blk_backend_open(&be, &oc, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "/nonexistent/msivm.img"));
	enum blk_engine e;
	assert_int_equal(blk_engine_parse("uring", &e), 0);
	assert_int_equal(e, BLK_ENGINE_URING);
	assert_int_equal(blk_engine_parse("sync", &e), 0);
	assert_int_equal(blk_engine_parse("aio", &e), -EINVAL);
}

/* ---- good paths ---- */

static void happy_path(struct fx *f)
{
	fill(f, DATA_GPA, 4096, 1);
	fill(f, DATA_GPA + 0x10000, 4096, 2);
	struct seg two[] = { { DATA_GPA, 4096, RD }, { DATA_GPA + 0x10000, 4096, RD } };
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_OUT, 8, two, 2), VIRTIO_BLK_S_OK);
	assert_int_equal(f->last_len, 1);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_OK);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 8, READ_GPA, 8192), VIRTIO_BLK_S_OK);
	assert_int_equal(f->last_len, 8193);
	assert_memory_equal(f->ram + READ_GPA, f->ram + DATA_GPA, 4096);
	assert_memory_equal(f->ram + READ_GPA + 4096, f->ram + DATA_GPA + 0x10000, 4096);
	uint8_t buf[8192];
	file_read(f, 8 * 512, buf, sizeof(buf));
	assert_memory_equal(buf, f->ram + READ_GPA, sizeof(buf));
	/* Untouched sectors read as they were. */
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 512), VIRTIO_BLK_S_OK);
	for (uint32_t i = 0; i < 512; i++)
		assert_int_equal(f->ram[READ_GPA + i], file_byte(i));
	const struct virtio_blk_stats *s = &f->blk->stats;
	assert_int_equal(s->requests[VBLK_OUT], 1);
	assert_int_equal(s->requests[VBLK_IN], 2);
	assert_int_equal(s->requests[VBLK_FLUSH], 1);
	assert_int_equal(s->bytes_written, 8192);
	assert_int_equal(s->bytes_read, 8192 + 512);
	assert_int_equal(s->ioerr, 0);
}

static void test_write_flush_read_sync(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	assert_string_equal(f->blk->be->ops->name, "sync");
	happy_path(f);
}

/* io_uring: a read of cached pages completes inside the submit; the device reports it before the
 * kick returns (no event-loop round trip) and the completion eventfd stays quiet. */
static void test_uring_reaps_inline(void **state)
{
	struct fx *f = *state;
	if (!start_dev(f, URING, false, 1, 0))
		skip();
	char buf[4096];
	file_read(f, 0, buf, sizeof(buf)); /* the pages are cached */
	uint8_t *st;
	struct seg d = { READ_GPA, 4096, WR };
	post_req(f, 0, VIRTIO_BLK_T_IN, 0, &d, 1, &st);
	kick(f, 0);
	assert_int_equal(rd16(f, USED_GPA(0) + 2), 1);          /* done before the kick returned */
	assert_int_equal(*st, VIRTIO_BLK_S_OK);
	assert_memory_equal(f->ram + READ_GPA, buf, sizeof(buf));
	assert_int_equal(f->blk->be->inflight, 0);
	struct pollfd p = { .fd = f->blk->be->event_fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 0), 0);                     /* no wake-up left for the loop */
}

/* io_uring: a 3 MiB read runs in chunks of at most 2 MiB (the second as the remainder of a short
 * transfer); the chunk's cut iovec is put back, so the data lands where the segments say. */
static void test_uring_big_read_in_chunks(void **state)
{
	struct fx *f = *state;
	if (!start_dev(f, URING, false, 1, 0))
		skip();
	/* 768 KiB + 1 MiB + 1 MiB + 256 KiB: the 2 MiB cut falls inside the third segment */
	struct seg d[] = { { READ_GPA, 768u << 10, WR }, { READ_GPA + (768u << 10), 1u << 20, WR },
			   { READ_GPA + (1792u << 10), 1u << 20, WR },
			   { READ_GPA + (2816u << 10), 256u << 10, WR } };
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_IN, 0, d, 4), VIRTIO_BLK_S_OK);
	assert_int_equal(f->blk->be->short_transfers, 1);
	for (uint32_t i = 0; i < (3u << 20); i += 4093)
		assert_int_equal(f->ram[READ_GPA + i], file_byte(i));
	assert_int_equal(f->ram[READ_GPA + (3u << 20) - 1], file_byte((3u << 20) - 1));
}

static void test_write_flush_read_uring(void **state)
{
	struct fx *f = *state;
	if (!start_dev(f, URING, false, 1, 0))
		skip(); /* io_uring_queue_init does not work here */
	assert_string_equal(f->blk->be->ops->name, "uring");
	assert_true(f->blk->be->event_fd >= 0);
	happy_path(f);
	/* Many requests in flight at once, completed through the eventfd. */
	uint8_t *st[64];
	for (unsigned i = 0; i < 64; i++) {
		struct seg d = { READ_GPA + i * 4096u, 4096, WR };
		post_req(f, 0, VIRTIO_BLK_T_IN, i * 8u, &d, 1, &st[i]);
	}
	kick(f, 0);
	for (unsigned i = 0; i < 64; i++)
		assert_true(take_used(f, 0));
	for (unsigned i = 0; i < 64; i++) {
		assert_int_equal(*st[i], VIRTIO_BLK_S_OK);
		uint8_t buf[4096];
		file_read(f, i * 4096u, buf, sizeof(buf));
		assert_memory_equal(buf, f->ram + READ_GPA + i * 4096u, sizeof(buf));
	}
}

static void test_status_shares_last_buffer(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	/* Header split over two descriptors, data and status in one buffer. */
	wr32(f, HDR_GPA, VIRTIO_BLK_T_IN);
	wr32(f, HDR_GPA + 4, 0);
	wr64(f, HDR_GPA + 8, 3);
	f->ram[READ_GPA + 512] = 0xee;
	struct seg s[] = { { HDR_GPA, 8, RD }, { HDR_GPA + 8, 8, RD }, { READ_GPA, 513, WR } };
	post(f, 0, s, 3);
	kick(f, 0);
	assert_true(take_used(f, 0));
	assert_int_equal(f->ram[READ_GPA + 512], VIRTIO_BLK_S_OK);
	assert_int_equal(f->last_len, 513);
	for (uint32_t i = 0; i < 512; i++)
		assert_int_equal(f->ram[READ_GPA + i], file_byte(3 * 512 + i));
}

static void test_get_id(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	memset(f->ram + READ_GPA, 0xaa, 32);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_GET_ID, 0, READ_GPA, 20), VIRTIO_BLK_S_OK);
	assert_int_equal(f->last_len, 21);
	char want[20] = "msivm-blk0";
	assert_memory_equal(f->ram + READ_GPA, want, 20);
	/* A shorter buffer gets the start of the string. */
	memset(f->ram + READ_GPA, 0xaa, 32);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_GET_ID, 0, READ_GPA, 4), VIRTIO_BLK_S_OK);
	assert_int_equal(f->last_len, 5);
	assert_memory_equal(f->ram + READ_GPA, "msiv", 4);
	assert_int_equal(f->ram[READ_GPA + 4], 0xaa);
}

static void test_discard_and_write_zeroes(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	struct blk_backend *be = f->blk->be;
	uint8_t buf[8192];
	if (!be->can_discard || !be->can_write_zeroes) { /* the host's file system, not msivm */
		struct statfs sf;
		long type = fstatfs(f->fd, &sf) ? -1 : (long)sf.f_type;
		print_message("skipped: %s (file system type 0x%lx) cannot %s%s%s\n", f->path, type,
			      be->can_discard ? "" : "punch holes",
			      !be->can_discard && !be->can_write_zeroes ? " or " : "",
			      be->can_write_zeroes ? "" : "zero ranges");
		skip();
	}
	assert_int_equal(dwz(f, VIRTIO_BLK_T_DISCARD, 16, 16, 0), VIRTIO_BLK_S_OK);
	file_read(f, 16 * 512, buf, sizeof(buf));
	assert_true(all_zero(buf, sizeof(buf)));
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 64, 16, 0), VIRTIO_BLK_S_OK);
	file_read(f, 64 * 512, buf, sizeof(buf));
	assert_true(all_zero(buf, sizeof(buf)));
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 96, 16, 1), VIRTIO_BLK_S_OK);
	file_read(f, 96 * 512, buf, sizeof(buf));
	assert_true(all_zero(buf, sizeof(buf)));
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, DISK_SECTORS - 8, 16, 0),
			 VIRTIO_BLK_S_IOERR);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 0, 0, 0), VIRTIO_BLK_S_IOERR);
	/* Two segments: more than max_write_zeroes_seg. */
	struct seg two = { SEG_GPA, 32, RD };
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_WRITE_ZEROES, 0, &two, 1), VIRTIO_BLK_S_IOERR);
	file_read(f, 128 * 512, buf, 512); /* beyond the ranges: untouched */
	assert_int_equal(buf[0], file_byte(128 * 512));
}

/* 2.5.1: the device configuration is readable before FEATURES_OK (Linux reads a
 * disk's capacity and limits while it still picks features), through BAR0 as
 * the guest reads it, and reads the same once the features are set. */
static void test_config_readable_before_features_ok(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	struct virtio_pci *t = &f->blk->pci;
	vdrv_acknowledge(t);
	assert_int_equal(dev_status(f), VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER);
	uint64_t before[4];
	static const uint32_t offs[4] = { 0, 4, 12, 20 }; /* capacity lo/hi, seg_max, blk_size */
	for (unsigned i = 0; i < 4; i++)
		before[i] = vdrv_bar0_read(t, VPCI_DEVICE_OFF + offs[i], 4);
	assert_int_equal(before[0] | before[1] << 32, DISK_SECTORS);
	assert_int_not_equal(before[2], 0);
	assert_int_equal(before[3], 512);
	drv_init(f, 0);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(vdrv_bar0_read(t, VPCI_DEVICE_OFF + offs[i], 4), before[i]);
}

/* A backend double that claims both abilities, whatever the host's file system can do. */
static void abilities_on(struct blk_backend *be)
{
	be->can_discard = true;
	be->can_write_zeroes = true;
}

/* 5.2.5.1: the padding (unused0 at 33, unused1 at 57..59) reads 0 and ignores writes;
 * 5.2.6.1: write_zeroes_may_unmap (56) is set exactly when write-zeroes can deallocate
 * (the backend can punch holes). */
static void no_discard(struct blk_backend *be)
{
	be->can_discard = false;
	be->can_write_zeroes = true;
}

static void test_config_padding_and_may_unmap(void **state)
{
	struct fx *f = *state;
	f->tweak = abilities_on;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	static const uint32_t pad[] = { 33, 57, 58, 59 };
	for (size_t i = 0; i < 4; i++) {
		cfg_write8(f, pad[i], 0x5a);
		assert_int_equal(vdrv_bar0_read(&f->blk->pci, VPCI_DEVICE_OFF + pad[i], 1), 0);
	}
	assert_int_equal(cfg(f, 56, 1), 1);
	virtio_blk_destroy(f->blk);
	free(f->blk);
	f->tweak = no_discard;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	assert_true(f->offered & (1ull << VIRTIO_BLK_F_WRITE_ZEROES));
	assert_false(f->offered & (1ull << VIRTIO_BLK_F_DISCARD));
	assert_int_equal(cfg(f, 56, 1), 0);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(cfg(f, pad[i], 1), 0);
}

/* 5.2.6.1: DISCARD with the unmap flag, and any unknown flag, get UNSUPP and touch nothing;
 * DISCARD and WRITE_ZEROES the driver did not negotiate get UNSUPP. The flags are refused
 * before the backend is asked, so the double's abilities are never exercised. */
static void test_discard_flags_and_unnegotiated_unsupp(void **state)
{
	struct fx *f = *state;
	f->tweak = abilities_on;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	uint8_t buf[512];
	assert_int_equal(dwz(f, VIRTIO_BLK_T_DISCARD, 16, 16, 1), VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_DISCARD, 16, 16, 4), VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 96, 16, 2), VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 96, 16, 0x80000001u), VIRTIO_BLK_S_UNSUPP);
	file_read(f, 16 * 512, buf, sizeof(buf));
	assert_int_equal(buf[0], file_byte(16 * 512));
	file_read(f, 96 * 512, buf, sizeof(buf));
	assert_int_equal(buf[0], file_byte(96 * 512));
	/* Not negotiated: UNSUPP. */
	drv_init(f, 1ull << VIRTIO_BLK_F_DISCARD | 1ull << VIRTIO_BLK_F_WRITE_ZEROES);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_DISCARD, 200, 8, 0), VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 200, 8, 0), VIRTIO_BLK_S_UNSUPP);
	file_read(f, 200 * 512, buf, 512);
	assert_int_equal(buf[0], file_byte(200 * 512));
}

/* ---- read-only ---- */

static void test_read_only(void **state)
{
	struct fx *f = *state;
	uint64_t before = file_hash(f);
	assert_true(start_dev(f, SYNC, true, 1, 0));
	assert_true(f->offered & (1ull << VIRTIO_BLK_F_RO));
	assert_false(f->offered & (1ull << VIRTIO_BLK_F_DISCARD));
	assert_false(f->offered & (1ull << VIRTIO_BLK_F_WRITE_ZEROES));
	fill(f, DATA_GPA, 4096, 3);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 4096), VIRTIO_BLK_S_IOERR);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_DISCARD, 0, 8, 0), VIRTIO_BLK_S_IOERR);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 0, 8, 0), VIRTIO_BLK_S_IOERR);
	/* The driver ignoring RO changes nothing. */
	drv_init(f, 1ull << VIRTIO_BLK_F_RO);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 4096), VIRTIO_BLK_S_IOERR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_OK);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 512), VIRTIO_BLK_S_OK);
	assert_int_equal(f->ram[READ_GPA], file_byte(0));
	assert_true(file_hash(f) == before);
	assert_int_equal(f->blk->stats.ioerr, 4);
}

/* ---- guest errors ---- */

static void test_past_end(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, DISK_SECTORS - 1, READ_GPA, 1024),
			 VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->last_len, 1025); /* the whole writable area, status included */
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, DISK_SECTORS, READ_GPA, 512), VIRTIO_BLK_S_IOERR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, DISK_SECTORS, DATA_GPA, 512), VIRTIO_BLK_S_IOERR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, DISK_SECTORS - 1, READ_GPA, 512), VIRTIO_BLK_S_OK);
}

static void test_sector_overflow(void **state)
{
	struct fx *f = *state;
	uint64_t before = file_hash(f);
	assert_true(start_dev(f, SYNC, false, 1, 0));
	static const uint64_t bad[] = { UINT64_MAX, UINT64_MAX - 1, 1ull << 55, (1ull << 55) + 1,
					UINT64_MAX / 512 + 1 };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, bad[i], READ_GPA, 1024), VIRTIO_BLK_S_IOERR);
		assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, bad[i], DATA_GPA, 1024), VIRTIO_BLK_S_IOERR);
	}
	assert_true(file_hash(f) == before);
}

static void test_length_not_multiple_of_512(void **state)
{
	struct fx *f = *state;
	uint64_t before = file_hash(f);
	assert_true(start_dev(f, SYNC, false, 1, 0));
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 513), VIRTIO_BLK_S_IOERR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 100), VIRTIO_BLK_S_IOERR);
	assert_true(file_hash(f) == before);
}

static void test_seg_max(void **state)
{
	struct fx *f = *state;
	uint64_t before = file_hash(f);
	assert_true(start_dev(f, SYNC, false, 1, 0));
	struct seg d[VIRTIO_BLK_SEG_MAX + 1];
	for (unsigned i = 0; i < VIRTIO_BLK_SEG_MAX + 1; i++)
		d[i] = (struct seg){ DATA_GPA + i * 1024u, 512, RD };
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_OUT, 0, d, VIRTIO_BLK_SEG_MAX + 1),
			 VIRTIO_BLK_S_IOERR);
	assert_true(file_hash(f) == before);
	for (unsigned i = 0; i < VIRTIO_BLK_SEG_MAX + 1; i++)
		d[i].flags = WR;
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_IN, 0, d, VIRTIO_BLK_SEG_MAX + 1),
			 VIRTIO_BLK_S_IOERR);
	/* Exactly seg_max is fine. */
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_IN, 0, d, VIRTIO_BLK_SEG_MAX), VIRTIO_BLK_S_OK);
	assert_int_equal(f->ram[DATA_GPA + 125 * 1024u], file_byte(125 * 512));
}

static void test_size_max(void **state)
{
	struct fx *f = *state;
	uint64_t before = file_hash(f);
	assert_true(start_dev(f, SYNC, false, 1, 0));
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, VIRTIO_BLK_SIZE_MAX + 512),
			 VIRTIO_BLK_S_IOERR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, VIRTIO_BLK_SIZE_MAX + 512),
			 VIRTIO_BLK_S_IOERR);
	assert_true(file_hash(f) == before);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, VIRTIO_BLK_SIZE_MAX), VIRTIO_BLK_S_OK);
	assert_int_equal(f->last_len, VIRTIO_BLK_SIZE_MAX + 1);
}

static void test_short_header_is_ioerr(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	wr32(f, HDR_GPA, VIRTIO_BLK_T_IN);
	f->ram[STATUS_GPA] = 0xee;
	struct seg s[] = { { HDR_GPA, 8, RD }, { STATUS_GPA, 1, WR } };
	post(f, 0, s, 2);
	kick(f, 0);
	assert_true(take_used(f, 0));
	assert_int_equal(f->ram[STATUS_GPA], VIRTIO_BLK_S_IOERR);
	/* No header at all. */
	f->ram[STATUS_GPA] = 0xee;
	post(f, 0, &s[1], 1);
	kick(f, 0);
	assert_true(take_used(f, 0));
	assert_int_equal(f->ram[STATUS_GPA], VIRTIO_BLK_S_IOERR);
	/* Reads with data to read, writes with data to write: IOERR. */
	struct seg rd_extra[] = { { DATA_GPA, 512, RD } };
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_IN, 0, rd_extra, 1), VIRTIO_BLK_S_IOERR);
	struct seg wr_extra[] = { { READ_GPA, 512, WR } };
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_OUT, 0, wr_extra, 1), VIRTIO_BLK_S_IOERR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, DATA_GPA, 512), VIRTIO_BLK_S_IOERR);
	/* The device keeps working. */
	assert_int_equal(dev_status(f), 0x0f);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 512), VIRTIO_BLK_S_OK);
}

static void test_missing_status_needs_reset(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	wr32(f, HDR_GPA, VIRTIO_BLK_T_IN);
	struct seg s[] = { { HDR_GPA, 16, RD }, { DATA_GPA, 512, RD } };
	post(f, 0, s, 2);
	kick(f, 0);
	assert_false(take_used(f, 0));
	assert_true(dev_status(f) & VIRTIO_STATUS_NEEDS_RESET);
	/* Nothing more is processed until the driver resets the device. */
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 512), -1);
	drv_init(f, 0);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 512), VIRTIO_BLK_S_OK);
}

static void test_malformed_chain_needs_reset(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	/* A readable descriptor after a writable one breaks the queue. */
	struct seg s[] = { { HDR_GPA, 16, RD }, { STATUS_GPA, 1, WR }, { DATA_GPA, 512, RD } };
	post(f, 0, s, 3);
	kick(f, 0);
	assert_false(take_used(f, 0));
	assert_true(dev_status(f) & VIRTIO_STATUS_NEEDS_RESET);
	drv_init(f, 0);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 512), VIRTIO_BLK_S_OK);
}

static void test_unsupported_type(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	assert_int_equal(req(f, 0, 99, 0, 0, 0), VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(req(f, 0, 0x80000000u, 0, 0, 0), VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(f->blk->stats.unsupp, 2);
	assert_int_equal(f->blk->stats.requests[VBLK_OTHER], 2);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 512), VIRTIO_BLK_S_OK);
}

/* ---- host errors (fault engine) ---- */

static void write_error_then_ok(struct fx *f, int err)
{
	assert_true(start_dev(f, FAULT, false, 1, 0));
	uint8_t before[4096];
	file_read(f, 0, before, sizeof(before));
	fill(f, DATA_GPA, 4096, 4);
	fault_arm(f->fault, BLK_OP_WRITE, err);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 4096), VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->last_len, 1);
	uint8_t now[4096];
	file_read(f, 0, now, sizeof(now));
	assert_memory_equal(now, before, sizeof(now));
	/* The device keeps working. */
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 4096), VIRTIO_BLK_S_OK);
	file_read(f, 0, now, sizeof(now));
	assert_memory_equal(now, f->ram + DATA_GPA, sizeof(now));
	assert_int_equal(f->blk->stats.ioerr, 1);
	assert_int_equal(dev_status(f), 0x0f);
}

static void test_write_eio(void **state) { write_error_then_ok(*state, -EIO); }
static void test_write_enospc(void **state) { write_error_then_ok(*state, -ENOSPC); }

static void test_short_read_is_resubmitted(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT, false, 1, 0));
	fault_arm(f->fault, BLK_OP_READ, 512);
	fault_arm(f->fault, BLK_OP_READ, 1000); /* not even sector-sized */
	struct seg d[] = { { READ_GPA, 2048, WR }, { READ_GPA + 0x10000, 2048, WR } };
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_IN, 4, d, 2), VIRTIO_BLK_S_OK);
	assert_int_equal(f->fault->calls[BLK_OP_READ], 3);
	assert_int_equal(f->blk->be->short_transfers, 2);
	for (uint32_t i = 0; i < 4096; i++) {
		uint64_t gpa = i < 2048 ? READ_GPA + i : READ_GPA + 0x10000 + (i - 2048);
		assert_int_equal(f->ram[gpa], file_byte(4 * 512 + i));
	}
}

static void test_short_write_is_resubmitted(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT, false, 1, 0));
	fill(f, DATA_GPA, 8192, 5);
	fault_arm(f->fault, BLK_OP_WRITE, 4096 + 100);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 32, DATA_GPA, 8192), VIRTIO_BLK_S_OK);
	assert_int_equal(f->fault->calls[BLK_OP_WRITE], 2);
	uint8_t buf[8192];
	file_read(f, 32 * 512, buf, sizeof(buf));
	assert_memory_equal(buf, f->ram + DATA_GPA, sizeof(buf));
}

static void test_read_at_eof_is_ioerr(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT, false, 1, 0));
	/* Injected: a short count, then end of file. */
	fault_arm(f->fault, BLK_OP_READ, 512);
	fault_arm(f->fault, BLK_OP_READ, 0);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 4096), VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->last_len, 4097);
	assert_int_equal(f->blk->stats.bytes_read, 0);
	/* Real: the image shrank behind the device's back. */
	assert_int_equal(ftruncate(f->fd, DISK_SIZE / 2), 0);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, DISK_SECTORS - 8, READ_GPA, 4096),
			 VIRTIO_BLK_S_IOERR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, DISK_SECTORS / 2 - 1, READ_GPA, 1024),
			 VIRTIO_BLK_S_IOERR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, DISK_SECTORS / 2 - 2, READ_GPA, 1024),
			 VIRTIO_BLK_S_OK);
	assert_int_equal(f->blk->stats.ioerr, 3);
}

static void test_eintr_is_retried(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT, false, 1, 0));
	fault_arm(f->fault, BLK_OP_READ, -EINTR);
	fault_arm(f->fault, BLK_OP_READ, -EAGAIN);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 1, READ_GPA, 512), VIRTIO_BLK_S_OK);
	assert_int_equal(f->ram[READ_GPA], file_byte(512));
	assert_int_equal(f->blk->be->retries, 2);
	fault_arm(f->fault, BLK_OP_FLUSH, -EINTR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_OK);
	/* Interrupted forever: the retries are bounded. */
	for (unsigned i = 0; i <= BLK_MAX_STALLS; i++)
		fault_arm(f->fault, BLK_OP_WRITE, -EINTR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 1, DATA_GPA, 512), VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->fault->calls[BLK_OP_WRITE], BLK_MAX_STALLS + 1);
}

static void test_flush_error_is_latched_until_reset(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT, false, 1, 0));
	fault_arm(f->fault, BLK_OP_FLUSH, -EIO);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->fault->calls[BLK_OP_FLUSH], 1);
	/* fsync would succeed now, but the error stays. */
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_IOERR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_IOERR);
	/* Other requests still work. */
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 512), VIRTIO_BLK_S_OK);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_IOERR);
	/* The device reset clears it. */
	drv_init(f, 0);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_OK);
	assert_int_equal(f->fault->calls[BLK_OP_FLUSH], 2);
}

static void test_writethrough_without_flush_feature(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT, false, 1, 1ull << VIRTIO_BLK_F_FLUSH));
	assert_int_equal(cfg(f, 32, 1), 0); /* writeback = 0: writethrough */
	fill(f, DATA_GPA, 4096, 6);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 4096), VIRTIO_BLK_S_OK);
	assert_int_equal(f->fault->calls[BLK_OP_FLUSH], 1);
	/* The write is only as good as its fdatasync. */
	fault_arm(f->fault, BLK_OP_FLUSH, -EIO);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 8, DATA_GPA, 4096), VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->fault->calls[BLK_OP_FLUSH], 2);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 512), VIRTIO_BLK_S_OK);
	assert_int_equal(f->fault->calls[BLK_OP_FLUSH], 2); /* reads need none */
}

/* ---- asynchronous completion ---- */

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

/* As in msivm: the backend's eventfd on an event loop thread, completions
 * there under the transport lock while this thread kicks. */
static void test_uring_completions_on_event_loop_thread(void **state)
{
	struct fx *f = *state;
	assert_int_equal(evloop_init(&f->loop), 0);
	f->loop_up = true;
	if (!start_dev(f, URING, false, 2, 0))
		skip();
	assert_true(f->blk->io_registered);
	atomic_store(&f->loop_running, true);
	assert_int_equal(pthread_create(&f->loop_thread, NULL, loop_main, f), 0);
	fill(f, DATA_GPA, 64 * 4096, 7);
	for (unsigned round = 0; round < 4; round++) {
		uint16_t q = round & 1;
		bool wr = round < 2;
		uint8_t *st[64];
		for (unsigned i = 0; i < 64; i++) {
			uint64_t gpa = (wr ? DATA_GPA : READ_GPA) + i * 4096u;
			struct seg d = { gpa, 4096, wr ? RD : WR };
			post_req(f, q, wr ? VIRTIO_BLK_T_OUT : VIRTIO_BLK_T_IN, (round & 1) * 512u + i * 8u,
				 &d, 1, &st[i]);
		}
		kick(f, q);
		assert_true(wait_used_idx(f, q, (uint16_t)(64 * (round / 2 + 1))));
		for (unsigned i = 0; i < 64; i++)
			assert_int_equal(*st[i], VIRTIO_BLK_S_OK);
	}
	/* What queue 0 wrote, queue 1 read back (rounds 2 and 3 read both halves). */
	assert_memory_equal(f->ram + READ_GPA, f->ram + DATA_GPA, 64 * 4096);
	assert_int_equal(f->blk->stats.bytes_written, 128 * 4096);
	assert_int_equal(f->blk->stats.bytes_read, 128 * 4096);
}

/* ---- deferred fault engine ---- */

static void test_deferred_completion_and_reset(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT_DEFERRED, false, 1, 0));
	uint8_t *st[3];
	for (unsigned i = 0; i < 3; i++) {
		struct seg d = { READ_GPA + i * 512u, 512, WR };
		post_req(f, 0, VIRTIO_BLK_T_IN, i, &d, 1, &st[i]);
	}
	kick(f, 0);
	assert_int_equal(rd16(f, USED_GPA(0) + 2), 0); /* nothing completes inline */
	assert_int_equal(f->blk->be->inflight, 3);
	virtio_blk_complete(f->blk);
	assert_int_equal(rd16(f, USED_GPA(0) + 2), 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(*st[i], VIRTIO_BLK_S_OK);
	/* Reset with I/O in flight: drained, nothing reaches the old rings. */
	for (unsigned i = 0; i < 2; i++) {
		struct seg d = { READ_GPA + i * 512u, 512, WR };
		post_req(f, 0, VIRTIO_BLK_T_IN, i, &d, 1, &st[i]);
	}
	kick(f, 0);
	assert_int_equal(f->blk->be->inflight, 2);
	cw(f, VPCI_STATUS, 0, 1);
	assert_int_equal(f->blk->be->inflight, 0);
	assert_int_equal(rd16(f, USED_GPA(0) + 2), 3);
	drv_init(f, 0);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 512), VIRTIO_BLK_S_OK);
}

/* A reset waits for the attempt in flight but starts no further one: a transfer that is only
 * partly done when it is cancelled ends there. */
static void test_cancel_stops_between_attempts(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT_DEFERRED, false, 1, 0));
	fault_arm(f->fault, BLK_OP_READ, 512); /* the first attempt moves 512 of 4096 bytes */
	uint8_t *st;
	struct seg d = { READ_GPA, 4096, WR };
	post_req(f, 0, VIRTIO_BLK_T_IN, 0, &d, 1, &st);
	kick(f, 0);
	assert_int_equal(f->blk->be->inflight, 1);
	cw(f, VPCI_STATUS, 0, 1);
	assert_int_equal(f->fault->calls[BLK_OP_READ], 1);
	assert_int_equal(f->blk->be->inflight, 0);
	assert_int_equal(rd16(f, USED_GPA(0) + 2), 0);
	drv_init(f, 0);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 4096), VIRTIO_BLK_S_OK);
}

static void test_request_pool_exhaustion(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT_DEFERRED, false, 1, 0));
	/* One FLUSH chain made available again and again (a driver may not, but a guest can). */
	uint8_t *st;
	uint16_t head = post_req(f, 0, VIRTIO_BLK_T_FLUSH, 0, NULL, 0, &st);
	for (unsigned i = 1; i < QSIZE; i++)
		publish(f, 0, head);
	kick(f, 0);
	/* One wake-up does a budget's worth and reschedules the queue for the rest. */
	assert_int_equal(f->blk->be->inflight, VBUDGET_CHAINS);
	assert_int_equal(f->blk->pci.stats.resumes, 1);
	assert_int_equal(kick_resumed(f, 0), QSIZE / VBUDGET_CHAINS - 1);
	assert_int_equal(f->blk->be->inflight, QSIZE);
	for (unsigned i = 0; i < 10; i++)
		publish(f, 0, head);
	kick(f, 0);
	struct virtq *q = &f->blk->pci.queues[0].vq;
	assert_int_equal(q->popped, QSIZE); /* no free request: the rest waits */
	virtio_blk_complete(f->blk);        /* completes 256, resumes: 10 more start */
	kick_resumed(f, 0);
	assert_int_equal(rd16(f, USED_GPA(0) + 2), QSIZE);
	assert_int_equal(f->blk->be->inflight, 10);
	virtio_blk_complete(f->blk);
	assert_int_equal(rd16(f, USED_GPA(0) + 2), QSIZE + 10);
	assert_int_equal(*st, VIRTIO_BLK_S_OK);
	assert_int_equal(f->blk->stats.requests[VBLK_FLUSH], QSIZE + 10);
}

/* A queue stops taking requests while VBLK_INFLIGHT_BYTES of reads are in flight and goes on as
 * they complete: a guest cannot fill the host's I/O queue with gigabytes. */
static void test_inflight_bytes_cap(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT_DEFERRED, false, 1, 0));
	enum { MIB = 1u << 20, N = 40, CAP = VBLK_INFLIGHT_BYTES / MIB };
	uint8_t *st[N];
	for (unsigned i = 0; i < N; i++) {
		struct seg d = { READ_GPA, MIB, WR }; /* every request reads 1 MiB into one buffer */
		post_req(f, 0, VIRTIO_BLK_T_IN, 0, &d, 1, &st[i]);
	}
	kick(f, 0);
	kick_resumed(f, 0); /* past the per-wake-up budget (8 MiB) */
	assert_int_equal(f->blk->be->inflight, CAP);
	assert_int_equal(f->blk->inflight_bytes[0], (uint64_t)CAP * MIB);
	assert_true(f->blk->starved[0]);
	virtio_blk_complete(f->blk); /* CAP done: the queue starts the next ones */
	kick_resumed(f, 0);
	assert_int_equal(rd16(f, USED_GPA(0) + 2), CAP);
	assert_int_equal(f->blk->be->inflight, CAP);
	virtio_blk_complete(f->blk);
	kick_resumed(f, 0);
	assert_int_equal(f->blk->be->inflight, N - 2 * CAP);
	virtio_blk_complete(f->blk);
	assert_int_equal(rd16(f, USED_GPA(0) + 2), N);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(*st[i], VIRTIO_BLK_S_OK);
	assert_int_equal(f->blk->inflight_bytes[0], 0);
}

/* ---- issue 17: virtio 1.2 conformance ---- */

/* The status byte is the last device-writable byte: every completion's used
 * length covers the whole device-writable area, status included. */
static void test_used_length_covers_status(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT, false, 1, 0));
	/* A read the host fails: the length covers its data, which the device zeroed (it must not
	 * claim bytes it did not write, 2.7.8.2). */
	static const uint8_t zero[4096];
	memset(f->ram + READ_GPA, 0xaa, 4096);
	fault_arm(f->fault, BLK_OP_READ, -EIO);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 4096), VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->last_len, 4097);
	assert_memory_equal(f->ram + READ_GPA, zero, 4096);
	/* A read the device refuses (past the end), over two buffers: zeroed as well. */
	struct seg two[] = { { READ_GPA, 512, WR }, { READ_GPA + 0x10000, 1024, WR } };
	memset(f->ram + READ_GPA, 0xaa, 512);
	memset(f->ram + READ_GPA + 0x10000, 0xaa, 1024);
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_IN, DISK_SECTORS - 1, two, 2),
			 VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->last_len, 512 + 1024 + 1);
	assert_memory_equal(f->ram + READ_GPA, zero, 512);
	assert_memory_equal(f->ram + READ_GPA + 0x10000, zero, 1024);
	/* A refused read with more than 1 MiB of buffer (a flood, not a driver): no memset of it,
	 * length 0. */
	struct seg big[] = { { READ_GPA, 1024 * 1024, WR }, { READ_GPA + 0x100000, 4096, WR } };
	memset(f->ram + READ_GPA, 0xaa, 1024 * 1024 + 4096);
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_IN, DISK_SECTORS, big, 2), VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->last_len, 0);
	assert_int_equal(f->ram[READ_GPA], 0xaa);
	assert_int_equal(f->ram[READ_GPA + 0x100000 + 4095], 0xaa);
	/* GET_ID with a buffer larger than the ID: the status byte sits at its end, the bytes
	 * between the ID and it are zeroes. */
	memset(f->ram + READ_GPA, 0xaa, 32);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_GET_ID, 0, READ_GPA, 32), VIRTIO_BLK_S_OK);
	assert_int_equal(f->last_len, 33);
	assert_memory_equal(f->ram + READ_GPA, "msivm-blk0", 10);
	assert_memory_equal(f->ram + READ_GPA + 10, zero, 22);
	/* GET_ID with more than 1 MiB of buffer: the id, no memset of the rest, length 0. */
	memset(f->ram + READ_GPA, 0xaa, 1024 * 1024 + 4096);
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_GET_ID, 0, big, 2), VIRTIO_BLK_S_OK);
	assert_int_equal(f->last_len, 0);
	assert_memory_equal(f->ram + READ_GPA, "msivm-blk0", 10);
	assert_int_equal(f->ram[READ_GPA + 20], 0xaa);
	assert_int_equal(f->ram[READ_GPA + 0x100000 + 4095], 0xaa);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_GET_ID, 0, READ_GPA, 20), VIRTIO_BLK_S_OK);
	assert_int_equal(f->last_len, 21);
	/* UNSUPP with a writable data buffer. */
	struct seg wbuf = { READ_GPA, 64, WR };
	assert_int_equal(req_segs(f, 0, 99, 0, &wbuf, 1), VIRTIO_BLK_S_UNSUPP);
	assert_int_equal(f->last_len, 65);
	/* Writes and flushes have the status byte alone, OK or not. */
	fault_arm(f->fault, BLK_OP_WRITE, -EIO);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 512), VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->last_len, 1);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 512), VIRTIO_BLK_S_OK);
	assert_int_equal(f->last_len, 1);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_OK);
	assert_int_equal(f->last_len, 1);
	/* A write with writable data (refused) and a short header: all writable bytes. */
	struct seg wr_extra[] = { { READ_GPA, 512, WR } };
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_OUT, 0, wr_extra, 1), VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->last_len, 513);
	f->ram[READ_GPA + 99] = 0xee;
	struct seg shorthdr[] = { { HDR_GPA, 8, RD }, { READ_GPA, 100, WR } };
	post(f, 0, shorthdr, 2);
	kick(f, 0);
	assert_true(take_used(f, 0));
	assert_int_equal(f->ram[READ_GPA + 99], VIRTIO_BLK_S_IOERR);
	assert_int_equal(f->last_len, 100);
}

/* Every request type the device does not implement (SCSI, GET_LIFETIME,
 * SECURE_ERASE, zoned, unknown) completes with UNSUPP and the device goes on. */
static void test_unsupported_types_are_unsupp(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	uint64_t before = file_hash(f);
	static const uint32_t types[] = { 2, 3, 5, 10, 14, 16, 18, 20, 22, 24, 26, 0xffffffffu };
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		struct seg d[] = { { DATA_GPA, 512, RD }, { READ_GPA, 512, WR } };
		assert_int_equal(req_segs(f, 0, types[i], 0, d, 2), VIRTIO_BLK_S_UNSUPP);
		assert_int_equal(f->last_len, 513);
	}
	assert_int_equal(f->blk->stats.unsupp, sizeof(types) / sizeof(types[0]));
	assert_true(file_hash(f) == before);
	assert_int_equal(dev_status(f), 0x0f);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 512), VIRTIO_BLK_S_OK);
}

static void topo_4k(struct blk_backend *be)
{
	be->topo = (struct blk_topology){ .logical_block = 4096, .physical_block = 16384,
					  .alignment_offset = 3 * 4096, .min_io = 32768,
					  .opt_io = 1u << 20 };
}

static void topo_bogus(struct blk_backend *be)
{
	be->topo = (struct blk_topology){ .logical_block = 1000, .physical_block = 3000,
					  .alignment_offset = 700, .min_io = 1u << 30,
					  .opt_io = 4096 };
}

/* BLK_SIZE and TOPOLOGY (5.2.4: blk_size at 20; physical_block_exp,
 * alignment_offset, min_io_size, opt_io_size at 24..31, in logical blocks). */
/* SIGUSR2 -> virtio_blk_resize: a grown image is announced (capacity, config generation,
 * configuration-change ISR bit) and usable; a shrunk one refuses requests past its end; a size
 * that is not a multiple of 512 changes nothing. */
static void test_resize(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	uint8_t gen = f->blk->pci.config_generation;
	assert_int_equal(virtio_blk_resize(f->blk), 0);
	assert_int_equal(f->blk->pci.config_generation, gen);
	assert_int_equal(f->blk->pci.isr & 2, 0);
	assert_int_equal(ftruncate(f->fd, DISK_SIZE * 2), 0);
	assert_int_equal(virtio_blk_resize(f->blk), 1);
	assert_int_equal(cfg(f, 0, 4), 2 * DISK_SECTORS);
	assert_int_equal(cfg(f, 4, 4), 0);
	assert_int_not_equal(f->blk->pci.config_generation, gen);
	assert_int_equal(f->blk->pci.isr & 2, 2);
	fill(f, DATA_GPA, 4096, 7);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, DISK_SECTORS + 8, DATA_GPA, 4096),
			 VIRTIO_BLK_S_OK);
	assert_int_equal(ftruncate(f->fd, DISK_SIZE * 2 + 100), 0);
	assert_int_equal(virtio_blk_resize(f->blk), -EINVAL);
	assert_int_equal(cfg(f, 0, 4), 2 * DISK_SECTORS);
	assert_int_equal(ftruncate(f->fd, DISK_SIZE), 0);
	assert_int_equal(virtio_blk_resize(f->blk), 1);
	assert_int_equal(cfg(f, 0, 4), DISK_SECTORS);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, DISK_SECTORS + 8, DATA_GPA, 4096),
			 VIRTIO_BLK_S_IOERR);
}

static void test_blk_size_and_topology(void **state)
{
	struct fx *f = *state;
	struct stat st;
	assert_int_equal(fstat(f->fd, &st), 0);
	unsigned phys = 512, exp = 0;
	while (phys * 2 <= (unsigned)st.st_blksize && phys < 4096) {
		phys *= 2;
		exp++;
	}
	assert_true(start_dev(f, SYNC, false, 1, 0));
	assert_true(f->offered & (1ull << VIRTIO_BLK_F_BLK_SIZE));
	assert_true(f->offered & (1ull << VIRTIO_BLK_F_TOPOLOGY));
	assert_false(f->blk->be->blkdev);
	assert_int_equal(f->blk->be->topo.physical_block, phys);
	assert_int_equal(cfg(f, 20, 4), 512);
	assert_int_equal(cfg(f, 24, 1), exp);
	assert_int_equal(cfg(f, 25, 1), 0);
	assert_int_equal(cfg(f, 26, 2), phys / 512);
	assert_int_equal(cfg(f, 28, 4), 0);
	assert_int_equal(cfg(f, 44, 4), 8);   /* discard_sector_alignment */
	virtio_blk_destroy(f->blk);
	free(f->blk);

	/* A 4Kn disk with 16 KiB physical blocks, aligned at block 3. */
	f->tweak = topo_4k;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	assert_int_equal(cfg(f, 20, 4), 4096);
	assert_int_equal(cfg(f, 24, 1), 2);   /* 4 logical blocks per physical block */
	assert_int_equal(cfg(f, 25, 1), 3);
	assert_int_equal(cfg(f, 26, 2), 8);
	assert_int_equal(cfg(f, 28, 4), 256);
	assert_int_equal(cfg(f, 44, 4), 8);
	/* Addressing stays in 512-byte sectors, at any sector. */
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 3, READ_GPA, 512), VIRTIO_BLK_S_OK);
	for (uint32_t i = 0; i < 512; i++)
		assert_int_equal(f->ram[READ_GPA + i], file_byte(3 * 512 + i));
	fill(f, DATA_GPA, 1024, 11);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 5, DATA_GPA, 1024), VIRTIO_BLK_S_OK);
	uint8_t buf[1024];
	file_read(f, 5 * 512, buf, sizeof(buf));
	assert_memory_equal(buf, f->ram + DATA_GPA, sizeof(buf));
	virtio_blk_destroy(f->blk);
	free(f->blk);

	/* What the fields cannot say is left out, not misreported. */
	f->tweak = topo_bogus;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	assert_int_equal(cfg(f, 20, 4), 512);
	assert_int_equal(cfg(f, 24, 1), 0);
	assert_int_equal(cfg(f, 25, 1), 0);
	assert_int_equal(cfg(f, 26, 2), 0);
	assert_int_equal(cfg(f, 28, 4), 8);
}

/* CONFIG_WCE: the driver switches between writeback and writethrough with
 * the `writeback` byte at 32; nothing else in the config space is writable. */
static void test_config_wce(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, FAULT, false, 1, 0));
	assert_true(f->offered & (1ull << VIRTIO_BLK_F_CONFIG_WCE));
	assert_true(f->offered & (1ull << VIRTIO_BLK_F_FLUSH)); /* a MUST with CONFIG_WCE */
	assert_int_equal(cfg(f, 32, 1), 1);
	unsigned *flushes = &f->fault->calls[BLK_OP_FLUSH];
	fill(f, DATA_GPA, 4096, 12);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 4096), VIRTIO_BLK_S_OK);
	assert_int_equal(*flushes, 0);
	/* Writethrough: every write waits for its fdatasync. The switch changes a value the
	 * driver reads, so config_generation moves (4.1.4.3.1); writing the same value does not. */
	uint8_t gen = (uint8_t)cr(f, VPCI_CFG_GEN, 1);
	cfg_write8(f, 32, 0);
	assert_int_equal(cfg(f, 32, 1), 0);
	assert_int_equal((uint8_t)cr(f, VPCI_CFG_GEN, 1), (uint8_t)(gen + 1));
	cfg_write8(f, 32, 0);
	assert_int_equal((uint8_t)cr(f, VPCI_CFG_GEN, 1), (uint8_t)(gen + 1));
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 8, DATA_GPA, 4096), VIRTIO_BLK_S_OK);
	assert_int_equal(*flushes, 1);
	if (f->blk->be->can_write_zeroes) {
		assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 64, 8, 0), VIRTIO_BLK_S_OK);
		assert_int_equal(*flushes, 2);
		*flushes = 1;
	} else {
		print_message("write-zeroes part not run: %s cannot zero ranges (the host's file system)\n",
			      f->path);
	}
	fault_arm(f->fault, BLK_OP_FLUSH, -EIO);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 8, DATA_GPA, 4096), VIRTIO_BLK_S_IOERR);
	assert_int_equal(*flushes, 2);
	drv_init(f, 0); /* clears the latched flush error, and the mode */
	assert_int_equal(cfg(f, 32, 1), 1);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 8, DATA_GPA, 4096), VIRTIO_BLK_S_OK);
	assert_int_equal(*flushes, 2);
	/* Back and forth. */
	cfg_write8(f, 32, 0);
	cfg_write8(f, 32, 1);
	assert_int_equal(cfg(f, 32, 1), 1);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 8, DATA_GPA, 4096), VIRTIO_BLK_S_OK);
	assert_int_equal(*flushes, 2);
	/* Other values, other bytes, wider writes: ignored. */
	cfg_write8(f, 32, 2);
	assert_int_equal(cfg(f, 32, 1), 1);
	cfg_write8(f, 32, 0xff);
	assert_int_equal(cfg(f, 32, 1), 1);
	vdrv_bar0_write(&f->blk->pci, VPCI_DEVICE_OFF + 32, 0, 4);
	assert_int_equal(cfg(f, 32, 1), 1);
	cfg_write8(f, 33, 0);
	cfg_write8(f, 24, 7);
	cfg_write8(f, 0, 0);
	assert_int_equal(cfg(f, 0, 8), DISK_SECTORS);
	assert_int_equal(cfg(f, 32, 1), 1);
	assert_int_equal(cfg(f, 24, 1), f->blk->be->topo.physical_block == 4096 ? 3 :
			 f->blk->be->topo.physical_block == 2048 ? 2 :
			 f->blk->be->topo.physical_block == 1024 ? 1 : 0);
	/* Without CONFIG_WCE negotiated the byte is read-only. */
	drv_init(f, 1ull << VIRTIO_BLK_F_CONFIG_WCE);
	cfg_write8(f, 32, 0);
	assert_int_equal(cfg(f, 32, 1), 1);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 8, DATA_GPA, 4096), VIRTIO_BLK_S_OK);
	assert_int_equal(*flushes, 2);
	/* Without FLUSH: writethrough from the start (5.2.5.1), and writeback
	 * is refused (the driver could never make its data stable). */
	drv_init(f, 1ull << VIRTIO_BLK_F_FLUSH);
	assert_int_equal(cfg(f, 32, 1), 0);
	cfg_write8(f, 32, 1);
	assert_int_equal(cfg(f, 32, 1), 0);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 8, DATA_GPA, 4096), VIRTIO_BLK_S_OK);
	assert_int_equal(*flushes, 3);
}

static void small_segs(struct blk_backend *be)
{
	be->max_segs = 4;
	be->max_seg_bytes = 4096;
	be->max_discard = 64 * 512;
	be->max_write_zeroes = 32 * 512;
	be->can_discard = true; /* a double: the oversized ranges below never reach the file */
	be->can_write_zeroes = true;
}

/* SEG_MAX and SIZE_MAX follow what the backend takes per attempt; the
 * constants stay upper bounds. */
static void test_limits_follow_backend(void **state)
{
	struct fx *f = *state;
	assert_true(start_dev(f, SYNC, false, 1, 0));
	assert_int_equal(f->blk->be->max_segs, IOV_MAX);
	assert_int_equal(cfg(f, 12, 4), VIRTIO_BLK_SEG_MAX < IOV_MAX ? VIRTIO_BLK_SEG_MAX : IOV_MAX);
	assert_int_equal(cfg(f, 8, 4), VIRTIO_BLK_SIZE_MAX);
	assert_int_equal(cfg(f, 36, 4), VIRTIO_BLK_MAX_DISCARD_SECTORS);
	assert_int_equal(cfg(f, 48, 4), VIRTIO_BLK_MAX_DISCARD_SECTORS);
	virtio_blk_destroy(f->blk);
	free(f->blk);
	f->tweak = small_segs;
	uint64_t before = file_hash(f);
	assert_true(start_dev(f, SYNC, false, 1, 0));
	assert_int_equal(cfg(f, 12, 4), 4);
	assert_int_equal(cfg(f, 8, 4), 4096);
	assert_int_equal(cfg(f, 36, 4), 64);
	assert_int_equal(cfg(f, 48, 4), 32);
	struct seg d[5];
	for (unsigned i = 0; i < 5; i++)
		d[i] = (struct seg){ DATA_GPA + i * 8192u, 512, RD };
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_OUT, 0, d, 5), VIRTIO_BLK_S_IOERR);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 0, DATA_GPA, 8192), VIRTIO_BLK_S_IOERR);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 0, 40, 0), VIRTIO_BLK_S_IOERR);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_DISCARD, 0, 72, 0), VIRTIO_BLK_S_IOERR);
	assert_true(file_hash(f) == before);
	assert_int_equal(req_segs(f, 0, VIRTIO_BLK_T_OUT, 0, d, 4), VIRTIO_BLK_S_OK);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 0, READ_GPA, 4096), VIRTIO_BLK_S_OK);
}

/* Attaches a loop device over the image; false (test skipped) where loop
 * devices are not available (not root, no losetup, no /dev/loop-control). */
static bool attach_loop(struct fx *f)
{
	if (geteuid() != 0 || access("/dev/loop-control", F_OK))
		return false;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "losetup -f --show %s 2>/dev/null", f->path);
	FILE *p = popen(cmd, "r");
	if (!p)
		return false;
	char line[64] = "";
	bool ok = fgets(line, sizeof(line), p) != NULL;
	int st = pclose(p);
	if (!ok || st != 0 || strncmp(line, "/dev/loop", 9))
		return false;
	line[strcspn(line, "\n")] = 0;
	snprintf(f->loopdev, sizeof(f->loopdev), "%s", line);
	return true;
}

static void bdev_discard_and_zeroes(void **state, enum kind k)
{
	struct fx *f = *state;
	if (!attach_loop(f))
		skip();
	if (!start_dev(f, k, false, 1, 0))
		skip();
	struct blk_backend *be = f->blk->be;
	assert_true(be->blkdev);
	assert_int_equal(be->topo.logical_block, 512);
	assert_int_equal(cfg(f, 0, 8), DISK_SECTORS);
	assert_int_equal(cfg(f, 20, 4), 512);
	assert_true(be->can_write_zeroes);
	assert_true(f->offered & (1ull << VIRTIO_BLK_F_WRITE_ZEROES));
	assert_int_equal(cfg(f, 48, 4), BLK_BDEV_MAX_WRITE_ZEROES / 512);
	/* A range beyond one ioctl's bound is refused. */
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 0, BLK_BDEV_MAX_WRITE_ZEROES / 512 + 8, 0),
			 VIRTIO_BLK_S_IOERR);
	/* Data written through the device, then zeroed (BLKZEROOUT), read back
	 * through the device and in the image once flushed. */
	fill(f, DATA_GPA, 8192, 13);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_OUT, 64, DATA_GPA, 8192), VIRTIO_BLK_S_OK);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 64, 8, 0), VIRTIO_BLK_S_OK);
	assert_int_equal(dwz(f, VIRTIO_BLK_T_WRITE_ZEROES, 72, 8, VIRTIO_BLK_DWZ_F_UNMAP),
			 VIRTIO_BLK_S_OK);
	memset(f->ram + READ_GPA, 0xaa, 8192);
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 64, READ_GPA, 8192), VIRTIO_BLK_S_OK);
	assert_true(all_zero(f->ram + READ_GPA, 8192));
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0), VIRTIO_BLK_S_OK);
	uint8_t buf[8192];
	file_read(f, 64 * 512, buf, sizeof(buf));
	assert_true(all_zero(buf, sizeof(buf)));
	/* Discard (BLKDISCARD): a loop device over a file punches a hole. */
	if (be->can_discard) {
		assert_true(f->offered & (1ull << VIRTIO_BLK_F_DISCARD));
		assert_true(cfg(f, 36, 4) >= 8);
		assert_int_equal(dwz(f, VIRTIO_BLK_T_DISCARD, 256, 16, 0), VIRTIO_BLK_S_OK);
		memset(f->ram + READ_GPA, 0xaa, 8192);
		assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 256, READ_GPA, 8192), VIRTIO_BLK_S_OK);
		assert_true(all_zero(f->ram + READ_GPA, 8192));
		/* Not whole blocks of a 4 KiB-block device: shrunk to the blocks covered. */
		assert_int_equal(dwz(f, VIRTIO_BLK_T_DISCARD, 300, 1, 0), VIRTIO_BLK_S_OK);
	} else {
		print_message("loop device without discard here: discard part not run\n");
	}
	/* Sectors outside the ranges are as they were. */
	assert_int_equal(req(f, 0, VIRTIO_BLK_T_IN, 128, READ_GPA, 512), VIRTIO_BLK_S_OK);
	for (uint32_t i = 0; i < 512; i++)
		assert_int_equal(f->ram[READ_GPA + i], file_byte(128 * 512 + i));
}

static void test_block_device_sync(void **state) { bdev_discard_and_zeroes(state, SYNC); }
static void test_block_device_uring(void **state) { bdev_discard_and_zeroes(state, URING); }

int main(void)
{
	log_set_level(LOG_ERROR); /* the guest errors below are expected */
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_config_and_features),
		T(test_multiqueue),
		T(test_open_errors),
		T(test_write_flush_read_sync),
		T(test_write_flush_read_uring),
		T(test_status_shares_last_buffer),
		T(test_get_id),
		T(test_discard_and_write_zeroes),
		T(test_discard_flags_and_unnegotiated_unsupp),
		T(test_config_readable_before_features_ok),
		T(test_config_padding_and_may_unmap),
		T(test_read_only),
		T(test_past_end),
		T(test_sector_overflow),
		T(test_length_not_multiple_of_512),
		T(test_seg_max),
		T(test_size_max),
		T(test_short_header_is_ioerr),
		T(test_missing_status_needs_reset),
		T(test_malformed_chain_needs_reset),
		T(test_unsupported_type),
		T(test_write_eio),
		T(test_write_enospc),
		T(test_short_read_is_resubmitted),
		T(test_short_write_is_resubmitted),
		T(test_read_at_eof_is_ioerr),
		T(test_eintr_is_retried),
		T(test_flush_error_is_latched_until_reset),
		T(test_writethrough_without_flush_feature),
		T(test_uring_completions_on_event_loop_thread),
		T(test_deferred_completion_and_reset),
		T(test_request_pool_exhaustion),
		T(test_inflight_bytes_cap),
		T(test_cancel_stops_between_attempts),
		T(test_used_length_covers_status),
		T(test_unsupported_types_are_unsupp),
		T(test_resize),
		T(test_uring_reaps_inline),
		T(test_uring_big_read_in_chunks),
		T(test_blk_size_and_topology),
		T(test_config_wce),
		T(test_limits_follow_backend),
		T(test_block_device_sync),
		T(test_block_device_uring),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
