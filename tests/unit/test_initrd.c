/* Unit tests for initrd placement (initrd_place) and the PVH extras (RSDP, initrd as module 0). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/initrd.h"
#include "arch/x86/layout.h"
#include "arch/x86/pvh.h"
#include "core/guest_mem.h"

#define RAM_SIZE (32 * MiB)

static uint8_t ram[RAM_SIZE];

static void init(struct guest_mem *gm, uint64_t size)
{
	assert_int_equal(guest_mem_init(gm, ram, size, MMIO_HOLE_START, MMIO_HOLE_END), 0);
}

static void test_low_ram_top(void **state)
{
	struct guest_mem gm;
	init(&gm, RAM_SIZE);
	assert_int_equal(low_ram_top(&gm), RAM_SIZE);
	/* With RAM above 4 GiB, only the part below the hole counts. */
	assert_int_equal(guest_mem_init(&gm, ram, 4 * GiB, MMIO_HOLE_START, MMIO_HOLE_END), 0);
	assert_int_equal(low_ram_top(&gm), MMIO_HOLE_START);
}

static void test_highest_page_aligned_slot(void **state)
{
	struct guest_mem gm;
	struct error err;
	uint64_t a = 0;
	init(&gm, RAM_SIZE);
	assert_int_equal(initrd_place(&gm, 4096, 2 * MiB, UINT64_MAX, &a, &err), 0);
	assert_int_equal(a, RAM_SIZE - 4096);
	assert_int_equal(initrd_place(&gm, 4097, 2 * MiB, UINT64_MAX, &a, &err), 0);
	assert_int_equal(a, RAM_SIZE - 8192);
	/* The limit wins when it is lower than RAM; it is exclusive. */
	assert_int_equal(initrd_place(&gm, 100, 2 * MiB, 8 * MiB, &a, &err), 0);
	assert_int_equal(a, 8 * MiB - 4096);
}

static void test_exact_fit_above_floor(void **state)
{
	struct guest_mem gm;
	struct error err;
	uint64_t a = 0;
	init(&gm, RAM_SIZE);
	/* Floor rounded up to a page: [20 MiB + 4 KiB, 32 MiB) holds 12 MiB - 4 KiB. */
	uint64_t floor = 20 * MiB + 1;
	assert_int_equal(initrd_place(&gm, 12 * MiB - 4096, floor, UINT64_MAX, &a, &err), 0);
	assert_int_equal(a, 20 * MiB + 4096);
	assert_int_equal(initrd_place(&gm, 12 * MiB - 4095, floor, UINT64_MAX, &a, &err), -ENOSPC);
	assert_non_null(strstr(err.msg, "initrd"));
	assert_non_null(strstr(err.msg, "does not fit"));
}

static void test_too_big_and_empty_rejected(void **state)
{
	struct guest_mem gm;
	struct error err;
	uint64_t a = 7;
	init(&gm, RAM_SIZE);
	assert_int_equal(initrd_place(&gm, RAM_SIZE + 1, 0, UINT64_MAX, &a, &err), -ENOSPC);
	assert_int_equal(initrd_place(&gm, UINT64_MAX, 0, UINT64_MAX, &a, &err), -ENOSPC);
	assert_int_equal(initrd_place(&gm, 0, 0, UINT64_MAX, &a, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "empty"));
	assert_int_equal(a, 7);
}

/* Regression (hardening review, defect 5): a kernel ending below 1 MiB let a
 * large initrd reach down over the legacy area and the ACPI tables. */
static void test_never_below_1mib(void **state)
{
	struct guest_mem gm;
	struct error err;
	uint64_t a = 0;
	init(&gm, 16 * MiB);
	uint64_t kernel_end = 0x90000;
	assert_int_equal(initrd_place(&gm, 15 * MiB, kernel_end, UINT64_MAX, &a, &err), 0);
	assert_int_equal(a, HIGH_MEM_START);
	assert_int_equal(initrd_place(&gm, 15 * MiB + 1, kernel_end, UINT64_MAX, &a, &err),
			 -ENOSPC);
	assert_int_equal(initrd_place(&gm, 15 * MiB + 300 * KiB, 0, UINT64_MAX, &a, &err), -ENOSPC);
}

/* Found by fuzz_initrd: a floor within a page of 2^64 rounded up to 0. */
static void test_floor_near_2_64_refused(void **state)
{
	struct guest_mem gm;
	struct error err;
	uint64_t a = 7;
	init(&gm, RAM_SIZE);
	assert_int_equal(initrd_place(&gm, 4096, UINT64_MAX - 100, UINT64_MAX, &a, &err), -ENOSPC);
	assert_int_equal(initrd_place(&gm, 4096, UINT64_MAX - 4095, UINT64_MAX, &a, &err), -ENOSPC);
	assert_int_equal(a, 7);
}

static void test_pvh_extras(void **state)
{
	struct guest_mem gm;
	struct error err;
	init(&gm, RAM_SIZE);
	memset(ram, 0xcc, 1 * MiB);
	assert_int_equal(pvh_write_start_info(&gm, "x", &err), 0);
	struct hvm_start_info si;
	/* No initrd: only the RSDP. */
	assert_int_equal(pvh_set_boot_extras(&gm, 0xe0000, 0, 0, &err), 0);
	memcpy(&si, ram + PVH_START_INFO, sizeof(si));
	assert_int_equal(si.rsdp_paddr, 0xe0000);
	assert_int_equal(si.nr_modules, 0);
	assert_int_equal(si.modlist_paddr, 0);
	/* With one: module 0 at PVH_MODLIST. */
	assert_int_equal(pvh_set_boot_extras(&gm, 0xe0000, 30 * MiB, 12345, &err), 0);
	memcpy(&si, ram + PVH_START_INFO, sizeof(si));
	assert_int_equal(si.nr_modules, 1);
	assert_int_equal(si.modlist_paddr, PVH_MODLIST);
	struct hvm_modlist_entry m;
	memcpy(&m, ram + PVH_MODLIST, sizeof(m));
	assert_int_equal(m.paddr, 30 * MiB);
	assert_int_equal(m.size, 12345);
	assert_int_equal(m.cmdline_paddr, 0);
	/* The memory map after it is intact. */
	assert_int_equal(si.memmap_paddr, PVH_MEMMAP);
	assert_true(PVH_MODLIST + sizeof(m) <= PVH_MEMMAP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_low_ram_top),
		cmocka_unit_test(test_highest_page_aligned_slot),
		cmocka_unit_test(test_exact_fit_above_floor),
		cmocka_unit_test(test_too_big_and_empty_rejected),
		cmocka_unit_test(test_never_below_1mib),
		cmocka_unit_test(test_floor_near_2_64_refused),
		cmocka_unit_test(test_pvh_extras),
	};
	return cmocka_run_group_tests_name("initrd", tests, NULL, NULL);
}
