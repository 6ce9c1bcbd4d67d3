/* Unit tests for the split virtqueue: a fake driver writes rings into fake guest RAM, virtq reads them. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "virtio/virtq.h"

#define RAM_SIZE   (1u << 20)
#define HOLE_START 0xC0000000ull
#define HOLE_END   0x100000000ull
#define DESC_GPA   0x1000u
#define AVAIL_GPA  0x10000u
#define USED_GPA   0x20000u
#define DATA_GPA   0x40000u
#define IND_GPA    0x60000u   /* indirect tables */
#define IND2_GPA   0x70000u

#define F_NEXT VIRTQ_DESC_F_NEXT
#define F_W    VIRTQ_DESC_F_WRITE
#define F_IND  VIRTQ_DESC_F_INDIRECT

/* Fake guest RAM, one queue and the driver's side of it. */
struct fx {
	uint8_t *ram;
	struct guest_mem gm;
	struct virtq q;
	struct virtq_chain c;
	uint16_t size;
	uint16_t avail_idx; /* the driver's next avail index */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->ram = calloc(1, RAM_SIZE);
	if (!f->ram || guest_mem_init(&f->gm, f->ram, RAM_SIZE, HOLE_START, HOLE_END))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	free(f->ram);
	free(f);
	return 0;
}

/* --- the fake driver --- */

static void wr16(struct fx *f, uint64_t gpa, uint16_t v)
{
	v = htole16(v);
	memcpy(f->ram + gpa, &v, 2);
}

static uint16_t rd16(struct fx *f, uint64_t gpa)
{
	uint16_t v;
	memcpy(&v, f->ram + gpa, 2);
	return le16toh(v);
}

static uint32_t rd32(struct fx *f, uint64_t gpa)
{
	uint32_t v;
	memcpy(&v, f->ram + gpa, 4);
	return le32toh(v);
}

/* Writes entry i of the descriptor table at table_gpa. */
static void put_desc_at(uint8_t *ram, uint64_t table_gpa, uint32_t i, uint64_t addr,
			uint32_t len, uint16_t flags, uint16_t next)
{
	uint8_t *p = ram + table_gpa + (uint64_t)i * 16;
	uint64_t a = htole64(addr);
	uint32_t l = htole32(len);
	uint16_t fl = htole16(flags), n = htole16(next);
	memcpy(p, &a, 8);
	memcpy(p + 8, &l, 4);
	memcpy(p + 12, &fl, 2);
	memcpy(p + 14, &n, 2);
}

static void put_desc(struct fx *f, uint64_t table_gpa, uint32_t i, uint64_t addr, uint32_t len,
		     uint16_t flags, uint16_t next)
{
	put_desc_at(f->ram, table_gpa, i, addr, len, flags, next);
}

static void set_avail_idx(struct fx *f, uint16_t idx)
{
	wr16(f, AVAIL_GPA + 2, idx);
}

/* Makes chain `head` available, as a driver does: ring entry, then index. */
static void publish(struct fx *f, uint16_t head)
{
	wr16(f, AVAIL_GPA + 4 + 2u * (f->avail_idx % f->size), head);
	f->avail_idx++;
	set_avail_idx(f, f->avail_idx);
}

static void start_queue(struct fx *f, uint16_t size, bool event_idx)
{
	f->size = size;
	f->avail_idx = 0;
	assert_int_equal(virtq_init(&f->q, &f->gm, "test q0", size, DESC_GPA, AVAIL_GPA, USED_GPA,
				    event_idx), 0);
	f->q.indirect = true; /* as if negotiated; test_indirect_not_negotiated_refused checks without */
	assert_false(f->q.broken);
}

/* The queue must be broken now and stay broken. */
static void expect_broken(struct fx *f)
{
	uint16_t last = f->q.last_avail;
	assert_int_equal(virtq_pop(&f->q, &f->c), -EIO);
	assert_true(f->q.broken);
	assert_int_equal(f->q.last_avail, last);
	assert_int_equal(virtq_pop(&f->q, &f->c), -EIO);
	assert_false(virtq_has_work(&f->q));
	assert_int_equal(f->q.popped, 0);
}

/* Publishes a single-descriptor chain at 0 whose descriptor is (addr, len, flags). */
static void publish_one(struct fx *f, uint64_t addr, uint32_t len, uint16_t flags)
{
	put_desc(f, DESC_GPA, 0, addr, len, flags, 0);
	publish(f, 0);
}

/* Captures what msivm logs to stderr between start and end. */
struct capture {
	int saved_fd;
	FILE *file;
};

static void capture_start(struct capture *cap)
{
	fflush(stderr);
	cap->file = tmpfile();
	assert_non_null(cap->file);
	cap->saved_fd = dup(STDERR_FILENO);
	assert_true(cap->saved_fd >= 0);
	assert_true(dup2(fileno(cap->file), STDERR_FILENO) >= 0);
}

static void capture_end(struct capture *cap, char *out, size_t n)
{
	fflush(stderr);
	dup2(cap->saved_fd, STDERR_FILENO);
	close(cap->saved_fd);
	rewind(cap->file);
	size_t got = fread(out, 1, n - 1, cap->file);
	out[got] = '\0';
	fclose(cap->file);
}

/* --- virtq_init --- */

static void test_init_accepts_power_of_two_sizes(void **state)
{
	struct fx *f = *state;
	static const uint16_t sizes[] = { 1, 2, 256, 1024 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		assert_int_equal(virtq_init(&f->q, &f->gm, "q", sizes[i], DESC_GPA, AVAIL_GPA,
					    USED_GPA, false), 0);
		assert_int_equal(f->q.size, sizes[i]);
		assert_false(f->q.broken);
	}
	/* The largest queue: 512 KiB of descriptors. */
	assert_int_equal(virtq_init(&f->q, &f->gm, "q", VIRTQ_MAX_SIZE, 0, 0x80000, 0xA0000, true), 0);
	assert_int_equal(f->q.size, VIRTQ_MAX_SIZE);
}

static void expect_init_fails(struct fx *f, uint16_t size, uint64_t desc, uint64_t avail,
			      uint64_t used)
{
	assert_int_equal(virtq_init(&f->q, &f->gm, "bad", size, desc, avail, used, true), -EINVAL);
	assert_true(f->q.broken);
	assert_int_equal(f->q.size, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), -EIO);
	assert_false(virtq_has_work(&f->q));
	/* The other calls are harmless on an unbound queue. */
	virtq_push(&f->q, 0, 0);
	virtq_set_notify(&f->q, true);
	assert_false(virtq_should_notify(&f->q));
}

static void test_init_rejects_bad_sizes(void **state)
{
	struct fx *f = *state;
	static const uint16_t sizes[] = { 0, 3, 100, 0xC000, 0xFFFF, 0x8001 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		expect_init_fails(f, sizes[i], DESC_GPA, AVAIL_GPA, USED_GPA);
}

static void test_init_rejects_misaligned_rings(void **state)
{
	struct fx *f = *state;
	expect_init_fails(f, 16, DESC_GPA + 8, AVAIL_GPA, USED_GPA);
	expect_init_fails(f, 16, DESC_GPA + 1, AVAIL_GPA, USED_GPA);
	expect_init_fails(f, 16, DESC_GPA, AVAIL_GPA + 1, USED_GPA);
	expect_init_fails(f, 16, DESC_GPA, AVAIL_GPA, USED_GPA + 2);
	expect_init_fails(f, 16, DESC_GPA, AVAIL_GPA, USED_GPA + 1);
}

static void test_init_rejects_rings_outside_ram(void **state)
{
	struct fx *f = *state;
	const uint16_t n = 16;
	/* One descriptor past the end, in the MMIO hole, wrapping past 2^64. */
	expect_init_fails(f, n, RAM_SIZE - 16u * n + 16, AVAIL_GPA, USED_GPA);
	expect_init_fails(f, n, HOLE_START, AVAIL_GPA, USED_GPA);
	expect_init_fails(f, n, UINT64_MAX - 15, AVAIL_GPA, USED_GPA);
	/* The avail ring fits only without its used_event field. */
	expect_init_fails(f, n, DESC_GPA, RAM_SIZE - (4 + 2u * n), USED_GPA);
	expect_init_fails(f, n, DESC_GPA, UINT64_MAX - 1, USED_GPA);
	/* The used ring fits only without its avail_event field. */
	expect_init_fails(f, n, DESC_GPA, AVAIL_GPA, RAM_SIZE - (4 + 8u * n));
	expect_init_fails(f, n, DESC_GPA, AVAIL_GPA, UINT64_MAX - 3);
	/* Ending exactly at the end of RAM is fine. */
	assert_int_equal(virtq_init(&f->q, &f->gm, "q", n, RAM_SIZE - 16u * n, AVAIL_GPA, USED_GPA,
				    true), 0);
	assert_int_equal(virtq_init(&f->q, &f->gm, "q", n, DESC_GPA, RAM_SIZE - (6 + 2u * n),
				    USED_GPA, true), 0);
}

static void test_init_rejects_missing_memory(void **state)
{
	struct fx *f = *state;
	assert_int_equal(virtq_init(&f->q, NULL, "q", 16, DESC_GPA, AVAIL_GPA, USED_GPA, false),
			 -EINVAL);
	assert_int_equal(virtq_pop(&f->q, &f->c), -EIO);
}

/* --- good paths --- */

static void test_pop_direct_chain(void **state)
{
	struct fx *f = *state;
	start_queue(f, 16, false);
	assert_int_equal(virtq_pop(&f->q, &f->c), 0);

	/* 4 -> 9 -> 2: two readable buffers, then a writable one. */
	put_desc(f, DESC_GPA, 4, DATA_GPA, 100, F_NEXT, 9);
	put_desc(f, DESC_GPA, 9, DATA_GPA + 0x1000, 200, F_NEXT, 2);
	put_desc(f, DESC_GPA, 2, DATA_GPA + 0x2000, 300, F_W, 7 /* ignored without NEXT */);
	publish(f, 4);

	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.head, 4);
	assert_int_equal(f->c.n_out, 2);
	assert_int_equal(f->c.n_in, 1);
	assert_int_equal(f->c.out_bytes, 300);
	assert_int_equal(f->c.in_bytes, 300);
	assert_ptr_equal(f->c.buf[0].host, f->ram + DATA_GPA);
	assert_int_equal(f->c.buf[0].len, 100);
	assert_ptr_equal(f->c.buf[1].host, f->ram + DATA_GPA + 0x1000);
	assert_int_equal(f->c.buf[1].len, 200);
	assert_ptr_equal(f->c.buf[2].host, f->ram + DATA_GPA + 0x2000);
	assert_int_equal(f->c.buf[2].len, 300);
	assert_int_equal(f->q.last_avail, 1);
	assert_int_equal(f->q.popped, 1);
	assert_int_equal(virtq_pop(&f->q, &f->c), 0);
}

/* 2.7.5.1: the device writes only device-writable buffers. A chain offering a readable buffer
 * where a writable one is expected (a guest's mistake or attack) gets nothing written into it:
 * scatter fills the writable buffer, stops at its end, and leaves the readable bytes alone. */
static void test_scatter_never_writes_readable_buffers(void **state)
{
	struct fx *f = *state;
	start_queue(f, 16, false);
	uint8_t src[96];
	memset(src, 0xab, sizeof(src));
	memset(f->ram + DATA_GPA, 0x11, 0x3000);
	/* Only readable buffers: nothing may be written at all. */
	put_desc(f, DESC_GPA, 0, DATA_GPA, 64, F_NEXT, 1);
	put_desc(f, DESC_GPA, 1, DATA_GPA + 0x1000, 64, 0, 0);
	publish(f, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.n_in, 0);
	virtq_chain_scatter(&f->c, src, sizeof(src));
	for (uint32_t i = 0; i < 0x3000; i++)
		assert_int_equal(f->ram[DATA_GPA + i], 0x11);
	/* Readable, then a 32-byte writable buffer: only those 32 bytes change. */
	put_desc(f, DESC_GPA, 2, DATA_GPA, 64, F_NEXT, 3);
	put_desc(f, DESC_GPA, 3, DATA_GPA + 0x2000, 32, F_W, 0);
	publish(f, 2);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.n_out, 1);
	assert_int_equal(f->c.n_in, 1);
	virtq_chain_scatter(&f->c, src, sizeof(src));
	for (uint32_t i = 0; i < 0x3000; i++)
		assert_int_equal(f->ram[DATA_GPA + i], i >= 0x2000 && i < 0x2020 ? 0xab : 0x11);
}

/* 2.7.5.1 S: the device does not read device-writable buffers: gathering more than the
 * readable part holds leaves the rest of dst untouched instead of copying writable bytes. */
static void test_gather_never_reads_writable_buffers(void **state)
{
	struct fx *f = *state;
	start_queue(f, 16, false);
	memset(f->ram + DATA_GPA, 0x22, 16);
	memset(f->ram + DATA_GPA + 0x1000, 0x33, 64);
	put_desc(f, DESC_GPA, 5, DATA_GPA, 16, F_NEXT, 6);
	put_desc(f, DESC_GPA, 6, DATA_GPA + 0x1000, 64, F_W, 0);
	publish(f, 5);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	uint8_t dst[48];
	memset(dst, 0xee, sizeof(dst));
	virtq_chain_gather(&f->c, 0, dst, sizeof(dst));
	for (uint32_t i = 0; i < sizeof(dst); i++)
		assert_int_equal(dst[i], i < 16 ? 0x22 : 0xee);
	memset(dst, 0xee, sizeof(dst));
	virtq_chain_gather(&f->c, 8, dst, sizeof(dst));
	for (uint32_t i = 0; i < sizeof(dst); i++)
		assert_int_equal(dst[i], i < 8 ? 0x22 : 0xee);
}

static void test_push_fills_used_ring(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	publish_one(f, DATA_GPA, 64, F_W);
	put_desc(f, DESC_GPA, 5, DATA_GPA, 64, F_W, 0);
	publish(f, 5);

	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	virtq_push(&f->q, f->c.head, 42);
	assert_int_equal(rd32(f, USED_GPA + 4), 0);
	assert_int_equal(rd32(f, USED_GPA + 8), 42);
	assert_int_equal(rd16(f, USED_GPA + 2), 1);

	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.head, 5);
	virtq_push(&f->q, f->c.head, 7);
	assert_int_equal(rd32(f, USED_GPA + 4 + 8), 5);
	assert_int_equal(rd32(f, USED_GPA + 8 + 8), 7);
	assert_int_equal(rd16(f, USED_GPA + 2), 2);
	assert_int_equal(f->q.used_idx, 2);
	assert_int_equal(f->q.pushed, 2);
	assert_int_equal(rd16(f, USED_GPA), 0); /* flags untouched */
}

/* Filled elements stay invisible until one flush publishes them all with one index store;
 * should_notify flushes first, and an empty flush stores nothing. */
static void test_fill_publishes_at_flush(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, true);
	for (uint16_t i = 0; i < 3; i++) {
		put_desc(f, DESC_GPA, i, DATA_GPA + 64u * i, 64, F_W, 0);
		publish(f, i);
	}
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(virtq_pop(&f->q, &f->c), 1);
		virtq_fill(&f->q, f->c.head, 10 + i);
		assert_int_equal(rd16(f, USED_GPA + 2), 0);      /* not yet visible */
	}
	assert_int_equal(rd32(f, USED_GPA + 4 + 8 * 2), 2);     /* elements are in place */
	assert_int_equal(rd32(f, USED_GPA + 8 + 8 * 2), 12);
	assert_int_equal(f->q.publishes, 0);
	virtq_flush(&f->q);
	assert_int_equal(rd16(f, USED_GPA + 2), 3);
	assert_int_equal(f->q.publishes, 1);
	virtq_flush(&f->q);
	assert_int_equal(f->q.publishes, 1);                   /* nothing new: no store */
	/* should_notify publishes what is pending before it decides. */
	put_desc(f, DESC_GPA, 3, DATA_GPA, 64, F_W, 0);
	publish(f, 3);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	virtq_fill(&f->q, f->c.head, 1);
	assert_true(virtq_should_notify(&f->q));
	assert_int_equal(rd16(f, USED_GPA + 2), 4);
	assert_int_equal(f->q.publishes, 2);
}

static void test_pop_indirect_chain(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	/* Table entries 0 -> 2 -> 1; the indirect descriptor's WRITE flag is ignored. */
	put_desc(f, IND_GPA, 0, DATA_GPA, 16, F_NEXT, 2);
	put_desc(f, IND_GPA, 2, DATA_GPA + 0x100, 32, F_W | F_NEXT, 1);
	put_desc(f, IND_GPA, 1, DATA_GPA + 0x200, 48, F_W, 0);
	put_desc(f, DESC_GPA, 3, IND_GPA, 3 * 16, F_IND | F_W, 0);
	publish(f, 3);

	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.head, 3);
	assert_int_equal(f->c.n_out, 1);
	assert_int_equal(f->c.n_in, 2);
	assert_int_equal(f->c.out_bytes, 16);
	assert_int_equal(f->c.in_bytes, 80);
	assert_ptr_equal(f->c.buf[0].host, f->ram + DATA_GPA);
	assert_ptr_equal(f->c.buf[1].host, f->ram + DATA_GPA + 0x100);
	assert_int_equal(f->c.buf[1].len, 32);
	assert_ptr_equal(f->c.buf[2].host, f->ram + DATA_GPA + 0x200);
	assert_int_equal(f->c.buf[2].len, 48);
}

/* Regression (hardening review): the walker took indirect descriptors from a
 * driver that never negotiated VIRTIO_F_INDIRECT_DESC. */
static void test_indirect_not_negotiated_refused(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	f->q.indirect = false;
	put_desc(f, IND_GPA, 0, DATA_GPA, 16, F_W, 0);
	put_desc(f, DESC_GPA, 3, IND_GPA, 16, F_IND, 0);
	publish(f, 3);
	expect_broken(f);
}

static void test_pop_indirect_table_unaligned(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, IND_GPA + 3, 0, DATA_GPA, 10, F_NEXT, 1);
	put_desc(f, IND_GPA + 3, 1, DATA_GPA + 10, 20, F_W, 0);
	put_desc(f, DESC_GPA, 0, IND_GPA + 3, 32, F_IND, 0);
	publish(f, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.n_out, 1);
	assert_int_equal(f->c.n_in, 1);
}

static void test_direct_chain_may_end_in_indirect(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 8, F_NEXT, 1);
	put_desc(f, DESC_GPA, 1, IND_GPA, 16, F_IND, 0);
	put_desc(f, IND_GPA, 0, DATA_GPA + 8, 8, F_W, 0);
	publish(f, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.n_out, 1);
	assert_int_equal(f->c.n_in, 1);
	assert_ptr_equal(f->c.buf[1].host, f->ram + DATA_GPA + 8);
}

static void test_zero_length_buffers_are_skipped(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 10, F_NEXT, 1);
	put_desc(f, DESC_GPA, 1, UINT64_MAX, 0, F_NEXT, 2);       /* no buffer, address unused */
	put_desc(f, DESC_GPA, 2, HOLE_START, 0, F_W | F_NEXT, 3);
	put_desc(f, DESC_GPA, 3, DATA_GPA + 0x100, 20, F_W, 0);
	publish(f, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.n_out, 1);
	assert_int_equal(f->c.n_in, 1);
	assert_int_equal(f->c.out_bytes, 10);
	assert_int_equal(f->c.in_bytes, 20);
	assert_ptr_equal(f->c.buf[1].host, f->ram + DATA_GPA + 0x100);
}

static void test_chain_of_queue_size_is_accepted(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	for (uint16_t i = 0; i < 8; i++)
		put_desc(f, DESC_GPA, i, DATA_GPA + i, 1, i < 7 ? F_NEXT : 0, (uint16_t)(i + 1));
	publish(f, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.n_out, 8);
}

static void test_chain_of_max_buffers_is_accepted(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	for (uint32_t i = 0; i < VIRTQ_CHAIN_MAX; i++)
		put_desc(f, IND_GPA, i, DATA_GPA, 1, i + 1 < VIRTQ_CHAIN_MAX ? F_NEXT : 0,
			 (uint16_t)(i + 1));
	put_desc(f, DESC_GPA, 0, IND_GPA, VIRTQ_CHAIN_MAX * 16, F_IND, 0);
	publish(f, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.n_out, VIRTQ_CHAIN_MAX);
	assert_int_equal(f->c.out_bytes, VIRTQ_CHAIN_MAX);
}

static void test_full_ring_is_accepted(void **state)
{
	struct fx *f = *state;
	start_queue(f, 4, false);
	for (uint16_t i = 0; i < 4; i++) {
		put_desc(f, DESC_GPA, i, DATA_GPA, 4, 0, 0);
		publish(f, i);
	}
	for (uint16_t i = 0; i < 4; i++) {
		assert_int_equal(virtq_pop(&f->q, &f->c), 1);
		assert_int_equal(f->c.head, i);
	}
	assert_int_equal(virtq_pop(&f->q, &f->c), 0);
}

static void test_indices_wrap_around(void **state)
{
	struct fx *f = *state;
	start_queue(f, 4, false);
	/* Both sides have been running for a while: indices just below 2^16. */
	f->avail_idx = 65534;
	set_avail_idx(f, 65534);
	wr16(f, USED_GPA + 2, 65534);
	f->q.last_avail = 65534;
	f->q.used_idx = 65534;
	f->q.signalled_used = 65534;
	f->q.signalled_used_valid = true;
	assert_false(virtq_has_work(&f->q));

	for (uint16_t i = 0; i < 3; i++) {
		put_desc(f, DESC_GPA, i, DATA_GPA + i, 1, F_W, 0);
		publish(f, i);
	}
	assert_int_equal(rd16(f, AVAIL_GPA + 2), 1);
	assert_true(virtq_has_work(&f->q));
	for (uint16_t i = 0; i < 3; i++) {
		assert_int_equal(virtq_pop(&f->q, &f->c), 1);
		assert_int_equal(f->c.head, i);
		virtq_push(&f->q, f->c.head, 10u + i);
	}
	assert_int_equal(virtq_pop(&f->q, &f->c), 0);
	assert_false(virtq_has_work(&f->q));
	assert_int_equal(f->q.last_avail, 1);
	assert_int_equal(f->q.used_idx, 1);
	assert_int_equal(rd16(f, USED_GPA + 2), 1);
	/* Used slots 65534 % 4 = 2, then 3, then 0. */
	assert_int_equal(rd32(f, USED_GPA + 4 + 8 * 2), 0);
	assert_int_equal(rd32(f, USED_GPA + 8 + 8 * 2), 10);
	assert_int_equal(rd32(f, USED_GPA + 4 + 8 * 3), 1);
	assert_int_equal(rd32(f, USED_GPA + 4 + 8 * 0), 2);
	assert_int_equal(rd32(f, USED_GPA + 8 + 8 * 0), 12);
	assert_true(virtq_should_notify(&f->q));
	assert_int_equal(f->q.signalled_used, 1);
}

/* Pops and completes one single-buffer chain. */
static void complete_one(struct fx *f)
{
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, F_W, 0);
	publish(f, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	virtq_push(&f->q, f->c.head, 4);
}

#define USED_EVENT_GPA(n) (AVAIL_GPA + 4 + 2u * (n))
#define AVAIL_EVENT_GPA(n) (USED_GPA + 4 + 8u * (n))

static void test_event_idx_notifies_when_crossing_used_event(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, true);
	wr16(f, USED_EVENT_GPA(8), 0);
	complete_one(f);                       /* used idx 1 */
	assert_true(virtq_should_notify(&f->q)); /* nothing signalled yet */
	assert_int_equal(f->q.signalled_used, 1);

	wr16(f, USED_EVENT_GPA(8), 2);         /* "interrupt me when entry 2 is used" */
	complete_one(f);                       /* used idx 2: entry 1 */
	assert_false(virtq_should_notify(&f->q));
	complete_one(f);                       /* used idx 3: entry 2 */
	assert_true(virtq_should_notify(&f->q));
	assert_false(virtq_should_notify(&f->q)); /* nothing new */
	complete_one(f);
	complete_one(f);                       /* used idx 5, event 2 already passed */
	assert_false(virtq_should_notify(&f->q));

	/* Several pushes at once: notify if used_event lies anywhere in the batch. */
	wr16(f, USED_EVENT_GPA(8), 6);
	complete_one(f);
	complete_one(f);
	complete_one(f);                       /* used idx 8, covering entries 5, 6, 7 */
	assert_true(virtq_should_notify(&f->q));
	/* Event idx ignores the NO_INTERRUPT flag. */
	wr16(f, AVAIL_GPA, VIRTQ_AVAIL_F_NO_INTERRUPT);
	wr16(f, USED_EVENT_GPA(8), 8);
	complete_one(f);
	assert_true(virtq_should_notify(&f->q));
}

static void test_event_idx_comparison_wraps(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, true);
	f->avail_idx = 65533;
	set_avail_idx(f, 65533);
	f->q.last_avail = 65533;
	f->q.used_idx = 65533;
	f->q.signalled_used = 65533;
	f->q.signalled_used_valid = true;

	wr16(f, USED_EVENT_GPA(8), 65535);
	complete_one(f);                       /* used idx 65534 */
	assert_false(virtq_should_notify(&f->q));
	complete_one(f);                       /* 65535 */
	complete_one(f);                       /* 0: entry 65535 is used */
	assert_int_equal(f->q.used_idx, 0);
	assert_true(virtq_should_notify(&f->q));

	wr16(f, USED_EVENT_GPA(8), 1);
	complete_one(f);                       /* 1: entry 0 */
	assert_false(virtq_should_notify(&f->q));
	complete_one(f);                       /* 2: entry 1 */
	assert_true(virtq_should_notify(&f->q));
}

static void test_event_idx_renotifies_after_long_silence(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, true);
	wr16(f, USED_EVENT_GPA(8), 0);
	complete_one(f);
	assert_true(virtq_should_notify(&f->q));
	/* 2^15 completions without asking: signalled_used is ambiguous now. */
	for (uint32_t i = 0; i < 0x8000; i++)
		virtq_push(&f->q, 0, 0);
	assert_false(f->q.signalled_used_valid);
	assert_true(virtq_should_notify(&f->q));
}

static void test_no_interrupt_flag_without_event_idx(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	complete_one(f);
	assert_true(virtq_should_notify(&f->q));
	wr16(f, AVAIL_GPA, VIRTQ_AVAIL_F_NO_INTERRUPT);
	complete_one(f);
	assert_false(virtq_should_notify(&f->q));
	wr16(f, AVAIL_GPA, 0);
	complete_one(f);
	assert_true(virtq_should_notify(&f->q));
	assert_int_equal(f->q.signalled_used, 3);
}

static void test_set_notify_writes_used_flags(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	virtq_set_notify(&f->q, false);
	assert_int_equal(rd16(f, USED_GPA), VIRTQ_USED_F_NO_NOTIFY);
	virtq_set_notify(&f->q, true);
	assert_int_equal(rd16(f, USED_GPA), 0);
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 0);
}

static void test_set_notify_writes_avail_event(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, true);
	wr16(f, AVAIL_EVENT_GPA(8), 0xdead);
	complete_one(f);
	complete_one(f);
	virtq_set_notify(&f->q, true);
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 2);
	virtq_set_notify(&f->q, false);         /* behind the avail index: no kick for the next */
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 1);
	assert_int_equal(rd16(f, USED_GPA), 0);  /* flags stay 0 with event idx */
}

/* A Linux driver with EVENT_IDX kicks only when its avail index passes
 * avail_event: pop must keep it at last_avail, or kicks stop after the first. */
static void test_pop_keeps_avail_event_current(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, true);
	wr16(f, AVAIL_EVENT_GPA(8), 0xdead);
	assert_int_equal(virtq_pop(&f->q, &f->c), 0); /* empty: still asks for a kick */
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 0);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, 0, 0);
	publish(f, 0);
	publish(f, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 1);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 2);
	assert_int_equal(virtq_pop(&f->q, &f->c), 0);
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 2);
}

/* A polling device (notifications off) leaves avail_event behind, so an EVENT_IDX driver's next
 * chains send no kick; turning notifications on asks for the next chain again. */
static void test_pop_leaves_avail_event_while_notify_off(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, true);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, 0, 0);
	publish(f, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 1);
	virtq_set_notify(&f->q, false);
	publish(f, 0);
	publish(f, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(virtq_pop(&f->q, &f->c), 0);
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 0); /* behind: the driver passed it, no kick */
	virtq_set_notify(&f->q, true);
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 3);
	publish(f, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 4);
}

/* A device that leaves posted chains unused (waiting for more, as net RX does
 * for a large frame) must still get a kick for the next chain. */
static void test_set_notify_asks_for_the_next_chain(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, true);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, VIRTQ_DESC_F_WRITE, 0);
	publish(f, 0);
	publish(f, 0); /* two chains posted, none popped */
	virtq_set_notify(&f->q, true);
	assert_int_equal(rd16(f, AVAIL_EVENT_GPA(8)), 2);
}

static void test_unpop_returns_the_same_chain_again(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, VIRTQ_DESC_F_WRITE, 0);
	put_desc(f, DESC_GPA, 1, DATA_GPA + 64, 8, VIRTQ_DESC_F_WRITE, 0);
	publish(f, 0);
	publish(f, 1);
	assert_int_equal(virtq_avail_pending(&f->q), 2);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.head, 1);
	virtq_unpop(&f->q, 1);
	assert_int_equal(virtq_avail_pending(&f->q), 1);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(f->c.head, 1);
	assert_int_equal(f->c.in_bytes, 8);
	assert_int_equal(virtq_avail_pending(&f->q), 0);
}

static void test_has_work(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	assert_false(virtq_has_work(&f->q));
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, 0, 0);
	publish(f, 0);
	publish(f, 0);
	assert_true(virtq_has_work(&f->q));
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_true(virtq_has_work(&f->q));
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_false(virtq_has_work(&f->q));
}

/* --- malformed rings --- */

static void test_avail_index_jump_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 16, false);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, 0, 0);
	set_avail_idx(f, 17);
	assert_true(virtq_has_work(&f->q));

	struct capture cap;
	char log[1024];
	capture_start(&cap);
	int ret = virtq_pop(&f->q, &f->c);
	capture_end(&cap, log, sizeof(log));
	assert_int_equal(ret, -EIO);
	assert_non_null(strstr(log, "test q0: avail index jumped from 0 to 17"));
	expect_broken(f);

	/* Fixing the index does not revive the queue. */
	set_avail_idx(f, 1);
	expect_broken(f);
}

static void test_avail_index_backwards_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 16, false);
	set_avail_idx(f, 0xFFFF); /* 65535 ahead, i.e. one behind */
	expect_broken(f);
}

static void test_head_out_of_range_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 16, false);
	publish(f, 16);
	expect_broken(f);
}

static void test_next_out_of_range_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 16, false);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, F_NEXT, 16);
	publish(f, 0);
	expect_broken(f);
}

static void test_two_descriptor_loop_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 16, false);
	put_desc(f, DESC_GPA, 3, DATA_GPA, 4, F_NEXT, 7);
	put_desc(f, DESC_GPA, 7, DATA_GPA, 4, F_NEXT, 3);
	publish(f, 3);
	expect_broken(f);
}

static void test_self_loop_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 16, false);
	put_desc(f, DESC_GPA, 5, DATA_GPA, 4, F_NEXT, 5);
	publish(f, 5);
	expect_broken(f);
}

static void test_zero_length_loop_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 16, false);
	put_desc(f, DESC_GPA, 5, 0, 0, F_NEXT, 5);
	publish(f, 5);
	expect_broken(f);
}

static void test_chain_longer_than_size_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	for (uint16_t i = 0; i < 8; i++)
		put_desc(f, DESC_GPA, i, DATA_GPA + i, 1, F_NEXT, (uint16_t)((i + 1) % 8));
	publish(f, 0);
	expect_broken(f);
}

static void test_indirect_with_next_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, IND_GPA, 0, DATA_GPA, 4, 0, 0);
	put_desc(f, DESC_GPA, 0, IND_GPA, 16, F_IND | F_NEXT, 1);
	put_desc(f, DESC_GPA, 1, DATA_GPA, 4, F_W, 0);
	publish(f, 0);
	expect_broken(f);
}

static void test_nested_indirect_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, IND2_GPA, 0, DATA_GPA, 4, 0, 0);
	put_desc(f, IND_GPA, 0, DATA_GPA, 4, F_NEXT, 1);
	put_desc(f, IND_GPA, 1, IND2_GPA, 16, F_IND, 0);
	put_desc(f, DESC_GPA, 0, IND_GPA, 32, F_IND, 0);
	publish(f, 0);
	expect_broken(f);
}

static void test_indirect_self_reference_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, IND_GPA, 0, IND_GPA, 16, F_IND, 0);
	put_desc(f, DESC_GPA, 0, IND_GPA, 16, F_IND, 0);
	publish(f, 0);
	expect_broken(f);
}

static void expect_indirect_len_rejected(struct fx *f, uint64_t table, uint32_t len)
{
	start_queue(f, 8, false);
	put_desc(f, DESC_GPA, 0, table, len, F_IND, 0);
	publish(f, 0);
	expect_broken(f);
}

static void test_indirect_bad_length_is_rejected(void **state)
{
	struct fx *f = *state;
	expect_indirect_len_rejected(f, IND_GPA, 24);
	expect_indirect_len_rejected(f, IND_GPA, 8);
	expect_indirect_len_rejected(f, IND_GPA, 0);
	expect_indirect_len_rejected(f, IND_GPA, 17);
	/* 32769 entries: inside RAM, but more than a queue may ever hold. */
	expect_indirect_len_rejected(f, 0, (VIRTQ_MAX_SIZE + 1) * 16);
	expect_indirect_len_rejected(f, 0, UINT32_MAX & ~15u);
}

static void test_indirect_table_outside_ram_is_rejected(void **state)
{
	struct fx *f = *state;
	expect_indirect_len_rejected(f, RAM_SIZE - 16, 32);
	expect_indirect_len_rejected(f, RAM_SIZE, 16);
	expect_indirect_len_rejected(f, HOLE_START, 16);
	expect_indirect_len_rejected(f, UINT64_MAX - 15, 32);
}

static void test_indirect_next_out_of_range_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	/* Index 2 is inside the queue size but outside the 2-entry table. */
	put_desc(f, IND_GPA, 0, DATA_GPA, 4, F_NEXT, 2);
	put_desc(f, IND_GPA, 1, DATA_GPA, 4, 0, 0);
	put_desc(f, IND_GPA, 2, DATA_GPA, 4, 0, 0);
	put_desc(f, DESC_GPA, 0, IND_GPA, 32, F_IND, 0);
	publish(f, 0);
	expect_broken(f);
}

static void test_indirect_loop_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, IND_GPA, 0, DATA_GPA, 4, F_NEXT, 1);
	put_desc(f, IND_GPA, 1, DATA_GPA, 4, F_NEXT, 2);
	put_desc(f, IND_GPA, 2, DATA_GPA, 4, F_NEXT, 0);
	put_desc(f, DESC_GPA, 0, IND_GPA, 48, F_IND, 0);
	publish(f, 0);
	expect_broken(f);
}

static void expect_buffer_rejected(struct fx *f, uint64_t addr, uint32_t len)
{
	start_queue(f, 8, false);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, F_NEXT, 1);
	put_desc(f, DESC_GPA, 1, addr, len, F_W, 0);
	publish(f, 0);
	expect_broken(f);
}

static void test_buffer_outside_ram_is_rejected(void **state)
{
	struct fx *f = *state;
	expect_buffer_rejected(f, RAM_SIZE - 10, 11);            /* one byte past the end */
	expect_buffer_rejected(f, RAM_SIZE, 1);
	expect_buffer_rejected(f, HOLE_START, 1);
	expect_buffer_rejected(f, 0xFFFFFFFFFFFFF000ull, 0x2000); /* wraps past 2^64 */
	expect_buffer_rejected(f, UINT64_MAX, 1);
	expect_buffer_rejected(f, 0, RAM_SIZE + 1);
	/* The last byte of RAM is fine. */
	start_queue(f, 8, false);
	publish_one(f, RAM_SIZE - 1, 1, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_ptr_equal(f->c.buf[0].host, f->ram + RAM_SIZE - 1);
}

static void test_readable_after_writable_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, F_W | F_NEXT, 1);
	put_desc(f, DESC_GPA, 1, DATA_GPA, 4, 0, 0);
	publish(f, 0);
	expect_broken(f);
}

static void test_readable_after_writable_in_indirect_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, F_W | F_NEXT, 1);
	put_desc(f, DESC_GPA, 1, IND_GPA, 16, F_IND, 0);
	put_desc(f, IND_GPA, 0, DATA_GPA, 4, 0, 0);
	publish(f, 0);
	expect_broken(f);
}

static void test_zero_length_readable_after_writable_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, F_W | F_NEXT, 1);
	put_desc(f, DESC_GPA, 1, DATA_GPA, 0, 0, 0);
	publish(f, 0);
	expect_broken(f);
}

static void test_too_many_buffers_is_rejected(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	const uint32_t n = VIRTQ_CHAIN_MAX + 1;
	for (uint32_t i = 0; i < n; i++)
		put_desc(f, IND_GPA, i, DATA_GPA, 1, i + 1 < n ? F_NEXT : 0, (uint16_t)(i + 1));
	put_desc(f, DESC_GPA, 0, IND_GPA, n * 16, F_IND, 0);
	publish(f, 0);
	expect_broken(f);
}

static void test_too_many_direct_buffers_is_rejected(void **state)
{
	struct fx *f = *state;
	const uint16_t size = 2048;
	start_queue(f, size, false);
	for (uint16_t i = 0; i < VIRTQ_CHAIN_MAX + 1; i++)
		put_desc(f, DESC_GPA, i, DATA_GPA, 1, i < VIRTQ_CHAIN_MAX ? F_NEXT : 0,
			 (uint16_t)(i + 1));
	publish(f, 0);
	expect_broken(f);
}

/* A chain of more than 4 GiB needs more RAM than the fixture has: map 2 GiB
 * and a bit without reserving it; only the ring pages are ever touched. */
static void test_total_length_overflow_is_rejected(void **state)
{
	(void)state;
	const uint64_t half = 0x80000000ull;
	struct guest_mem gm;
	if (guest_mem_alloc(&gm, half + RAM_SIZE, HOLE_START, HOLE_END)) {
		skip();
		return;
	}
	struct virtq *q = calloc(1, sizeof(*q));
	struct virtq_chain *c = calloc(1, sizeof(*c));
	assert_non_null(q);
	assert_non_null(c);
	assert_int_equal(virtq_init(q, &gm, "big q0", 4, DESC_GPA, AVAIL_GPA, USED_GPA, false), 0);

	/* 2 GiB readable + (2 GiB - 1) writable: exactly UINT32_MAX, accepted. */
	put_desc_at(gm.host, DESC_GPA, 0, RAM_SIZE, (uint32_t)half, F_NEXT, 1);
	put_desc_at(gm.host, DESC_GPA, 1, RAM_SIZE, (uint32_t)(half - 1), F_W, 0);
	/* 2 GiB + 2 GiB: one byte too many. */
	put_desc_at(gm.host, DESC_GPA, 2, RAM_SIZE, (uint32_t)half, F_NEXT, 3);
	put_desc_at(gm.host, DESC_GPA, 3, RAM_SIZE, (uint32_t)half, F_W, 0);
	uint16_t ring[2] = { htole16(0), htole16(2) }, idx = htole16(2);
	memcpy(gm.host + AVAIL_GPA + 4, ring, sizeof(ring));
	memcpy(gm.host + AVAIL_GPA + 2, &idx, 2);

	assert_int_equal(virtq_pop(q, c), 1);
	assert_int_equal(c->out_bytes, 0x80000000u);
	assert_int_equal(c->in_bytes, 0x7fffffffu);
	assert_int_equal(virtq_pop(q, c), -EIO);
	assert_true(q->broken);
	assert_int_equal(virtq_pop(q, c), -EIO);

	free(c);
	free(q);
	guest_mem_free(&gm);
}

static void test_failed_pop_consumes_nothing(void **state)
{
	struct fx *f = *state;
	start_queue(f, 8, false);
	put_desc(f, DESC_GPA, 0, DATA_GPA, 4, 0, 0);
	publish(f, 0);
	put_desc(f, DESC_GPA, 1, DATA_GPA, 4, F_NEXT, 1);
	publish(f, 1);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
	assert_int_equal(virtq_pop(&f->q, &f->c), -EIO);
	assert_int_equal(f->q.last_avail, 1);
	assert_int_equal(f->q.popped, 1);
	/* The good chain popped before the fault can still be completed. */
	virtq_push(&f->q, 0, 0);
	assert_int_equal(rd16(f, USED_GPA + 2), 1);
	/* Re-initialising (a device reset) gives a working queue again. */
	memset(f->ram + AVAIL_GPA, 0, 64);
	start_queue(f, 8, false);
	publish_one(f, DATA_GPA, 4, 0);
	assert_int_equal(virtq_pop(&f->q, &f->c), 1);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_init_accepts_power_of_two_sizes),
		T(test_init_rejects_bad_sizes),
		T(test_init_rejects_misaligned_rings),
		T(test_init_rejects_rings_outside_ram),
		T(test_init_rejects_missing_memory),
		T(test_pop_direct_chain),
		T(test_scatter_never_writes_readable_buffers),
		T(test_gather_never_reads_writable_buffers),
		T(test_push_fills_used_ring),
		T(test_fill_publishes_at_flush),
		T(test_pop_indirect_chain),
		T(test_indirect_not_negotiated_refused),
		T(test_pop_indirect_table_unaligned),
		T(test_direct_chain_may_end_in_indirect),
		T(test_zero_length_buffers_are_skipped),
		T(test_chain_of_queue_size_is_accepted),
		T(test_chain_of_max_buffers_is_accepted),
		T(test_full_ring_is_accepted),
		T(test_indices_wrap_around),
		T(test_event_idx_notifies_when_crossing_used_event),
		T(test_event_idx_comparison_wraps),
		T(test_event_idx_renotifies_after_long_silence),
		T(test_no_interrupt_flag_without_event_idx),
		T(test_set_notify_writes_used_flags),
		T(test_set_notify_writes_avail_event),
		T(test_pop_keeps_avail_event_current),
		T(test_pop_leaves_avail_event_while_notify_off),
		T(test_set_notify_asks_for_the_next_chain),
		T(test_unpop_returns_the_same_chain_again),
		T(test_has_work),
		T(test_avail_index_jump_is_rejected),
		T(test_avail_index_backwards_is_rejected),
		T(test_head_out_of_range_is_rejected),
		T(test_next_out_of_range_is_rejected),
		T(test_two_descriptor_loop_is_rejected),
		T(test_self_loop_is_rejected),
		T(test_zero_length_loop_is_rejected),
		T(test_chain_longer_than_size_is_rejected),
		T(test_indirect_with_next_is_rejected),
		T(test_nested_indirect_is_rejected),
		T(test_indirect_self_reference_is_rejected),
		T(test_indirect_bad_length_is_rejected),
		T(test_indirect_table_outside_ram_is_rejected),
		T(test_indirect_next_out_of_range_is_rejected),
		T(test_indirect_loop_is_rejected),
		T(test_buffer_outside_ram_is_rejected),
		T(test_readable_after_writable_is_rejected),
		T(test_readable_after_writable_in_indirect_is_rejected),
		T(test_zero_length_readable_after_writable_is_rejected),
		T(test_too_many_buffers_is_rejected),
		T(test_too_many_direct_buffers_is_rejected),
		T(test_total_length_overflow_is_rejected),
		T(test_failed_pop_consumes_nothing),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
