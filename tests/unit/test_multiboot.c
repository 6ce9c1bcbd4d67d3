/* Unit tests for the multiboot v1 loader (multiboot_find, multiboot_load): ELF32 images built in
 * memory, guest RAM a plain buffer; every byte of multiboot_info, the memory map, the command line
 * and the module is checked. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/e820.h"
#include "arch/x86/layout.h"
#include "arch/x86/multiboot.h"
#include "core/guest_mem.h"

#define RAM_SIZE  (32 * MiB)
#define RAM_FILL  0xcc
#define IMG_CAP   (64 * 1024)
#define MAX_PHDRS 4
#define HDR_OFF   (sizeof(Elf32_Ehdr) + MAX_PHDRS * sizeof(Elf32_Phdr)) /* multiboot header */
#define DATA_OFF  (HDR_OFF + 16)

struct img {
	uint8_t buf[IMG_CAP];
	size_t size;
	unsigned nph;
};

static uint8_t *ram;
static struct guest_mem gm;
static struct img im;

static int setup(void **state)
{
	if (!ram)
		ram = malloc(RAM_SIZE);
	memset(ram, RAM_FILL, RAM_SIZE);
	return guest_mem_init(&gm, ram, RAM_SIZE, MMIO_HOLE_START, MMIO_HOLE_END);
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* An i386 ET_EXEC with a multiboot header of `flags` right after the program headers. */
static void img_init(uint32_t flags)
{
	memset(&im, 0, sizeof(im));
	Elf32_Ehdr eh = {
		.e_type = ET_EXEC, .e_machine = EM_386, .e_version = EV_CURRENT,
		.e_phoff = sizeof(Elf32_Ehdr), .e_ehsize = sizeof(Elf32_Ehdr),
		.e_phentsize = sizeof(Elf32_Phdr),
	};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(im.buf, &eh, sizeof(eh));
	put32(im.buf + HDR_OFF, MULTIBOOT_HEADER_MAGIC);
	put32(im.buf + HDR_OFF + 4, flags);
	put32(im.buf + HDR_OFF + 8, 0u - (MULTIBOOT_HEADER_MAGIC + flags));
	im.size = DATA_OFF;
}

static void set_entry(uint32_t entry)
{
	memcpy(im.buf + offsetof(Elf32_Ehdr, e_entry), &entry, 4);
}

/* Appends `filesz` bytes of pattern `fill` and a PT_LOAD for them at `paddr`. */
static void add_load(uint32_t paddr, uint32_t filesz, uint32_t memsz, uint8_t fill)
{
	Elf32_Phdr ph = { .p_type = PT_LOAD, .p_offset = (uint32_t)im.size, .p_vaddr = paddr,
			  .p_paddr = paddr, .p_filesz = filesz, .p_memsz = memsz };
	memset(im.buf + im.size, fill, filesz);
	im.size += filesz;
	memcpy(im.buf + sizeof(Elf32_Ehdr) + im.nph * sizeof(ph), &ph, sizeof(ph));
	im.nph++;
	uint16_t n = (uint16_t)im.nph;
	memcpy(im.buf + offsetof(Elf32_Ehdr, e_phnum), &n, 2);
}

/* kvm-unit-tests' shape: text+data at 4 MiB, bss beyond. */
static void typical(void)
{
	img_init(0);
	add_load(4 * MiB, 0x3000, 0x9000, 0xab);
	set_entry(4 * MiB + 0x40);
}

static int load(const struct multiboot_args *a, struct multiboot_loaded *out, struct error *err)
{
	return multiboot_load(&gm, im.buf, im.size, a, out, err);
}

static void test_find(void **state)
{
	uint32_t flags = 0;
	img_init(MB_HDR_MEMORY_INFO);
	assert_int_equal(multiboot_find(im.buf, im.size, &flags), 1);
	assert_int_equal(flags, MB_HDR_MEMORY_INFO);
	/* A bad checksum is no header. */
	put32(im.buf + HDR_OFF + 8, 1);
	assert_int_equal(multiboot_find(im.buf, im.size, &flags), 0);
	/* Misaligned: not found. */
	uint8_t buf[64] = { 0 };
	put32(buf + 2, MULTIBOOT_HEADER_MAGIC);
	put32(buf + 10, 0u - MULTIBOOT_HEADER_MAGIC);
	assert_int_equal(multiboot_find(buf, sizeof(buf), &flags), 0);
	/* Beyond the first 8 KiB: not found; at 8 KiB - 12: found. */
	static uint8_t big[MULTIBOOT_SEARCH + 64];
	memset(big, 0, sizeof(big));
	put32(big + MULTIBOOT_SEARCH, MULTIBOOT_HEADER_MAGIC);
	put32(big + MULTIBOOT_SEARCH + 8, 0u - MULTIBOOT_HEADER_MAGIC);
	assert_int_equal(multiboot_find(big, sizeof(big), &flags), 0);
	put32(big + MULTIBOOT_SEARCH - 12, MULTIBOOT_HEADER_MAGIC);
	put32(big + MULTIBOOT_SEARCH - 4, 0u - MULTIBOOT_HEADER_MAGIC);
	assert_int_equal(multiboot_find(big, sizeof(big), &flags), 1);
	/* Truncated header (magic only) in a short file. */
	assert_int_equal(multiboot_find(big + MULTIBOOT_SEARCH - 12, 8, &flags), 0);
}

static void test_loads_segments_and_zeroes_bss(void **state)
{
	typical();
	struct multiboot_loaded out;
	struct error err;
	struct multiboot_args a = { .name = "x86/apic.flat" };
	assert_int_equal(load(&a, &out, &err), 0);
	assert_int_equal(out.entry, 4 * MiB + 0x40);
	assert_int_equal(out.load_start, 4 * MiB);
	assert_int_equal(out.load_end, 4 * MiB + 0x9000);
	assert_int_equal(out.module_addr, 0);
	for (uint64_t i = 0; i < 0x3000; i++)
		assert_int_equal(ram[4 * MiB + i], 0xab);
	for (uint64_t i = 0x3000; i < 0x9000; i++)
		assert_int_equal(ram[4 * MiB + i], 0);
	assert_int_equal(ram[4 * MiB - 1], RAM_FILL);
	assert_int_equal(ram[4 * MiB + 0x9000], RAM_FILL);
}

static void test_info_bytes(void **state)
{
	typical();
	static const char env[] = "NR_CPUS=2\nMEMSIZE=32\n";
	struct multiboot_args a = { .name = "k.flat", .cmdline = "a -b", .module = (const uint8_t *)env,
				    .module_size = sizeof(env) - 1 };
	struct multiboot_loaded out;
	struct error err;
	assert_int_equal(load(&a, &out, &err), 0);
	struct multiboot_info mbi;
	memcpy(&mbi, ram + MB_INFO_ADDR, sizeof(mbi));
	assert_int_equal(mbi.flags, MB_INFO_MEMORY | MB_INFO_CMDLINE | MB_INFO_MODS | MB_INFO_MMAP |
				    MB_INFO_LOADER);
	assert_int_equal(mbi.mem_lower, 640);
	assert_int_equal(mbi.mem_upper, (RAM_SIZE - MiB) / KiB);
	assert_int_equal(mbi.cmdline, MB_CMDLINE_ADDR);
	assert_string_equal((char *)ram + MB_CMDLINE_ADDR, "k.flat a -b");
	assert_int_equal(mbi.boot_loader_name, MB_LOADER_ADDR);
	assert_string_equal((char *)ram + MB_LOADER_ADDR, "msivm");
	/* Module 0: page aligned, above the image, in RAM, holding the bytes. */
	assert_int_equal(mbi.mods_count, 1);
	assert_int_equal(mbi.mods_addr, MB_MODS_ADDR);
	struct multiboot_mod mod;
	memcpy(&mod, ram + MB_MODS_ADDR, sizeof(mod));
	assert_int_equal(mod.mod_start, out.module_addr);
	assert_int_equal(mod.mod_end - mod.mod_start, sizeof(env) - 1);
	assert_int_equal(mod.mod_start % 4096, 0);
	assert_true(mod.mod_start >= out.load_end && mod.mod_end <= RAM_SIZE);
	assert_memory_equal(ram + mod.mod_start, env, sizeof(env) - 1);
	assert_int_equal(mod.cmdline, 0);
	/* The memory map: the e820 map, 24-byte entries with size 20. */
	struct e820_entry map[E820_MAX_ENTRIES];
	uint32_t n = e820_build(&gm, map);
	assert_int_equal(mbi.mmap_addr, MB_MMAP_ADDR);
	assert_int_equal(mbi.mmap_length, n * 24);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = ram + MB_MMAP_ADDR + 24 * i;
		uint32_t size, type;
		uint64_t addr, len;
		memcpy(&size, e, 4);
		memcpy(&addr, e + 4, 8);
		memcpy(&len, e + 12, 8);
		memcpy(&type, e + 20, 4);
		assert_int_equal(size, 20);
		assert_int_equal(addr, map[i].addr);
		assert_int_equal(len, map[i].size);
		assert_int_equal(type, map[i].type);
	}
	assert_int_equal(map[0].addr, 0); /* page 0 is RAM */
	/* Nothing else in the boot data block was touched past the structures. */
	assert_int_equal(ram[MB_INFO_ADDR + sizeof(mbi)], RAM_FILL);
	assert_int_equal(ram[MB_MODS_ADDR + sizeof(mod)], RAM_FILL);
	assert_int_equal(ram[MB_MMAP_ADDR + 24 * n], RAM_FILL);
	assert_int_equal(ram[MB_DATA_START - 1], RAM_FILL);
}

static void test_no_module_no_cmdline(void **state)
{
	typical();
	struct multiboot_args a = { .name = "k" };
	struct multiboot_loaded out;
	struct error err;
	assert_int_equal(load(&a, &out, &err), 0);
	struct multiboot_info mbi;
	memcpy(&mbi, ram + MB_INFO_ADDR, sizeof(mbi));
	assert_int_equal(mbi.flags & MB_INFO_MODS, 0);
	assert_int_equal(mbi.mods_count, 0);
	assert_string_equal((char *)ram + MB_CMDLINE_ADDR, "k ");
}

/* Each refusal leaves guest RAM untouched. */
static void refused(int want, const char *needle, const struct multiboot_args *a)
{
	struct multiboot_loaded out;
	struct error err;
	memset(ram, RAM_FILL, RAM_SIZE);
	assert_int_equal(load(a, &out, &err), want);
	if (!strstr(err.msg, needle))
		fail_msg("message '%s' lacks '%s'", err.msg, needle);
	for (uint64_t i = 0; i < 8 * MiB; i++)
		if (ram[i] != RAM_FILL)
			fail_msg("RAM written at 0x%llx", (unsigned long long)i);
}

static void test_refusals(void **state)
{
	struct multiboot_args a = { .name = "k" };
	img_init(MB_HDR_AOUT_KLUDGE);
	add_load(4 * MiB, 16, 16, 1);
	set_entry(4 * MiB);
	refused(-ENOEXEC, "a.out kludge", &a);
	img_init(MB_HDR_VIDEO_MODE);
	add_load(4 * MiB, 16, 16, 1);
	set_entry(4 * MiB);
	refused(-ENOEXEC, "video mode", &a);
	img_init(1u << 5);
	add_load(4 * MiB, 16, 16, 1);
	set_entry(4 * MiB);
	refused(-ENOEXEC, "0x20", &a);
	/* ELF64, wrong machine, no segment, entry outside. */
	typical();
	im.buf[EI_CLASS] = ELFCLASS64;
	refused(-ENOEXEC, "32-bit", &a);
	typical();
	uint16_t m = EM_X86_64;
	memcpy(im.buf + offsetof(Elf32_Ehdr, e_machine), &m, 2);
	refused(-ENOEXEC, "i386", &a);
	img_init(0);
	refused(-ENOEXEC, "program headers", &a);
	typical();
	set_entry(0x100);
	refused(-ENOEXEC, "entry 0x100", &a);
	/* Segment over the boot data, the legacy area, the MMIO hole, outside RAM, past the file. */
	img_init(0);
	add_load(MB_CMDLINE_ADDR, 16, 16, 1);
	set_entry(MB_CMDLINE_ADDR);
	refused(-ERANGE, "boot data", &a);
	img_init(0);
	add_load(0xF0000, 16, 16, 1);
	set_entry(0xF0000);
	refused(-ERANGE, "ACPI", &a);
	img_init(0);
	add_load(0xA0000, 16, 16, 1);
	set_entry(0xA0000);
	refused(-ERANGE, "legacy", &a);
	img_init(0);
	add_load(0xC0000000u, 16, 16, 1);
	set_entry(0xC0000000u);
	refused(-ERANGE, "MMIO hole", &a);
	img_init(0);
	add_load(RAM_SIZE - 8, 16, 16, 1);
	set_entry(RAM_SIZE - 8);
	refused(-ERANGE, "outside guest RAM", &a);
	img_init(0);
	add_load(0xFFFFFFF0u, 0, 0x20, 1);
	set_entry(0xFFFFFFF0u);
	refused(-ERANGE, "", &a);
	typical();
	Elf32_Phdr ph;
	memcpy(&ph, im.buf + sizeof(Elf32_Ehdr), sizeof(ph));
	ph.p_filesz = 0x10000;
	memcpy(im.buf + sizeof(Elf32_Ehdr), &ph, sizeof(ph));
	refused(-ENOEXEC, "file size exceeds", &a);
	ph.p_memsz = 0x10000;
	memcpy(im.buf + sizeof(Elf32_Ehdr), &ph, sizeof(ph));
	refused(-ENOEXEC, "past the end of the file", &a);
	/* Command line too long; module too big for RAM. */
	typical();
	static char longcl[MB_CMDLINE_MAX];
	memset(longcl, 'x', sizeof(longcl) - 2);
	longcl[sizeof(longcl) - 2] = '\0';
	struct multiboot_args b = { .name = "k", .cmdline = longcl };
	refused(-E2BIG, "limit is 4095", &b); /* "k" + ' ' + 4094 + NUL = 4097 */
}

static void test_cmdline_limit_exact(void **state)
{
	typical();
	static char cl[MB_CMDLINE_MAX];
	memset(cl, 'y', MB_CMDLINE_MAX - 3);
	cl[MB_CMDLINE_MAX - 3] = '\0';
	struct multiboot_args a = { .name = "k", .cmdline = cl }; /* 1 + 1 + 4093 + NUL = 4096 */
	struct multiboot_loaded out;
	struct error err;
	assert_int_equal(load(&a, &out, &err), 0);
	assert_int_equal(strlen((char *)ram + MB_CMDLINE_ADDR), MB_CMDLINE_MAX - 1);
}

static void test_module_too_big(void **state)
{
	typical();
	static uint8_t mod[64];
	struct multiboot_args a = { .name = "k", .module = mod, .module_size = RAM_SIZE };
	refused(-ENOSPC, "does not fit", &a);
}

/* kvm-unit-tests' realmode test loads at 32 KiB: below the boot data's end would be refused for
 * PVH, but multiboot's boot data ends at MB_DATA_END. */
static void test_low_load(void **state)
{
	img_init(0);
	add_load(32 * KiB, 0x100, 0x4000, 0x5a);
	set_entry(32 * KiB);
	struct multiboot_args a = { .name = "realmode.flat" };
	struct multiboot_loaded out;
	struct error err;
	assert_int_equal(load(&a, &out, &err), 0);
	assert_int_equal(ram[32 * KiB], 0x5a);
	assert_int_equal(ram[32 * KiB + 0x100], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup(fn, setup)
		T(test_find),
		T(test_loads_segments_and_zeroes_bss),
		T(test_info_bytes),
		T(test_no_module_no_cmdline),
		T(test_refusals),
		T(test_cmdline_limit_exact),
		T(test_module_too_big),
		T(test_low_load),
#undef T
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	free(ram);
	return r;
}
