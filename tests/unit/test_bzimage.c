/* Unit tests for the bzImage loader (bzimage_parse, bzimage_load): synthetic images built in memory
 * and, when present, the real Debian cloud kernel; guest RAM is a plain buffer behind a guest_mem. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <asm/bootparam.h> /* the kernel's own layout, to cross-check ours */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86/bzimage.h"
#include "arch/x86/e820.h"
#include "arch/x86/layout.h"
#include "arch/x86/longmode.h"
#include "util/file.h"
#include "core/guest_mem.h"

#define RAM_SIZE     (64 * MiB)   /* synthetic images */
#define REAL_RAM     (256 * MiB)  /* the real kernel: pref 16 MiB + ~52 MiB init_size */
#define RAM_FILL     0xcc
#define SETUP_SECTS  4
#define SETUP_BYTES  ((SETUP_SECTS + 1) * 512)
#define PM_BYTES     (64 * 1024)
#define IMG_BYTES    (SETUP_BYTES + PM_BYTES)
#define SYN_INIT     (4 * MiB)
#define SYN_PREF     (16 * MiB)
#define SYN_CMDMAX   2047
#define INITRD_BYTES (3 * MiB + 123)  /* not a page multiple */

/* ---- Fixture ------------------------------------------------------------------ */

struct fixture {
	struct guest_mem gm;
	uint8_t *ram;
	uint64_t ram_size;
	uint8_t img[IMG_BYTES];
	size_t img_size;
	uint8_t *initrd;
	struct bzimage_args args;
	struct bzimage_loaded out;
	struct error err;
	struct mapped_file real;   /* the Debian kernel, if found */
	const char *real_path;
};

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* A minimal well-formed bzImage: protocol 2.15, 64-bit, relocatable, with a
 * patterned protected-mode part. */
static void img_good(struct fixture *f)
{
	uint8_t *b = f->img;
	memset(b, 0, sizeof(f->img));
	for (size_t i = 0; i < SETUP_BYTES; i++)
		b[i] = (uint8_t)(i * 13 + 5);
	b[0x1f1] = SETUP_SECTS;
	put32(b + 0x1f4, PM_BYTES / 16);               /* syssize */
	put16(b + 0x1fa, 0xffff);                      /* vid_mode */
	put16(b + 0x1fe, 0xaa55);
	b[0x200] = 0xeb;
	b[0x201] = 0x6a;                               /* header ends at 0x26c */
	memcpy(b + 0x202, "HdrS", 4);
	put16(b + 0x206, 0x020f);
	b[0x210] = 0;                                  /* type_of_loader */
	b[0x211] = 0x01;                               /* LOADED_HIGH */
	put32(b + 0x214, 0x100000);
	put32(b + 0x218, 0);
	put32(b + 0x21c, 0);
	put16(b + 0x224, 0);
	put32(b + 0x228, 0);
	put32(b + 0x22c, 0x7fffffff);                  /* initrd_addr_max */
	put32(b + 0x230, 0x200000);                    /* kernel_alignment */
	b[0x234] = 1;                                  /* relocatable */
	b[0x235] = 21;
	put16(b + 0x236, 0x0003);                      /* XLF_KERNEL_64 | above 4G */
	put32(b + 0x238, SYN_CMDMAX);
	put32(b + 0x23c, 0);
	put64(b + 0x250, 0);
	put64(b + 0x258, SYN_PREF);
	put32(b + 0x260, SYN_INIT);
	put32(b + 0x264, 0);
	put32(b + 0x268, 0);
	for (size_t i = 0; i < PM_BYTES; i++)
		b[SETUP_BYTES + i] = (uint8_t)(i * 7 + 1);
	f->img_size = IMG_BYTES;
}

static const char *real_kernel_path(void)
{
	const char *p = getenv("MSIVM_TEST_BZIMAGE");
	if (p && *p)
		return p;
	return access("build/kernel/vmlinuz", R_OK) == 0 ? "build/kernel/vmlinuz" : NULL;
}

static int group_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->ram_size = REAL_RAM;
	f->ram = malloc(REAL_RAM);
	f->initrd = malloc(INITRD_BYTES);
	if (!f->ram || !f->initrd)
		return -1;
	for (size_t i = 0; i < INITRD_BYTES; i++)
		f->initrd[i] = (uint8_t)(i ^ (i >> 9));
	f->real_path = real_kernel_path();
	if (f->real_path) {
		struct error e;
		if (file_map(f->real_path, "kernel", &f->real, &e)) {
			fprintf(stderr, "%s\n", e.msg);
			return -1;
		}
	}
	*state = f;
	return 0;
}

static int group_teardown(void **state)
{
	struct fixture *f = *state;
	if (f->real.data)
		file_unmap(&f->real);
	free(f->initrd);
	free(f->ram);
	free(f);
	return 0;
}

/* Fresh RAM of `size` bytes filled with RAM_FILL, default arguments. */
static void reset(struct fixture *f, uint64_t size)
{
	f->ram_size = size;
	memset(f->ram, RAM_FILL, size);
	assert_int_equal(guest_mem_init(&f->gm, f->ram, size, MMIO_HOLE_START, MMIO_HOLE_END), 0);
	memset(&f->err, 0, sizeof(f->err));
	memset(&f->out, 0, sizeof(f->out));
	f->args = (struct bzimage_args){ .cmdline = "console=ttyS0 root=/dev/vda", .rsdp = 0xe0000 };
}

static int setup(void **state)
{
	struct fixture *f = *state;
	reset(f, RAM_SIZE);
	img_good(f);
	return 0;
}

static int ram_untouched(const struct fixture *f)
{
	return f->ram[0] == RAM_FILL && memcmp(f->ram, f->ram + 1, f->ram_size - 1) == 0;
}

static int load_img(struct fixture *f, const uint8_t *img, size_t size)
{
	return bzimage_load(&f->gm, img, size, &f->args, &f->out, &f->err);
}

static int load(struct fixture *f)
{
	return load_img(f, f->img, f->img_size);
}

/* The load fails with `code`, the message contains `word`, RAM is as it was. */
#define assert_rejected(f, code, word)                                              \
	do {                                                                        \
		int ret_ = load(f);                                                 \
		if (ret_ != (code))                                                 \
			fail_msg("load returned %d, want %d (msg: '%s')", ret_,      \
				 (code), (f)->err.msg);                              \
		if (!strstr((f)->err.msg, (word)))                                  \
			fail_msg("message '%s' does not mention '%s'", (f)->err.msg, \
				 (word));                                            \
		assert_true(ram_untouched(f));                                      \
	} while (0)

/* ---- Checks of what a successful load wrote ------------------------------------- */

static const struct bz_boot_params *zero_page(const struct fixture *f)
{
	return (const struct bz_boot_params *)(f->ram + ZERO_PAGE);
}

/* Every field of the zero page and the boot data, for `img` loaded with f->args. */
static void check_boot_data(const struct fixture *f, const uint8_t *img, size_t size)
{
	const struct bz_boot_params *zp = zero_page(f);
	uint32_t setup = ((img[0x1f1] ? img[0x1f1] : 4u) + 1) * 512;
	uint32_t hdr_end = 0x202u + img[0x201];

	/* Kernel: the protected-mode part at 1 MiB, and nothing just before it. */
	assert_int_equal(f->out.entry, BZIMAGE_LOAD_ADDR + 0x200);
	assert_int_equal(f->out.zero_page, ZERO_PAGE);
	assert_memory_equal(f->ram + BZIMAGE_LOAD_ADDR, img + setup, size - setup);
	assert_int_equal(f->ram[BZIMAGE_LOAD_ADDR - 1], RAM_FILL);

	/* Setup header: copied from the image, except the fields a loader writes. */
	uint8_t want[0x290];
	memcpy(want, img, hdr_end);
	uint8_t *w = want;
	w[0x210] = 0xff;                               /* type_of_loader */
	w[0x211] |= 0x80;                              /* CAN_USE_HEAP */
	put16(w + 0x224, 0xfe00);                      /* heap_end_ptr */
	put32(w + 0x214, 0x100000);                    /* code32_start */
	put32(w + 0x228, (uint32_t)CMDLINE_ADDR);
	put32(w + 0x218, f->args.initrd ? (uint32_t)f->out.initrd_addr : 0);
	put32(w + 0x21c, f->args.initrd ? (uint32_t)f->args.initrd_size : 0);
	assert_memory_equal((const uint8_t *)zp + 0x1f1, want + 0x1f1, hdr_end - 0x1f1);
	assert_int_equal(zp->hdr.type_of_loader, 0xff);
	assert_true(zp->hdr.loadflags & BZ_LOADED_HIGH);
	assert_true(zp->hdr.loadflags & BZ_CAN_USE_HEAP);
	assert_int_equal(zp->ext_cmd_line_ptr, 0);
	assert_int_equal(zp->ext_ramdisk_image, 0);
	assert_int_equal(zp->ext_ramdisk_size, 0);
	/* The rest of the zero page before the header is zero (sentinel included). */
	for (size_t i = 0; i < 0x1f1; i++) {
		if (i >= 0x70 && i < 0x78)
			continue; /* acpi_rsdp_addr */
		if (i == 0x1e8)
			continue; /* e820_entries */
		if (((const uint8_t *)zp)[i])
			fail_msg("zero page byte 0x%zx is 0x%x", i, ((const uint8_t *)zp)[i]);
	}
	uint16_t version;
	memcpy(&version, img + 0x206, 2);
	assert_int_equal(zp->acpi_rsdp_addr, version >= 0x020e ? f->args.rsdp : 0);

	/* Command line: the bytes and a NUL. */
	size_t n = strlen(f->args.cmdline);
	assert_memory_equal(f->ram + CMDLINE_ADDR, f->args.cmdline, n + 1);

	/* e820: exactly e820_build's map. */
	struct e820_entry map[E820_MAX_ENTRIES];
	uint32_t ne = e820_build(&f->gm, map);
	assert_int_equal(zp->e820_entries, ne);
	for (uint32_t i = 0; i < ne; i++) {
		struct bz_e820_entry e = zp->e820_table[i];
		assert_true(e.addr == map[i].addr && e.size == map[i].size && e.type == map[i].type);
	}

	/* Initrd: page aligned, below initrd_addr_max and the top of RAM, above the
	 * kernel's init_size area, bytes copied. */
	if (f->args.initrd) {
		uint64_t a = f->out.initrd_addr, sz = f->args.initrd_size;
		uint32_t max, init;
		uint64_t pref;
		memcpy(&max, img + 0x22c, 4);
		memcpy(&init, img + 0x260, 4);
		memcpy(&pref, img + 0x258, 8);
		assert_int_equal(a % 4096, 0);
		assert_true(a + sz - 1 <= max);
		assert_true(a + sz <= f->ram_size);
		assert_true(a >= pref + init);
		assert_true(a + sz + 4096 > f->ram_size || a + sz + 4096 > (uint64_t)max + 1);
		assert_memory_equal(f->ram + a, f->args.initrd, sz);
	} else {
		assert_int_equal(f->out.initrd_addr, 0);
	}

	/* Page tables: PML4[0] -> PDPT -> 4 PDs of 2 MiB pages, identity. */
	const uint64_t *pml4 = (const uint64_t *)(f->ram + BOOT_PML4);
	const uint64_t *pdpt = (const uint64_t *)(f->ram + BOOT_PDPT);
	const uint64_t *pd = (const uint64_t *)(f->ram + BOOT_PD);
	assert_int_equal(pml4[0], BOOT_PDPT | PTE_PRESENT | PTE_WRITABLE);
	for (int i = 1; i < 512; i++)
		assert_int_equal(pml4[i], 0);
	for (int i = 0; i < 512; i++)
		assert_int_equal(pdpt[i], i < BOOT_PD_COUNT ?
				 (BOOT_PD + i * 4096ULL) | PTE_PRESENT | PTE_WRITABLE : 0);
	for (uint64_t i = 0; i < BOOT_PD_COUNT * 512; i++)
		assert_int_equal(pd[i], (i << 21) | PTE_PRESENT | PTE_WRITABLE | PTE_PS);
	/* ... which cover the kernel's area, the zero page and the command line. */
	assert_true(BOOT_PD_COUNT * GiB >= f->ram_size);

	/* GDT: 0x10 flat 64-bit code, 0x18 flat writable data. */
	const uint64_t *gdt = (const uint64_t *)(f->ram + BOOT_GDT);
	uint64_t cs = gdt[0x10 / 8], ds = gdt[0x18 / 8];
	assert_int_equal(gdt[0], 0);
	assert_int_equal(cs & 0xffff, 0xffff);                 /* limit 15:0 */
	assert_int_equal((cs >> 16) & 0xffffff, 0);            /* base 23:0 */
	assert_int_equal(cs >> 56, 0);                         /* base 31:24 */
	assert_true(cs & (1ULL << 47));                        /* present */
	assert_true(cs & (1ULL << 44));                        /* code/data */
	assert_true(cs & (1ULL << 43));                        /* executable */
	assert_true(cs & (1ULL << 53));                        /* L: 64-bit */
	assert_false(cs & (1ULL << 54));                       /* D must be 0 with L */
	assert_true(cs & (1ULL << 55));                        /* 4 KiB granularity */
	assert_true(ds & (1ULL << 47));
	assert_false(ds & (1ULL << 43));                       /* data */
	assert_true(ds & (1ULL << 41));                        /* writable */
	assert_true(ds & (1ULL << 55));
	assert_int_equal(ds & 0xffff, 0xffff);
}

/* ---- Layout ---------------------------------------------------------------------- */

static void test_zero_page_layout_matches_linux_uapi(void **state)
{
	assert_int_equal(sizeof(struct bz_boot_params), sizeof(struct boot_params));
	assert_int_equal(offsetof(struct bz_boot_params, acpi_rsdp_addr),
			 offsetof(struct boot_params, acpi_rsdp_addr));
	assert_int_equal(offsetof(struct bz_boot_params, ext_ramdisk_image),
			 offsetof(struct boot_params, ext_ramdisk_image));
	assert_int_equal(offsetof(struct bz_boot_params, ext_cmd_line_ptr),
			 offsetof(struct boot_params, ext_cmd_line_ptr));
	assert_int_equal(offsetof(struct bz_boot_params, e820_entries),
			 offsetof(struct boot_params, e820_entries));
	assert_int_equal(offsetof(struct bz_boot_params, e820_table),
			 offsetof(struct boot_params, e820_table));
	assert_int_equal(sizeof(struct bz_setup_header), sizeof(struct setup_header));
#define HDR(field) assert_int_equal(offsetof(struct bz_boot_params, hdr.field), \
				    offsetof(struct boot_params, hdr.field))
	HDR(setup_sects); HDR(syssize); HDR(boot_flag); HDR(header); HDR(version);
	HDR(type_of_loader); HDR(loadflags); HDR(code32_start); HDR(ramdisk_image);
	HDR(ramdisk_size); HDR(heap_end_ptr); HDR(cmd_line_ptr); HDR(initrd_addr_max);
	HDR(kernel_alignment); HDR(relocatable_kernel); HDR(xloadflags); HDR(cmdline_size);
	HDR(setup_data); HDR(pref_address); HDR(init_size); HDR(kernel_info_offset);
#undef HDR
	assert_int_equal(BZ_XLF_KERNEL_64, XLF_KERNEL_64);
	assert_int_equal(BZ_CAN_USE_HEAP, CAN_USE_HEAP);
	assert_int_equal(BZ_LOADED_HIGH, LOADED_HIGH);
}

/* ---- Synthetic images: good -------------------------------------------------- */

static void test_synthetic_loads(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(load(f), 0);
	check_boot_data(f, f->img, f->img_size);
}

static void test_synthetic_with_initrd(void **state)
{
	struct fixture *f = *state;
	f->args.initrd = f->initrd;
	f->args.initrd_size = INITRD_BYTES;
	assert_int_equal(load(f), 0);
	check_boot_data(f, f->img, f->img_size);
	/* 64 MiB of RAM, initrd_addr_max far above: it ends at the top of RAM. */
	assert_int_equal(f->out.initrd_addr, (RAM_SIZE - INITRD_BYTES) & ~0xfffULL);
}

static void test_initrd_below_initrd_addr_max(void **state)
{
	struct fixture *f = *state;
	put32(f->img + 0x22c, 0x27fffff); /* 40 MiB - 1 */
	f->args.initrd = f->initrd;
	f->args.initrd_size = INITRD_BYTES;
	assert_int_equal(load(f), 0);
	check_boot_data(f, f->img, f->img_size);
	assert_int_equal(f->out.initrd_addr, (40 * MiB - INITRD_BYTES) & ~0xfffULL);
}

static void test_setup_sects_zero_means_four(void **state)
{
	struct fixture *f = *state;
	f->img[0x1f1] = 0;
	assert_int_equal(load(f), 0);
	check_boot_data(f, f->img, f->img_size);
}

static void test_protocol_2_12_gets_no_rsdp_field(void **state)
{
	struct fixture *f = *state;
	put16(f->img + 0x206, 0x020c);
	assert_int_equal(load(f), 0);
	check_boot_data(f, f->img, f->img_size);
	assert_int_equal(zero_page(f)->acpi_rsdp_addr, 0);
}

static void test_longest_cmdline_accepted(void **state)
{
	struct fixture *f = *state;
	static char cmd[SYN_CMDMAX + 1];
	memset(cmd, 'x', SYN_CMDMAX);
	cmd[SYN_CMDMAX] = 0;
	f->args.cmdline = cmd;
	assert_int_equal(load(f), 0);
	check_boot_data(f, f->img, f->img_size);
}

static void test_null_cmdline_is_empty(void **state)
{
	struct fixture *f = *state;
	f->args.cmdline = NULL;
	assert_int_equal(load(f), 0);
	assert_int_equal(f->ram[CMDLINE_ADDR], 0);
	assert_int_equal(zero_page(f)->hdr.cmd_line_ptr, CMDLINE_ADDR);
}

static void test_parse_reports_placement(void **state)
{
	struct fixture *f = *state;
	struct bzimage_info bi;
	assert_int_equal(bzimage_parse(f->img, f->img_size, &bi, &f->err), 0);
	assert_int_equal(bi.setup_bytes, SETUP_BYTES);
	assert_int_equal(bi.kernel_bytes, PM_BYTES);
	assert_int_equal(bi.hdr_end, 0x26c);
	assert_int_equal(bi.run_start, SYN_PREF);
	assert_int_equal(bi.kernel_end, SYN_PREF + SYN_INIT);
	assert_int_equal(bi.entry, 0x100200);
	assert_int_equal(bi.hdr.version, 0x020f);
}

/* ---- Synthetic images: broken, each rejected with RAM untouched ------------------- */

static void test_no_hdrs_rejected(void **state)
{
	struct fixture *f = *state;
	memcpy(f->img + 0x202, "HdrX", 4);
	assert_rejected(f, -ENOEXEC, "HdrS");
}

static void test_tiny_file_rejected(void **state)
{
	struct fixture *f = *state;
	f->img_size = 0x100;
	assert_rejected(f, -ENOEXEC, "HdrS");
}

static void test_bad_boot_flag_rejected(void **state)
{
	struct fixture *f = *state;
	put16(f->img + 0x1fe, 0x55aa);
	assert_rejected(f, -ENOEXEC, "boot_flag");
}

static void test_protocol_2_11_rejected(void **state)
{
	struct fixture *f = *state;
	put16(f->img + 0x206, 0x020b);
	assert_rejected(f, -ENOEXEC, "2.11 is too old");
}

static void test_old_kernel_with_short_header_called_too_old(void **state)
{
	struct fixture *f = *state;
	put16(f->img + 0x206, 0x0204);
	f->img[0x201] = 0x26; /* a 2.04 header ends at 0x228 */
	assert_rejected(f, -ENOEXEC, "2.04 is too old");
}

static void test_not_64bit_rejected(void **state)
{
	struct fixture *f = *state;
	put16(f->img + 0x236, 0x0002); /* above-4G only, no XLF_KERNEL_64 */
	assert_rejected(f, -ENOEXEC, "64-bit");
}

static void test_zimage_rejected(void **state)
{
	struct fixture *f = *state;
	f->img[0x211] = 0;
	assert_rejected(f, -ENOEXEC, "zImage");
}

static void test_truncated_kernel_rejected(void **state)
{
	struct fixture *f = *state;
	f->img_size -= 16 * 10; /* syssize now claims more than the file has */
	assert_rejected(f, -ENOEXEC, "truncated");
}

static void test_truncated_in_setup_rejected(void **state)
{
	struct fixture *f = *state;
	f->img_size = SETUP_BYTES - 1;
	assert_rejected(f, -ENOEXEC, "truncated");
}

static void test_short_header_rejected(void **state)
{
	struct fixture *f = *state;
	f->img[0x201] = 0x40; /* ends at 0x242: before init_size */
	assert_rejected(f, -ENOEXEC, "truncated setup header");
}

static void test_kernel_larger_than_ram_rejected(void **state)
{
	struct fixture *f = *state;
	put32(f->img + 0x260, (uint32_t)(RAM_SIZE - SYN_PREF + 4096)); /* init_size past the top */
	assert_rejected(f, -ERANGE, "RAM");
}

/* Regression (hardening review, defect 4): pref_address near 2^64 made
 * pref_address + init_size wrap, and the image passed the RAM check. */
static void test_pref_address_wrapping_rejected(void **state)
{
	struct fixture *f = *state;
	put64(f->img + 0x258, UINT64_MAX - SYN_INIT / 2);
	assert_rejected(f, -ERANGE, "wraps");
	put64(f->img + 0x258, UINT64_MAX - SYN_INIT + 1); /* run + init_size == 2^64 */
	assert_rejected(f, -ERANGE, "wraps");
	put64(f->img + 0x258, RAM_SIZE); /* ends past RAM without wrapping: the RAM check */
	assert_rejected(f, -ERANGE, "RAM");
}

static void test_initrd_too_big_rejected(void **state)
{
	struct fixture *f = *state;
	f->args.initrd = f->initrd;
	f->args.initrd_size = RAM_SIZE - (SYN_PREF + SYN_INIT) + 1; /* one byte too many */
	assert_rejected(f, -ENOSPC, "initrd");
}

static void test_initrd_above_initrd_addr_max_rejected(void **state)
{
	struct fixture *f = *state;
	put32(f->img + 0x22c, (uint32_t)(SYN_PREF + SYN_INIT + MiB - 1));
	f->args.initrd = f->initrd;
	f->args.initrd_size = INITRD_BYTES; /* 3 MiB: only 1 MiB between kernel and the max */
	assert_rejected(f, -ENOSPC, "initrd");
}

static void test_cmdline_too_long_rejected(void **state)
{
	struct fixture *f = *state;
	static char cmd[SYN_CMDMAX + 2];
	memset(cmd, 'x', SYN_CMDMAX + 1);
	cmd[SYN_CMDMAX + 1] = 0;
	f->args.cmdline = cmd;
	assert_rejected(f, -E2BIG, "command line");
}

static void test_cmdline_size_of_old_kernel_honoured(void **state)
{
	struct fixture *f = *state;
	put32(f->img + 0x238, 255);
	static char cmd[257];
	memset(cmd, 'y', 256);
	cmd[256] = 0;
	f->args.cmdline = cmd;
	assert_rejected(f, -E2BIG, "command line");
}

/* ---- The real Debian cloud kernel ------------------------------------------------ */

static int have_real(const struct fixture *f)
{
	if (f->real_path)
		return 1;
	print_message("no real bzImage (run scripts/fetch-kernel.sh or set MSIVM_TEST_BZIMAGE): "
		      "skipping\n");
	return 0;
}

static void test_real_kernel_parses(void **state)
{
	struct fixture *f = *state;
	if (!have_real(f))
		skip();
	struct bzimage_info bi;
	int ret = bzimage_parse(f->real.data, f->real.size, &bi, &f->err);
	if (ret)
		fail_msg("%s: %s", f->real_path, f->err.msg);
	assert_true(bi.hdr.version >= 0x020c);
	assert_true(bi.hdr.xloadflags & BZ_XLF_KERNEL_64);
	assert_int_equal(bi.setup_bytes, (bi.hdr.setup_sects + 1) * 512);
	assert_int_equal(bi.kernel_bytes, f->real.size - bi.setup_bytes);
	print_message("%s: protocol %u.%02u, setup %u bytes, kernel %llu bytes, init_size %u, "
		      "pref 0x%llx, cmdline_size %u, initrd_addr_max 0x%x\n", f->real_path,
		      bi.hdr.version >> 8, bi.hdr.version & 0xff, bi.setup_bytes,
		      (unsigned long long)bi.kernel_bytes, bi.hdr.init_size,
		      (unsigned long long)bi.hdr.pref_address, bi.hdr.cmdline_size,
		      bi.hdr.initrd_addr_max);
}

static void test_real_kernel_loads_with_initrd(void **state)
{
	struct fixture *f = *state;
	if (!have_real(f))
		skip();
	reset(f, REAL_RAM);
	f->args.cmdline = "console=ttyS0 earlyprintk=serial,ttyS0 msivm.test=1";
	f->args.initrd = f->initrd;
	f->args.initrd_size = INITRD_BYTES;
	int ret = load_img(f, f->real.data, f->real.size);
	if (ret)
		fail_msg("%s: %s", f->real_path, f->err.msg);
	check_boot_data(f, f->real.data, f->real.size);
}

static void test_real_kernel_in_too_little_ram_rejected(void **state)
{
	struct fixture *f = *state;
	if (!have_real(f))
		skip();
	reset(f, 48 * MiB); /* the kernel needs pref_address + init_size */
	assert_int_equal(load_img(f, f->real.data, f->real.size), -ERANGE);
	assert_non_null(strstr(f->err.msg, "RAM"));
	assert_true(ram_untouched(f));
}

static void test_real_kernel_cmdline_too_long_rejected(void **state)
{
	struct fixture *f = *state;
	if (!have_real(f))
		skip();
	reset(f, REAL_RAM);
	uint32_t max;
	memcpy(&max, f->real.data + 0x238, 4);
	assert_true(max < CMDLINE_MAX);
	static char cmd[CMDLINE_MAX];
	memset(cmd, 'z', max + 1);
	cmd[max + 1] = 0;
	f->args.cmdline = cmd;
	assert_int_equal(load_img(f, f->real.data, f->real.size), -E2BIG);
	assert_non_null(strstr(f->err.msg, "command line"));
	assert_true(ram_untouched(f));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup(fn, setup)
		T(test_zero_page_layout_matches_linux_uapi),
		T(test_synthetic_loads),
		T(test_synthetic_with_initrd),
		T(test_initrd_below_initrd_addr_max),
		T(test_setup_sects_zero_means_four),
		T(test_protocol_2_12_gets_no_rsdp_field),
		T(test_longest_cmdline_accepted),
		T(test_null_cmdline_is_empty),
		T(test_parse_reports_placement),
		T(test_no_hdrs_rejected),
		T(test_tiny_file_rejected),
		T(test_bad_boot_flag_rejected),
		T(test_protocol_2_11_rejected),
		T(test_old_kernel_with_short_header_called_too_old),
		T(test_not_64bit_rejected),
		T(test_zimage_rejected),
		T(test_truncated_kernel_rejected),
		T(test_truncated_in_setup_rejected),
		T(test_short_header_rejected),
		T(test_kernel_larger_than_ram_rejected),
		T(test_pref_address_wrapping_rejected),
		T(test_initrd_too_big_rejected),
		T(test_initrd_above_initrd_addr_max_rejected),
		T(test_cmdline_too_long_rejected),
		T(test_cmdline_size_of_old_kernel_honoured),
		T(test_real_kernel_parses),
		T(test_real_kernel_loads_with_initrd),
		T(test_real_kernel_in_too_little_ram_rejected),
		T(test_real_kernel_cmdline_too_long_rejected),
#undef T
	};
	return cmocka_run_group_tests_name("bzimage", tests, group_setup, group_teardown);
}
