/* Unit tests for a PCI function's expansion ROM BAR (0x30): sizing, gating by enable and memory decode, moves, refused placements, read-only reads at every width. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "fake_vm.h"
#include "pci/pci_func.h"

#define ROM_SIZE  0x2000u      /* the BAR */
#define ROM_BYTES 0x1800u      /* what the owner holds: past it reads 0 */
#define ROM_ADDR  0xC0010000ull

struct rom_owner {
	uint8_t bytes[ROM_BYTES];
	unsigned reads;
};

static void owner_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct rom_owner *o = opaque;
	o->reads++;
	memset(data, 0, len);
	for (uint32_t i = 0; i < len; i++)
		if (off + i < ROM_BYTES)
			((uint8_t *)data)[i] = o->bytes[off + i];
}

struct fx {
	struct fake_vm *vm;
	struct pci_func f;
	struct rom_owner o;
};

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	if (!x || !(x->vm = fake_vm_new()))
		return -1;
	for (unsigned i = 0; i < ROM_BYTES; i++)
		x->o.bytes[i] = (uint8_t)(i * 7 + 3);
	x->o.bytes[0] = 0x55;
	x->o.bytes[1] = 0xaa;
	if (pci_func_init(&x->f, "romfn", 0x1b36, 0x0010, 0x010802, 0, 0, &x->vm->mmio,
			  fake_window()) ||
	    pci_func_add_rom(&x->f, ROM_SIZE, owner_read, &x->o, "romfn-rom"))
		return -1;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;
	pci_func_destroy(&x->f);
	fake_vm_free(x->vm);
	free(x);
	return 0;
}

static uint32_t cfg_rd(struct fx *x, uint32_t off, uint32_t len) { return pci_func_cfg_read(&x->f, off, len); }
static void cfg_wr(struct fx *x, uint32_t off, uint32_t len, uint32_t v) { pci_func_cfg_write(&x->f, off, len, v); }

/* A guest read of `len` bytes through the MMIO bus (all ones when nobody claims it). */
static uint64_t mmio_rd(struct fx *x, uint64_t addr, uint32_t len)
{
	uint64_t v = 0;
	bus_read(&x->vm->mmio, addr, &v, len);
	return v;
}

static bool rom_on_bus(struct fx *x, uint64_t addr)
{
	struct bus_range r;
	return bus_lookup(&x->vm->mmio, addr, &r) == 0 && r.base == addr && r.len == ROM_SIZE;
}

static void test_rom_sizing_reads_size_mask_and_enable(void **state)
{
	struct fx *x = *state;
	assert_int_equal(cfg_rd(x, PCI_ROM_ADDRESS, 4), 0);
	cfg_wr(x, PCI_ROM_ADDRESS, 4, 0xffffffff);
	/* bits 31:13 follow the 8 KiB size, bits 12:11 are size bits (0), 10:1 reserved, 0 enable */
	assert_int_equal(cfg_rd(x, PCI_ROM_ADDRESS, 4), 0xffffe001u);
	cfg_wr(x, PCI_ROM_ADDRESS, 4, 0xfffffffe); /* Linux sizes with the enable bit off */
	assert_int_equal(cfg_rd(x, PCI_ROM_ADDRESS, 4), 0xffffe000u);
	/* Sub-dword writes land where they are put, reserved bits stay 0. */
	cfg_wr(x, PCI_ROM_ADDRESS, 4, 0);
	cfg_wr(x, PCI_ROM_ADDRESS, 1, 0xff);
	assert_int_equal(cfg_rd(x, PCI_ROM_ADDRESS, 4), 0x1);
	cfg_wr(x, PCI_ROM_ADDRESS + 2, 2, 0xc001);
	assert_int_equal(cfg_rd(x, PCI_ROM_ADDRESS, 4), 0xc0010001u);
	/* Sizing never mapped anything: decode is off. */
	assert_false(x->f.rom.mapped);
}

static void test_rom_declarations_are_checked(void **state)
{
	struct fx *x = *state;
	struct pci_func g;
	assert_int_equal(pci_func_add_rom(&x->f, ROM_SIZE, owner_read, &x->o, "again"), -EINVAL);
	assert_int_equal(pci_func_init(&g, "g", 1, 2, 0, 0, 0, &x->vm->mmio, fake_window()), 0);
	assert_int_equal(pci_func_add_rom(&g, 0x400, owner_read, NULL, "small"), -EINVAL);
	assert_int_equal(pci_func_add_rom(&g, 0x3000, owner_read, NULL, "npot"), -EINVAL);
	assert_int_equal(pci_func_add_rom(&g, PCI_ROM_MAX_SIZE * 2, owner_read, NULL, "big"), -EINVAL);
	assert_int_equal(pci_func_add_rom(&g, 0x800, NULL, NULL, "noread"), -EINVAL);
	/* A function without a ROM: 0x30 reads 0 whatever is written. */
	pci_func_cfg_write(&g, PCI_ROM_ADDRESS, 4, 0xffffffff);
	assert_int_equal(pci_func_cfg_read(&g, PCI_ROM_ADDRESS, 4), 0);
	assert_int_equal(pci_func_add_rom(&g, PCI_ROM_MAX_SIZE, owner_read, NULL, "max"), 0);
	pci_func_cfg_write(&g, PCI_ROM_ADDRESS, 4, 0xffffffff);
	assert_int_equal(pci_func_cfg_read(&g, PCI_ROM_ADDRESS, 4), 0xff000001u);
	pci_func_destroy(&g);
}

static void test_rom_mapped_only_with_enable_and_memory_decode(void **state)
{
	struct fx *x = *state;
	pci_func_set_rom_addr(&x->f, ROM_ADDR);
	assert_int_equal(cfg_rd(x, PCI_ROM_ADDRESS, 4), (uint32_t)ROM_ADDR); /* enable off */
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	assert_false(rom_on_bus(x, ROM_ADDR));           /* decode on, enable off */
	assert_int_equal(mmio_rd(x, ROM_ADDR, 2), 0xffff);
	cfg_wr(x, PCI_COMMAND, 2, 0);
	cfg_wr(x, PCI_ROM_ADDRESS, 4, (uint32_t)ROM_ADDR | PCI_ROM_ENABLE);
	assert_false(rom_on_bus(x, ROM_ADDR));           /* enable on, decode off */
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	assert_true(rom_on_bus(x, ROM_ADDR));            /* both */
	assert_int_equal(mmio_rd(x, ROM_ADDR, 2), 0xaa55);
	cfg_wr(x, PCI_ROM_ADDRESS, 1, 0);                /* enable off again */
	assert_false(rom_on_bus(x, ROM_ADDR));
	cfg_wr(x, PCI_ROM_ADDRESS, 1, PCI_ROM_ENABLE);
	assert_true(rom_on_bus(x, ROM_ADDR));
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MASTER);       /* decode off */
	assert_false(rom_on_bus(x, ROM_ADDR));
	assert_int_equal(x->f.refused_maps, 0);
}

static void test_rom_reads_at_every_width_and_zero_past_the_content(void **state)
{
	struct fx *x = *state;
	cfg_wr(x, PCI_ROM_ADDRESS, 4, (uint32_t)ROM_ADDR | PCI_ROM_ENABLE);
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	const uint8_t *b = x->o.bytes;
	for (uint32_t len = 1; len <= 8; len *= 2) {
		for (uint64_t off = 0x100; off < 0x100 + 4 * len; off += len) {
			uint64_t want = 0;
			memcpy(&want, b + off, len);
			assert_int_equal(mmio_rd(x, ROM_ADDR + off, len), want);
		}
	}
	/* Unaligned inside the ROM too (the bus passes any 1..8 bytes). */
	uint64_t want = 0;
	memcpy(&want, b + 0x11, 4);
	assert_int_equal(mmio_rd(x, ROM_ADDR + 0x11, 4), want);
	/* Straddling the end of the content: the bytes past it read 0. */
	want = 0;
	memcpy(&want, b + ROM_BYTES - 2, 2);
	assert_int_equal(mmio_rd(x, ROM_ADDR + ROM_BYTES - 2, 4), want);
	assert_int_equal(mmio_rd(x, ROM_ADDR + ROM_SIZE - 8, 8), 0);
	/* Past the BAR: not the ROM's. */
	assert_int_equal(mmio_rd(x, ROM_ADDR + ROM_SIZE, 4), 0xffffffffu);
	assert_true(x->f.rom.reads >= 17);
}

static void test_rom_writes_are_dropped_and_counted(void **state)
{
	struct fx *x = *state;
	cfg_wr(x, PCI_ROM_ADDRESS, 4, (uint32_t)ROM_ADDR | PCI_ROM_ENABLE);
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	uint8_t before[ROM_BYTES];
	memcpy(before, x->o.bytes, sizeof(before));
	unsigned reads = x->o.reads;
	for (uint32_t len = 1; len <= 8; len *= 2) {
		uint64_t v = ~0ull;
		assert_int_equal(bus_write(&x->vm->mmio, ROM_ADDR + 0x40, &v, len), 0);
	}
	assert_int_equal(x->f.rom.writes_dropped, 4);
	assert_memory_equal(before, x->o.bytes, sizeof(before));
	assert_int_equal(x->o.reads, reads); /* a write never turned into an owner call */
	assert_int_equal(mmio_rd(x, ROM_ADDR + 0x40, 4), (uint32_t)(before[0x40] | before[0x41] << 8 |
				before[0x42] << 16 | (uint32_t)before[0x43] << 24));
}

static void test_rom_moves_while_enabled(void **state)
{
	struct fx *x = *state;
	cfg_wr(x, PCI_ROM_ADDRESS, 4, (uint32_t)ROM_ADDR | PCI_ROM_ENABLE);
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	assert_true(rom_on_bus(x, ROM_ADDR));
	cfg_wr(x, PCI_ROM_ADDRESS, 4, (uint32_t)(ROM_ADDR + 0x100000) | PCI_ROM_ENABLE);
	assert_false(rom_on_bus(x, ROM_ADDR));
	assert_true(rom_on_bus(x, ROM_ADDR + 0x100000));
	assert_int_equal(mmio_rd(x, ROM_ADDR + 0x100000, 2), 0xaa55);
	/* A low bit of the address below the size is not writable: the BAR stays aligned. */
	cfg_wr(x, PCI_ROM_ADDRESS, 4, (uint32_t)(ROM_ADDR + 0x800) | PCI_ROM_ENABLE);
	assert_int_equal(cfg_rd(x, PCI_ROM_ADDRESS, 4), (uint32_t)ROM_ADDR | PCI_ROM_ENABLE);
	assert_true(rom_on_bus(x, ROM_ADDR));
}

static void test_rom_refused_placements(void **state)
{
	struct fx *x = *state;
	static const struct bus_ops none = { 0 };
	assert_int_equal(bus_register(&x->vm->mmio, 0xC0040000, 0x1000, &none, NULL, "other"), 0);
	assert_int_equal(pci_func_add_bar(&x->f, 0, 0x4000, false, &none, &x->o, "bar0"), 0);
	pci_func_set_bar_addr(&x->f, 0, 0xC0080000);
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	uint64_t refused = x->f.refused_maps;
	cfg_wr(x, PCI_ROM_ADDRESS, 4, 0xC0040000u | PCI_ROM_ENABLE);  /* over another device */
	assert_false(x->f.rom.mapped);
	cfg_wr(x, PCI_ROM_ADDRESS, 4, 0xC0082000u | PCI_ROM_ENABLE);  /* over its own BAR0 */
	assert_false(x->f.rom.mapped);
	cfg_wr(x, PCI_ROM_ADDRESS, 4, 0x00100000u | PCI_ROM_ENABLE);  /* over guest RAM */
	assert_false(x->f.rom.mapped);
	cfg_wr(x, PCI_ROM_ADDRESS, 4, 0xFFFFE000u | PCI_ROM_ENABLE);  /* sizing, decode on */
	assert_false(x->f.rom.mapped);
	cfg_wr(x, PCI_ROM_ADDRESS, 4, PCI_ROM_ENABLE);                /* address 0 */
	assert_false(x->f.rom.mapped);
	assert_int_equal(x->f.refused_maps, refused + 5);
	assert_int_equal(mmio_rd(x, 0xC0082000, 4), 0xffffffffu);    /* BAR0 still its own (none) */
	/* Back to a free place: mapped. */
	cfg_wr(x, PCI_ROM_ADDRESS, 4, (uint32_t)ROM_ADDR | PCI_ROM_ENABLE);
	assert_true(rom_on_bus(x, ROM_ADDR));
	/* A BAR moved onto the ROM is refused in turn; the ROM keeps its place. */
	cfg_wr(x, PCI_BAR0, 4, (uint32_t)ROM_ADDR);
	assert_false(x->f.bars[0].mapped);
	assert_true(rom_on_bus(x, ROM_ADDR));
}

static void test_destroy_unmaps_the_rom(void **state)
{
	struct fx *x = *state;
	cfg_wr(x, PCI_ROM_ADDRESS, 4, (uint32_t)ROM_ADDR | PCI_ROM_ENABLE);
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	assert_true(rom_on_bus(x, ROM_ADDR));
	pci_func_destroy(&x->f);
	assert_false(rom_on_bus(x, ROM_ADDR));
	/* teardown destroys again: init a fresh one so it has something to destroy */
	assert_int_equal(pci_func_init(&x->f, "romfn", 1, 2, 0, 0, 0, &x->vm->mmio, fake_window()), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_rom_sizing_reads_size_mask_and_enable),
		T(test_rom_declarations_are_checked),
		T(test_rom_mapped_only_with_enable_and_memory_decode),
		T(test_rom_reads_at_every_width_and_zero_past_the_content),
		T(test_rom_writes_are_dropped_and_counted),
		T(test_rom_moves_while_enabled),
		T(test_rom_refused_placements),
		T(test_destroy_unmaps_the_rom),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
