/* Unit tests for the e820 map and guest_mem's bounds-checked translation. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>

#include "arch/x86/e820.h"
#include "arch/x86/layout.h"
#include "core/guest_mem.h"

static void assert_entry(const struct e820_entry *e, uint64_t addr, uint64_t size, uint32_t type)
{
	if (e->addr != addr || e->size != size || e->type != type)
		fail_msg("entry {0x%llx, 0x%llx, %u}, want {0x%llx, 0x%llx, %u}",
			 (unsigned long long)e->addr, (unsigned long long)e->size, e->type,
			 (unsigned long long)addr, (unsigned long long)size, type);
}

static void test_e820_256m(void **state)
{
	static uint8_t dummy;
	struct guest_mem gm;
	/* e820_build only reads the region table: no RAM needed behind it. */
	assert_int_equal(guest_mem_init(&gm, &dummy, 256 * MiB, MMIO_HOLE_START, MMIO_HOLE_END), 0);
	struct e820_entry map[E820_MAX_ENTRIES];
	assert_int_equal(e820_build(&gm, map), 3);
	assert_entry(&map[0], 0, 0xA0000, E820_RAM);
	assert_entry(&map[1], 0xA0000, 0x100000 - 0xA0000, E820_RESERVED);
	assert_entry(&map[2], 1 * MiB, 256 * MiB - 1 * MiB, E820_RAM);
}

static void test_e820_4g_splits_around_mmio_hole(void **state)
{
	struct guest_mem gm;
	/* Reserve-free anonymous mapping: the pages are never touched. */
	assert_int_equal(guest_mem_alloc(&gm, 4 * GiB, MMIO_HOLE_START, MMIO_HOLE_END), 0);
	struct e820_entry map[E820_MAX_ENTRIES];
	assert_int_equal(e820_build(&gm, map), 4);
	assert_entry(&map[0], 0, 0xA0000, E820_RAM);
	assert_entry(&map[1], 0xA0000, 0x100000 - 0xA0000, E820_RESERVED);
	assert_entry(&map[2], 1 * MiB, 0xC0000000ULL - 1 * MiB, E820_RAM);
	assert_entry(&map[3], 0x100000000ULL, 1 * GiB, E820_RAM);
	guest_mem_free(&gm);
}

static void test_e820_ram_ending_at_hole_has_no_high_entry(void **state)
{
	static uint8_t dummy;
	struct guest_mem gm;
	assert_int_equal(guest_mem_init(&gm, &dummy, MMIO_HOLE_START, MMIO_HOLE_START,
					MMIO_HOLE_END), 0);
	struct e820_entry map[E820_MAX_ENTRIES];
	assert_int_equal(e820_build(&gm, map), 3);
	assert_entry(&map[2], 1 * MiB, MMIO_HOLE_START - 1 * MiB, E820_RAM);
}

/* guest_mem over a small buffer with a small hole, so every edge is cheap:
 * 3 MiB of RAM, hole [2 MiB, 4 MiB): RAM is [0, 2M) and [4M, 5M). */
#define GM_SIZE   (3 * MiB)
#define GM_HOLE_S (2 * MiB)
#define GM_HOLE_E (4 * MiB)

struct fixture {
	struct guest_mem gm;
	uint8_t *buf;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->buf = calloc(1, GM_SIZE);
	if (!f->buf || guest_mem_init(&f->gm, f->buf, GM_SIZE, GM_HOLE_S, GM_HOLE_E))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	free(f->buf);
	free(f);
	return 0;
}

static void test_gm_ptr_translates_both_regions(void **state)
{
	struct fixture *f = *state;
	assert_ptr_equal(gm_ptr(&f->gm, 0, 1), f->buf);
	assert_ptr_equal(gm_ptr(&f->gm, 0x1234, 16), f->buf + 0x1234);
	/* The high region follows the low one in the host buffer. */
	assert_ptr_equal(gm_ptr(&f->gm, GM_HOLE_E, 1), f->buf + GM_HOLE_S);
	assert_ptr_equal(gm_ptr(&f->gm, GM_HOLE_E + 0x10, 8), f->buf + GM_HOLE_S + 0x10);
}

static void test_gm_ptr_last_byte_ok_one_past_fails(void **state)
{
	struct fixture *f = *state;
	/* Low region end. */
	assert_ptr_equal(gm_ptr(&f->gm, GM_HOLE_S - 1, 1), f->buf + GM_HOLE_S - 1);
	assert_ptr_equal(gm_ptr(&f->gm, GM_HOLE_S - 8, 8), f->buf + GM_HOLE_S - 8);
	assert_null(gm_ptr(&f->gm, GM_HOLE_S - 8, 9));
	/* High region end. */
	uint64_t top = GM_HOLE_E + (GM_SIZE - GM_HOLE_S);
	assert_ptr_equal(gm_ptr(&f->gm, top - 1, 1), f->buf + GM_SIZE - 1);
	assert_null(gm_ptr(&f->gm, top, 1));
	assert_null(gm_ptr(&f->gm, top - 1, 2));
	/* The whole of each region is one valid range. */
	assert_non_null(gm_ptr(&f->gm, 0, GM_HOLE_S));
	assert_null(gm_ptr(&f->gm, 0, GM_HOLE_S + 1));
}

static void test_gm_ptr_huge_len_fails(void **state)
{
	struct fixture *f = *state;
	assert_null(gm_ptr(&f->gm, 0, GM_SIZE));
	assert_null(gm_ptr(&f->gm, 0, 1ULL << 40));
	assert_null(gm_ptr(&f->gm, 0, UINT64_MAX));
	assert_null(gm_ptr(&f->gm, GM_HOLE_E, UINT64_MAX));
}

static void test_gm_ptr_in_hole_fails(void **state)
{
	struct fixture *f = *state;
	assert_null(gm_ptr(&f->gm, GM_HOLE_S, 1));
	assert_null(gm_ptr(&f->gm, GM_HOLE_E - 1, 1));
	assert_null(gm_ptr(&f->gm, (GM_HOLE_S + GM_HOLE_E) / 2, 4));
	/* A range spanning the hole touches two regions: not one RAM range. */
	assert_null(gm_ptr(&f->gm, GM_HOLE_S - 4, GM_HOLE_E - GM_HOLE_S + 8));
}

static void test_gm_ptr_overflowing_gpa_plus_len_fails(void **state)
{
	struct fixture *f = *state;
	/* gpa + len wraps to a small address inside RAM. */
	assert_null(gm_ptr(&f->gm, 0x1000, UINT64_MAX - 0xfff + 0x10));
	assert_null(gm_ptr(&f->gm, UINT64_MAX, 2));
	assert_null(gm_ptr(&f->gm, UINT64_MAX - 0x10, 0x20));
	assert_false(gm_contains(&f->gm, 0x1000, UINT64_MAX));
}

static void test_guest_mem_init_rejects_bad_arguments(void **state)
{
	static uint8_t dummy;
	struct guest_mem gm;
	assert_int_equal(guest_mem_init(&gm, NULL, MiB, GM_HOLE_S, GM_HOLE_E), -EINVAL);
	assert_int_equal(guest_mem_init(&gm, &dummy, 0, GM_HOLE_S, GM_HOLE_E), -EINVAL);
	assert_int_equal(guest_mem_init(&gm, &dummy, MiB, GM_HOLE_E, GM_HOLE_S), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_e820_256m),
		cmocka_unit_test(test_e820_4g_splits_around_mmio_hole),
		cmocka_unit_test(test_e820_ram_ending_at_hole_has_no_high_entry),
		cmocka_unit_test_setup_teardown(test_gm_ptr_translates_both_regions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gm_ptr_last_byte_ok_one_past_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_gm_ptr_huge_len_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gm_ptr_in_hole_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gm_ptr_overflowing_gpa_plus_len_fails, setup,
						teardown),
		cmocka_unit_test(test_guest_mem_init_rejects_bad_arguments),
	};
	return cmocka_run_group_tests_name("e820", tests, NULL, NULL);
}
