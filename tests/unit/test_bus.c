/* Unit tests for the bus: range registration, lookup and access dispatch. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus/bus.h"

/* A fake device that records every access it receives. */
struct fake_dev {
	unsigned reads, writes;
	uint64_t last_offset;
	uint32_t last_len;
	uint8_t last_write[8];
	uint8_t fill; /* byte a read returns */
};

static void fake_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	struct fake_dev *d = opaque;
	d->reads++;
	d->last_offset = offset;
	d->last_len = len;
	memset(data, d->fill, len);
}

static void fake_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct fake_dev *d = opaque;
	d->writes++;
	d->last_offset = offset;
	d->last_len = len;
	memcpy(d->last_write, data, len);
}

static const struct bus_ops fake_ops = { .read = fake_read, .write = fake_write };

static int setup(void **state)
{
	struct bus *bus = calloc(1, sizeof(*bus));
	if (!bus || bus_init(bus, "test"))
		return -1;
	*state = bus;
	return 0;
}

static int teardown(void **state)
{
	bus_destroy(*state);
	free(*state);
	return 0;
}

static void test_register_then_lookup_finds_range(void **state)
{
	struct bus *bus = *state;
	struct fake_dev dev = { 0 };
	assert_int_equal(bus_register(bus, 0x3f8, 8, &fake_ops, &dev, "uart"), 0);

	struct bus_range r;
	memset(&r, 0, sizeof(r));
	assert_int_equal(bus_lookup(bus, 0x3fa, &r), 0);
	assert_true(r.base == 0x3f8);
	assert_true(r.len == 8);
	assert_ptr_equal(r.ops, &fake_ops);
	assert_ptr_equal(r.opaque, &dev);
	assert_string_equal(r.name, "uart");
}

static void test_lookup_on_empty_bus_is_enoent(void **state)
{
	struct bus *bus = *state;
	struct bus_range r;
	assert_int_equal(bus_lookup(bus, 0, &r), -ENOENT);
	assert_int_equal(bus_lookup(bus, UINT64_MAX, &r), -ENOENT);
}

static void test_zero_length_rejected(void **state)
{
	struct bus *bus = *state;
	struct fake_dev dev = { 0 };
	struct bus_range r;
	assert_int_equal(bus_register(bus, 0x100, 0, &fake_ops, &dev, "zero"), -EINVAL);
	assert_int_equal(bus_lookup(bus, 0x100, &r), -ENOENT);
	assert_int_equal(bus->count, 0);
}

static void test_wrapping_range_rejected(void **state)
{
	struct bus *bus = *state;
	struct fake_dev dev = { 0 };
	struct bus_range r;
	assert_int_equal(bus_register(bus, UINT64_MAX - 1, 3, &fake_ops, &dev, "wrap"), -EINVAL);
	assert_int_equal(bus_register(bus, UINT64_MAX, UINT64_MAX, &fake_ops, &dev, "wrap"),
			 -EINVAL);
	assert_int_equal(bus_lookup(bus, UINT64_MAX, &r), -ENOENT);
	assert_int_equal(bus_lookup(bus, 0, &r), -ENOENT);
	assert_int_equal(bus->count, 0);
}

static void test_range_ending_at_top_of_space_accepted(void **state)
{
	struct bus *bus = *state;
	struct fake_dev dev = { 0 };
	struct bus_range r;
	/* [UINT64_MAX - 1, 2^64) ends exactly at the top: it does not wrap. */
	assert_int_equal(bus_register(bus, UINT64_MAX - 1, 2, &fake_ops, &dev, "top"), 0);
	assert_int_equal(bus_lookup(bus, UINT64_MAX, &r), 0);
	assert_true(r.base == UINT64_MAX - 1);
	assert_int_equal(bus_lookup(bus, UINT64_MAX - 2, &r), -ENOENT);
}

static void test_overlap_rejected_in_every_shape(void **state)
{
	struct bus *bus = *state;
	struct fake_dev a = { 0 }, b = { 0 };
	/* Existing range: [0x1000, 0x1100). */
	assert_int_equal(bus_register(bus, 0x1000, 0x100, &fake_ops, &a, "a"), 0);

	static const struct { uint64_t base, len; const char *shape; } cases[] = {
		{ 0x1000, 0x100, "same" },
		{ 0x1010, 0x10, "inside" },
		{ 0x0f00, 0x300, "covering" },
		{ 0x0f00, 0x101, "left edge (last byte on first byte)" },
		{ 0x0ff0, 0x20, "left edge" },
		{ 0x10ff, 0x1, "right edge (last byte)" },
		{ 0x10f0, 0x20, "right edge" },
		{ 0x1000, 0x1, "first byte" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = bus_register(bus, cases[i].base, cases[i].len, &fake_ops, &b, "b");
		if (ret != -EEXIST)
			fail_msg("overlap shape '%s' [0x%llx,+0x%llx) returned %d, want -EEXIST",
				 cases[i].shape, (unsigned long long)cases[i].base,
				 (unsigned long long)cases[i].len, ret);
	}
	assert_int_equal(bus->count, 1);

	struct bus_range r;
	assert_int_equal(bus_lookup(bus, 0x1050, &r), 0);
	assert_ptr_equal(r.opaque, &a);
}

static void test_exactly_adjacent_ranges_accepted(void **state)
{
	struct bus *bus = *state;
	struct fake_dev a = { 0 }, left = { 0 }, right = { 0 };
	assert_int_equal(bus_register(bus, 0x1000, 0x100, &fake_ops, &a, "a"), 0);
	assert_int_equal(bus_register(bus, 0x0f00, 0x100, &fake_ops, &left, "left"), 0);
	assert_int_equal(bus_register(bus, 0x1100, 0x100, &fake_ops, &right, "right"), 0);
	assert_int_equal(bus->count, 3);

	struct bus_range r;
	assert_int_equal(bus_lookup(bus, 0x0fff, &r), 0);
	assert_ptr_equal(r.opaque, &left);
	assert_int_equal(bus_lookup(bus, 0x1000, &r), 0);
	assert_ptr_equal(r.opaque, &a);
	assert_int_equal(bus_lookup(bus, 0x10ff, &r), 0);
	assert_ptr_equal(r.opaque, &a);
	assert_int_equal(bus_lookup(bus, 0x1100, &r), 0);
	assert_ptr_equal(r.opaque, &right);
}

#define NDEVS 40

static void test_many_ranges_out_of_order_found_at_edges(void **state)
{
	struct bus *bus = *state;
	static struct fake_dev devs[NDEVS];
	/* Range k is [k*0x100 + 0x10, k*0x100 + 0x10 + (k+1)*2): gaps between
	 * them. Insert in a scrambled order (7 is coprime with 40), beyond the
	 * initial capacity so the table grows. */
	for (unsigned i = 0; i < NDEVS; i++) {
		unsigned k = (i * 7 + 3) % NDEVS;
		uint64_t base = (uint64_t)k * 0x100 + 0x10, len = (uint64_t)(k + 1) * 2;
		assert_int_equal(bus_register(bus, base, len, &fake_ops, &devs[k], "dev"), 0);
	}
	assert_int_equal(bus->count, NDEVS);
	for (unsigned k = 1; k < bus->count; k++)
		assert_true(bus->ranges[k - 1].base < bus->ranges[k].base);

	for (unsigned k = 0; k < NDEVS; k++) {
		uint64_t base = (uint64_t)k * 0x100 + 0x10, len = (uint64_t)(k + 1) * 2;
		struct bus_range r;
		assert_int_equal(bus_lookup(bus, base, &r), 0);
		assert_ptr_equal(r.opaque, &devs[k]);
		assert_int_equal(bus_lookup(bus, base + len - 1, &r), 0);
		assert_ptr_equal(r.opaque, &devs[k]);
		assert_int_equal(bus_lookup(bus, base - 1, &r), -ENOENT);
		assert_int_equal(bus_lookup(bus, base + len, &r), -ENOENT);
	}
}

static void test_unregister_then_reregister(void **state)
{
	struct bus *bus = *state;
	struct fake_dev a = { 0 }, b = { 0 };
	struct bus_range r;
	assert_int_equal(bus_register(bus, 0x2000, 0x10, &fake_ops, &a, "a"), 0);

	/* Wrong owner or wrong base: nothing released. */
	assert_int_equal(bus_unregister(bus, 0x2000, &b), -ENOENT);
	assert_int_equal(bus_unregister(bus, 0x2001, &a), -ENOENT);
	assert_int_equal(bus_lookup(bus, 0x2000, &r), 0);

	assert_int_equal(bus_unregister(bus, 0x2000, &a), 0);
	assert_int_equal(bus_lookup(bus, 0x2000, &r), -ENOENT);
	assert_int_equal(bus_unregister(bus, 0x2000, &a), -ENOENT);

	/* The space is free again, even for a different device and length. */
	assert_int_equal(bus_register(bus, 0x1ff8, 0x20, &fake_ops, &b, "b"), 0);
	assert_int_equal(bus_lookup(bus, 0x2000, &r), 0);
	assert_ptr_equal(r.opaque, &b);
}

static void test_unclaimed_read_fills_ones_and_counts(void **state)
{
	struct bus *bus = *state;
	struct fake_dev dev = { 0 };
	assert_int_equal(bus_register(bus, 0x100, 8, &fake_ops, &dev, "dev"), 0);

	uint8_t buf[8];
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(bus_read(bus, 0x200, buf, 4), -ENOENT);
	static const uint8_t ones[4] = { 0xff, 0xff, 0xff, 0xff };
	assert_memory_equal(buf, ones, 4);
	assert_int_equal(buf[4], 0x5a); /* only `len` bytes touched */
	assert_int_equal(dev.reads, 0);
	assert_true(bus->unclaimed == 1);
}

static void test_unclaimed_write_not_delivered_and_counted(void **state)
{
	struct bus *bus = *state;
	struct fake_dev dev = { 0 };
	assert_int_equal(bus_register(bus, 0x100, 8, &fake_ops, &dev, "dev"), 0);

	uint32_t v = 0x12345678;
	assert_int_equal(bus_write(bus, 0xff, &v, 1), -ENOENT);
	assert_int_equal(bus_write(bus, 0x108, &v, 4), -ENOENT);
	assert_int_equal(dev.writes, 0);
	assert_int_equal(dev.reads, 0);
	assert_true(bus->unclaimed == 2);

	uint8_t b;
	assert_int_equal(bus_read(bus, 0x0, &b, 1), -ENOENT);
	assert_true(bus->unclaimed == 3); /* reads and writes share the counter */
}

static void test_claimed_access_not_counted_as_unclaimed(void **state)
{
	struct bus *bus = *state;
	struct fake_dev dev = { .fill = 0x42 };
	assert_int_equal(bus_register(bus, 0x100, 8, &fake_ops, &dev, "dev"), 0);
	uint8_t b = 0;
	assert_int_equal(bus_read(bus, 0x100, &b, 1), 0);
	assert_int_equal(b, 0x42);
	assert_int_equal(bus_write(bus, 0x107, &b, 1), 0);
	assert_true(bus->unclaimed == 0);
}

static void test_access_straddling_range_end_not_delivered(void **state)
{
	struct bus *bus = *state;
	struct fake_dev dev = { .fill = 0x11 };
	assert_int_equal(bus_register(bus, 0x100, 8, &fake_ops, &dev, "dev"), 0);

	uint32_t v = 0xdeadbeef;
	/* Bytes 0x106..0x109: two inside, two outside. */
	assert_int_equal(bus_write(bus, 0x106, &v, 4), -ENOENT);
	uint32_t got = 0;
	assert_int_equal(bus_read(bus, 0x106, &got, 4), -ENOENT);
	assert_true(got == 0xffffffffu);
	/* Bytes 0xfe..0x101: straddling the start. */
	assert_int_equal(bus_read(bus, 0xfe, &got, 4), -ENOENT);
	assert_int_equal(dev.reads, 0);
	assert_int_equal(dev.writes, 0);
	assert_true(bus->unclaimed == 3);

	/* The widest access ending exactly at the last byte is delivered. */
	assert_int_equal(bus_write(bus, 0x104, &v, 4), 0);
	assert_int_equal(dev.writes, 1);
}

/* Regression: offset + len used to wrap to 0 when the range starts at 0 and
 * the access ends at 2^64-1, so a straddling access reached the device. */
static void test_access_straddling_end_of_huge_range_not_delivered(void **state)
{
	struct bus *bus = *state;
	struct fake_dev dev = { .fill = 0x11 };
	assert_int_equal(bus_register(bus, 0, UINT64_MAX, &fake_ops, &dev, "all"), 0);
	struct bus_range r;
	assert_int_equal(bus_lookup(bus, UINT64_MAX, &r), -ENOENT);

	uint32_t v = 0x01020304;
	assert_int_equal(bus_write(bus, UINT64_MAX - 3, &v, 4), -ENOENT);
	uint16_t got = 0;
	assert_int_equal(bus_read(bus, UINT64_MAX - 1, &got, 2), -ENOENT);
	assert_int_equal(got, 0xffff);
	assert_int_equal(dev.writes, 0);
	assert_int_equal(dev.reads, 0);
	assert_true(bus->unclaimed == 2);

	/* An access ending on the last claimed byte is still delivered. */
	assert_int_equal(bus_write(bus, UINT64_MAX - 4, &v, 4), 0);
	assert_int_equal(dev.writes, 1);
}

static void test_access_straddling_adjacent_ranges_not_delivered(void **state)
{
	struct bus *bus = *state;
	struct fake_dev a = { 0 }, b = { 0 };
	assert_int_equal(bus_register(bus, 0x100, 4, &fake_ops, &a, "a"), 0);
	assert_int_equal(bus_register(bus, 0x104, 4, &fake_ops, &b, "b"), 0);
	uint16_t v = 0xabcd;
	assert_int_equal(bus_write(bus, 0x103, &v, 2), -ENOENT);
	assert_int_equal(a.writes + b.writes, 0);
}

static void test_bad_access_lengths_unclaimed(void **state)
{
	struct bus *bus = *state;
	struct fake_dev dev = { 0 };
	assert_int_equal(bus_register(bus, 0x100, 0x100, &fake_ops, &dev, "dev"), 0);
	uint8_t buf[16] = { 0 };
	assert_int_equal(bus_write(bus, 0x100, buf, 0), -ENOENT);
	assert_int_equal(bus_write(bus, 0x100, buf, 9), -ENOENT);
	assert_int_equal(dev.writes, 0);
}

static void test_handler_offsets_are_relative_to_base(void **state)
{
	struct bus *bus = *state;
	struct fake_dev dev = { .fill = 0x77 };
	assert_int_equal(bus_register(bus, 0xfee00000, 0x1000, &fake_ops, &dev, "dev"), 0);

	uint32_t v = 0xcafef00d;
	assert_int_equal(bus_write(bus, 0xfee00320, &v, 4), 0);
	assert_int_equal(dev.writes, 1);
	assert_true(dev.last_offset == 0x320);
	assert_int_equal(dev.last_len, 4);
	assert_memory_equal(dev.last_write, &v, 4);

	uint16_t got = 0;
	assert_int_equal(bus_read(bus, 0xfee00ffe, &got, 2), 0);
	assert_int_equal(dev.reads, 1);
	assert_true(dev.last_offset == 0xffe);
	assert_int_equal(dev.last_len, 2);
	assert_int_equal(got, 0x7777);
}

static void test_missing_read_hook_reads_ones(void **state)
{
	struct bus *bus = *state;
	static const struct bus_ops write_only = { .write = fake_write };
	struct fake_dev dev = { 0 };
	assert_int_equal(bus_register(bus, 0x80, 4, &write_only, &dev, "wo"), 0);
	uint16_t got = 0;
	assert_int_equal(bus_read(bus, 0x81, &got, 2), 0);
	assert_int_equal(got, 0xffff);
	assert_true(bus->unclaimed == 0);
}

/* A device whose write handler moves itself on the bus it is dispatched from.
 * If the bus held its lock across the call, bus_unregister/bus_register
 * (write lock) would deadlock against the read lock taken for dispatch. */
struct mover {
	struct bus *bus;
	uint64_t base;
	int unreg_ret, reg_ret;
	unsigned calls;
};

static void mover_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct mover *m = opaque;
	m->calls++;
	static const struct bus_ops ops_self = { .write = mover_write };
	m->unreg_ret = bus_unregister(m->bus, m->base, m);
	m->base += 0x1000;
	m->reg_ret = bus_register(m->bus, m->base, 0x10, &ops_self, m, "mover");
}

static const struct bus_ops mover_ops = { .write = mover_write };

static void test_handler_may_reregister_during_dispatch(void **state)
{
	struct bus *bus = *state;
	struct mover m = { .bus = bus, .base = 0x4000 };
	assert_int_equal(bus_register(bus, 0x4000, 0x10, &mover_ops, &m, "mover"), 0);

	uint8_t b = 1;
	alarm(10); /* a deadlock kills the test instead of hanging `make unit` */
	assert_int_equal(bus_write(bus, 0x4004, &b, 1), 0);
	alarm(0);
	assert_int_equal(m.calls, 1);
	assert_int_equal(m.unreg_ret, 0);
	assert_int_equal(m.reg_ret, 0);

	struct bus_range r;
	assert_int_equal(bus_lookup(bus, 0x4004, &r), -ENOENT);
	assert_int_equal(bus_lookup(bus, 0x5004, &r), 0);
	assert_ptr_equal(r.opaque, &m);

	/* The moved device is reachable at its new place. */
	assert_int_equal(bus_write(bus, 0x5000, &b, 1), 0);
	assert_int_equal(m.calls, 2);
	assert_int_equal(bus_write(bus, 0x5000, &b, 1), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_register_then_lookup_finds_range),
		T(test_lookup_on_empty_bus_is_enoent),
		T(test_zero_length_rejected),
		T(test_wrapping_range_rejected),
		T(test_range_ending_at_top_of_space_accepted),
		T(test_overlap_rejected_in_every_shape),
		T(test_exactly_adjacent_ranges_accepted),
		T(test_many_ranges_out_of_order_found_at_edges),
		T(test_unregister_then_reregister),
		T(test_unclaimed_read_fills_ones_and_counts),
		T(test_unclaimed_write_not_delivered_and_counted),
		T(test_claimed_access_not_counted_as_unclaimed),
		T(test_access_straddling_range_end_not_delivered),
		T(test_access_straddling_end_of_huge_range_not_delivered),
		T(test_access_straddling_adjacent_ranges_not_delivered),
		T(test_bad_access_lengths_unclaimed),
		T(test_handler_offsets_are_relative_to_base),
		T(test_missing_read_hook_reads_ones),
		T(test_handler_may_reregister_during_dispatch),
#undef T
	};
	return cmocka_run_group_tests_name("bus", tests, NULL, NULL);
}
