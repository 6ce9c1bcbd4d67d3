/* Unit tests for --testdev's devices: fw_cfg (keys, byte order, rewinds, read-only) and pc-testdev
 * (scratch register views, page flush, IRQ lines, MMIO scratch, refusals). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "devices/fw_cfg.h"
#include "devices/pc_testdev.h"
#include "devices/pm_timer.h"

static void sel(struct fw_cfg *fw, uint16_t key)
{
	fw_cfg_ops.write(fw, 0, &key, 2);
}

static uint64_t get(struct fw_cfg *fw, uint16_t key, unsigned n)
{
	sel(fw, key);
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++) {
		uint8_t b = 0xee;
		fw_cfg_ops.read(fw, 1, &b, 1);
		v |= (uint64_t)b << (8 * i);
	}
	return v;
}

static void test_fw_cfg_keys(void **state)
{
	struct fw_cfg fw;
	assert_int_equal(fw_cfg_init(&fw, 0x123456789aULL, 3), 0);
	sel(&fw, FW_CFG_SIGNATURE);
	char sig[5] = { 0 };
	for (int i = 0; i < 4; i++)
		fw_cfg_ops.read(&fw, 1, &sig[i], 1);
	assert_string_equal(sig, "QEMU");
	assert_int_equal(get(&fw, FW_CFG_ID, 4), 1);
	assert_int_equal(get(&fw, FW_CFG_RAM_SIZE, 8), 0x123456789aULL);
	assert_int_equal(get(&fw, FW_CFG_NB_CPUS, 2), 3);
	assert_int_equal(get(&fw, FW_CFG_MAX_CPUS, 2), 3);
	assert_int_equal(get(&fw, FW_CFG_NOGRAPHIC, 2), 1);
	/* Unknown keys (kvm-unit-tests' MAX_RAM 0x11 among them) and bytes past an item read 0. */
	assert_int_equal(get(&fw, 0x11, 8), 0);
	assert_int_equal(get(&fw, 0xffff, 8), 0);
	assert_int_equal(get(&fw, FW_CFG_NB_CPUS, 8), 3);
	/* Selecting again rewinds; a 1-byte selector write works too. */
	sel(&fw, FW_CFG_RAM_SIZE);
	uint8_t b;
	fw_cfg_ops.read(&fw, 1, &b, 1);
	assert_int_equal(b, 0x9a);
	uint8_t key8 = FW_CFG_RAM_SIZE;
	fw_cfg_ops.write(&fw, 0, &key8, 1);
	fw_cfg_ops.read(&fw, 1, &b, 1);
	assert_int_equal(b, 0x9a);
	fw_cfg_destroy(&fw);
}

static void test_fw_cfg_read_only(void **state)
{
	struct fw_cfg fw;
	assert_int_equal(fw_cfg_init(&fw, 64 << 20, 1), 0);
	uint8_t v = 7;
	fw_cfg_ops.write(&fw, 1, &v, 1);          /* data port write: ignored, counted */
	assert_int_equal(fw.writes_ignored, 1);
	uint32_t w = 0x5;
	fw_cfg_ops.write(&fw, 0, &w, 4);          /* can't happen (range is 2), refused anyway */
	assert_int_equal(fw.writes_ignored, 2);
	assert_int_equal(get(&fw, FW_CFG_RAM_SIZE, 8), 64 << 20);
	/* Reads other than a byte at the data port give zeros and do not advance. */
	uint16_t r = 0xffff;
	fw_cfg_ops.read(&fw, 0, &r, 2);
	assert_int_equal(r, 0);
	sel(&fw, FW_CFG_SIGNATURE);
	fw_cfg_ops.read(&fw, 1, &r, 2);
	assert_int_equal(r, 0);
	uint8_t b;
	fw_cfg_ops.read(&fw, 1, &b, 1);
	assert_int_equal(b, 'Q');
	/* Reading far past an item never wraps back into it. */
	sel(&fw, FW_CFG_SIGNATURE);
	for (int i = 0; i < 10000; i++)
		fw_cfg_ops.read(&fw, 1, &b, 1);
	assert_int_equal(b, 0);
	fw_cfg_destroy(&fw);
}

struct lines {
	int level[PC_TESTDEV_IRQ_LINES];
	unsigned calls;
};

static void set_level(void *opaque, uint32_t gsi, int level)
{
	struct lines *l = opaque;
	assert_true(gsi < PC_TESTDEV_IRQ_LINES);
	l->level[gsi] = level;
	l->calls++;
}

static uint8_t *ram;
static struct guest_mem gm;
static struct pc_testdev *dev;
static struct lines lines;

static int setup(void **state)
{
	ram = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ram == MAP_FAILED)
		return -1;
	if (guest_mem_init(&gm, ram, 1 << 20, 0xC0000000ULL, 0x100000000ULL))
		return -1;
	dev = test_malloc(sizeof(*dev));
	memset(&lines, 0, sizeof(lines));
	return pc_testdev_init(dev, &gm, (struct irq_line){ set_level, &lines, 0 });
}

static int teardown(void **state)
{
	pc_testdev_destroy(dev);
	test_free(dev);
	munmap(ram, 1 << 20);
	return 0;
}

static void test_scratch_register(void **state)
{
	uint32_t v = 0x11223344, r = 0;
	pc_testdev_ioport_ops.write(dev, 0, &v, 4);
	pc_testdev_ioport_ops.read(dev, 0, &r, 4);
	assert_int_equal(r, 0x11223344);
	uint8_t b = 0;
	pc_testdev_ioport_ops.read(dev, 2, &b, 1);
	assert_int_equal(b, 0x22);
	uint16_t w = 0xaabb;
	pc_testdev_ioport_ops.write(dev, 1, &w, 2);  /* bytes 1-2 */
	pc_testdev_ioport_ops.read(dev, 0, &r, 4);
	assert_int_equal(r, 0x11aabb44);
	/* 0xe8 is the same register (its handler is the same ops on the same device). */
	assert_int_equal(dev->ioport_data, 0x11aabb44);
}

static void test_flush_page(void **state)
{
	ram[0x5123] = 0x77;
	uint32_t a = 0x5123;
	pc_testdev_flush_ops.write(dev, 0, &a, 4);
	assert_int_equal(dev->flushes, 1);
	ram[0x5000] = 0x66;                /* still writable after the flush */
	assert_int_equal(ram[0x5123], 0x77); /* and its data kept */
	/* Outside RAM, or not a 32-bit write: refused, counted, nothing flushed. */
	a = 0x200000;
	pc_testdev_flush_ops.write(dev, 0, &a, 4);
	uint16_t w = 0x5000;
	pc_testdev_flush_ops.write(dev, 0, &w, 2);
	assert_int_equal(dev->flushes, 1);
	assert_int_equal(dev->bad, 2);
	uint32_t r = 0xffffffff;
	pc_testdev_flush_ops.read(dev, 0, &r, 4);
	assert_int_equal(r, 0);
}

static void test_irq_lines(void **state)
{
	uint8_t one = 1, zero = 0, big = 0x80;
	pc_testdev_irq_ops.write(dev, 0x0e, &one, 1);
	assert_int_equal(lines.level[0x0e], 1);
	pc_testdev_irq_ops.write(dev, 0x0e, &zero, 1);
	assert_int_equal(lines.level[0x0e], 0);
	pc_testdev_irq_ops.write(dev, 23, &big, 1);
	assert_int_equal(lines.level[23], 1);
	assert_int_equal(lines.calls, 3);
	/* outl 1 to 0x200b (realmode's IRQ 11): line 11 up, 12-14 down, one byte each. */
	lines.level[12] = lines.level[13] = lines.level[14] = 1;
	uint32_t l = 1;
	pc_testdev_irq_ops.write(dev, 11, &l, 4);
	assert_int_equal(lines.calls, 7);
	assert_int_equal(lines.level[11], 1);
	assert_int_equal(lines.level[12] | lines.level[13] | lines.level[14], 0);
	uint16_t w = 0x0100;
	pc_testdev_irq_ops.write(dev, 2, &w, 2);
	assert_int_equal(lines.level[2], 0);
	assert_int_equal(lines.level[3], 1);
	assert_int_equal(dev->bad, 0);
	uint8_t r = 0xff;
	pc_testdev_irq_ops.read(dev, 0x0e, &r, 1);
	assert_int_equal(r, 0);
}

static void test_iomem(void **state)
{
	uint64_t v = 0x0102030405060708ULL, r = 0;
	pc_testdev_iomem_ops.write(dev, PC_TESTDEV_IOMEM_LEN - 8, &v, 8);
	pc_testdev_iomem_ops.read(dev, PC_TESTDEV_IOMEM_LEN - 8, &r, 8);
	assert_int_equal(r, v);
	uint8_t b = 0;
	pc_testdev_iomem_ops.read(dev, PC_TESTDEV_IOMEM_LEN - 1, &b, 1);
	assert_int_equal(b, 0x01);
	uint32_t z = 0xffffffff;
	pc_testdev_iomem_ops.read(dev, 0, &z, 4);
	assert_int_equal(z, 0);
}

/* The PM timer: 3.579545 MHz from the origin, 24 bits, any width at any offset, read-only. */
static uint64_t fake_ns;
static uint64_t fake_now(void)
{
	return fake_ns;
}

static uint32_t pmt_read(struct pm_timer *t, uint64_t off, uint32_t len)
{
	uint32_t v = 0;
	pm_timer_ops.read(t, off, &v, len);
	return v;
}

static void test_pm_timer(void **state)
{
	struct pm_timer t;
	assert_int_equal(pm_timer_init(&t, 1000, fake_now), 0);
	fake_ns = 1000;
	assert_int_equal(pmt_read(&t, 0, 4), 0);
	fake_ns = 1000 + 1000000000ull;                /* one second: 3579545 ticks */
	assert_int_equal(pmt_read(&t, 0, 4), 3579545);
	assert_int_equal(pmt_read(&t, 1, 2), (3579545 >> 8) & 0xffff);
	assert_int_equal(pmt_read(&t, 3, 1), 0);       /* bits 24-31: 0 */
	fake_ns = 1000 + 5000000000ull;                /* 17897725 = 0x11118fd: wraps at 24 bits */
	assert_int_equal(pmt_read(&t, 0, 4), 17897725 & 0xffffff);
	/* 100 years in: no overflow in the scaling (t * 3579545 would overflow 64 bits). */
	uint64_t ns = 100ull * 365 * 86400 * 1000000000ull + 123456789;
	uint64_t want = ns / 1000000000ull * 3579545 + (ns % 1000000000ull) * 3579545 / 1000000000ull;
	assert_int_equal(pm_timer_ticks(ns), want & 0xffffff);
	uint32_t v = 0x12345678;
	pm_timer_ops.write(&t, 0, &v, 4);
	pm_timer_ops.write(&t, 2, &v, 1);
	assert_int_equal(atomic_load(&t.ignored), 2);
	assert_int_equal(pmt_read(&t, 0, 4), 17897725 & 0xffffff);
	/* The real clock: it moves forward. */
	struct pm_timer real;
	assert_int_equal(pm_timer_init(&real, 0, NULL), 0);
	uint32_t a = pmt_read(&real, 0, 4);
	struct timespec ms = { 0, 2000000 };
	nanosleep(&ms, NULL);
	assert_int_not_equal(pmt_read(&real, 0, 4), a);
	pm_timer_destroy(&real);
	pm_timer_destroy(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fw_cfg_keys),
		cmocka_unit_test(test_fw_cfg_read_only),
		cmocka_unit_test(test_pm_timer),
		cmocka_unit_test_setup_teardown(test_scratch_register, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_page, setup, teardown),
		cmocka_unit_test_setup_teardown(test_irq_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_iomem, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
