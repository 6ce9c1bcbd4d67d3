/* Multiboot v1 boot: header -> ELF32 checks -> segments copied -> module placed -> multiboot_info written. */
#include "arch/x86/multiboot.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "arch/x86/e820.h"
#include "arch/x86/initrd.h"
#include "arch/x86/kernel_seg.h"
#include "arch/x86/layout.h"

_Static_assert(sizeof(struct multiboot_info) == 88, "multiboot_info layout");
_Static_assert(sizeof(struct multiboot_mmap) == 24, "mmap entry layout");
_Static_assert(MB_INFO_ADDR + sizeof(struct multiboot_info) <= MB_MODS_ADDR &&
	       MB_MODS_ADDR + sizeof(struct multiboot_mod) <= MB_LOADER_ADDR &&
	       MB_LOADER_ADDR + sizeof("msivm") <= MB_MMAP_ADDR &&
	       MB_MMAP_ADDR + E820_MAX_ENTRIES * sizeof(struct multiboot_mmap) <= MB_CMDLINE_ADDR,
	       "multiboot boot data room");

/* The header flags' requirement bits (0-15) msivm meets. */
#define MB_HDR_KNOWN (MB_HDR_PAGE_ALIGN | MB_HDR_MEMORY_INFO)

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

int multiboot_find(const uint8_t *image, size_t size, uint32_t *flags)
{
	size_t lim = size < MULTIBOOT_SEARCH ? size : MULTIBOOT_SEARCH;
	for (size_t off = 0; off + 12 <= lim; off += 4) {
		uint32_t magic = rd32(image + off), fl = rd32(image + off + 4);
		if (magic == MULTIBOOT_HEADER_MAGIC &&
		    (uint32_t)(magic + fl + rd32(image + off + 8)) == 0) {
			*flags = fl;
			return 1;
		}
	}
	return 0;
}

static int check_flags(uint32_t flags, struct error *err)
{
	if (flags & MB_HDR_AOUT_KLUDGE)
		return error_set(err, -ENOEXEC, "multiboot header asks for the a.out kludge (flag 16): "
				 "msivm loads multiboot kernels as ELF only");
	if (flags & MB_HDR_VIDEO_MODE)
		return error_set(err, -ENOEXEC, "multiboot header asks for a video mode (flag 2): "
				 "msivm has no display");
	uint32_t unknown = flags & 0xffffu & ~MB_HDR_KNOWN;
	if (unknown)
		return error_set(err, -ENOEXEC, "multiboot header requires features 0x%x that msivm "
				 "does not know", unknown);
	return 0;
}

static int check_elf32(const uint8_t *image, size_t size, struct error *err)
{
	if (size < sizeof(Elf32_Ehdr) || memcmp(image, ELFMAG, SELFMAG) != 0)
		return error_set(err, -ENOEXEC, "multiboot kernel is not an ELF file (msivm does not "
				 "take the a.out kludge)");
	if (image[EI_CLASS] != ELFCLASS32 || image[EI_DATA] != ELFDATA2LSB)
		return error_set(err, -ENOEXEC, "multiboot kernel is not a 32-bit little-endian ELF "
				 "file");
	Elf32_Ehdr eh;
	memcpy(&eh, image, sizeof(eh));
	if (eh.e_machine != EM_386)
		return error_set(err, -ENOEXEC, "ELF machine %u is not i386", eh.e_machine);
	if (eh.e_type != ET_EXEC)
		return error_set(err, -ENOEXEC, "ELF type %u is not an executable kernel", eh.e_type);
	if (eh.e_phentsize != sizeof(Elf32_Phdr) || eh.e_phnum == 0 || eh.e_phoff > size ||
	    (uint64_t)eh.e_phnum * sizeof(Elf32_Phdr) > size - eh.e_phoff)
		return error_set(err, -ENOEXEC, "ELF program headers are missing or truncated");
	return 0;
}

static Elf32_Phdr phdr(const uint8_t *image, const Elf32_Ehdr *eh, unsigned i)
{
	Elf32_Phdr ph;
	memcpy(&ph, image + eh->e_phoff + (size_t)i * sizeof(ph), sizeof(ph));
	return ph;
}

/* Pass 1: every PT_LOAD checked, the span and whether the entry is loaded. */
static int check_segments(const struct guest_mem *gm, const uint8_t *image, size_t size,
			  const Elf32_Ehdr *eh, struct multiboot_loaded *out, struct error *err)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	int entry_loaded = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf32_Phdr ph = phdr(image, eh, i);
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		struct kernel_seg seg = { .idx = i, .offset = ph.p_offset, .filesz = ph.p_filesz,
					  .paddr = ph.p_paddr, .memsz = ph.p_memsz };
		int ret = kernel_seg_check(gm, size, &seg, MB_DATA_START, MB_DATA_END, err);
		if (ret)
			return ret;
		lo = seg.paddr < lo ? seg.paddr : lo;
		hi = seg.paddr + seg.memsz > hi ? seg.paddr + seg.memsz : hi;
		entry_loaded |= eh->e_entry >= seg.paddr && eh->e_entry - seg.paddr < seg.memsz;
	}
	if (hi == 0)
		return error_set(err, -ENOEXEC, "the ELF has no loadable segment");
	if (!entry_loaded)
		return error_set(err, -ENOEXEC, "entry 0x%x is not inside any loaded segment (image "
				 "spans 0x%" PRIx64 "-0x%" PRIx64 ")", eh->e_entry, lo, hi);
	*out = (struct multiboot_loaded){ .entry = eh->e_entry, .load_start = lo, .load_end = hi };
	return 0;
}

static void copy_segments(const struct guest_mem *gm, const uint8_t *image, const Elf32_Ehdr *eh)
{
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf32_Phdr ph = phdr(image, eh, i);
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		uint8_t *dst = gm_ptr(gm, ph.p_paddr, ph.p_memsz);
		memcpy(dst, image + ph.p_offset, ph.p_filesz);
		memset(dst + ph.p_filesz, 0, ph.p_memsz - ph.p_filesz);
	}
}

/* multiboot_info, memory map and loader name; the command line and module
 * were placed by the caller. */
static void write_info(const struct guest_mem *gm, const struct multiboot_loaded *l,
		       size_t module_size)
{
	struct e820_entry map[E820_MAX_ENTRIES];
	uint32_t n = e820_build(gm, map);
	struct multiboot_mmap *mm = gm_ptr(gm, MB_MMAP_ADDR, (uint64_t)n * sizeof(*mm));
	for (uint32_t i = 0; i < n; i++)
		mm[i] = (struct multiboot_mmap){ .size = sizeof(*mm) - 4, .addr = map[i].addr,
						 .len = map[i].size, .type = map[i].type };
	memcpy(gm_ptr(gm, MB_LOADER_ADDR, sizeof("msivm")), "msivm", sizeof("msivm"));
	uint64_t top = low_ram_top(gm);
	struct multiboot_info mbi = {
		.flags = MB_INFO_MEMORY | MB_INFO_CMDLINE | MB_INFO_MMAP | MB_INFO_LOADER,
		.mem_lower = (uint32_t)(LOW_RAM_END / KiB),
		.mem_upper = (uint32_t)((top - HIGH_MEM_START) / KiB),
		.cmdline = (uint32_t)MB_CMDLINE_ADDR,
		.mmap_length = n * (uint32_t)sizeof(*mm),
		.mmap_addr = (uint32_t)MB_MMAP_ADDR,
		.boot_loader_name = (uint32_t)MB_LOADER_ADDR,
	};
	if (module_size) {
		struct multiboot_mod mod = {
			.mod_start = (uint32_t)l->module_addr,
			.mod_end = (uint32_t)(l->module_addr + module_size),
		};
		memcpy(gm_ptr(gm, MB_MODS_ADDR, sizeof(mod)), &mod, sizeof(mod));
		mbi.flags |= MB_INFO_MODS;
		mbi.mods_count = 1;
		mbi.mods_addr = (uint32_t)MB_MODS_ADDR;
	}
	memcpy(gm_ptr(gm, MB_INFO_ADDR, sizeof(mbi)), &mbi, sizeof(mbi));
}

int multiboot_load(const struct guest_mem *gm, const uint8_t *image, size_t size,
		   const struct multiboot_args *args, struct multiboot_loaded *out,
		   struct error *err)
{
	uint32_t flags;
	if (!multiboot_find(image, size, &flags))
		return error_set(err, -ENOEXEC, "no multiboot header in the first %u bytes",
				 MULTIBOOT_SEARCH);
	int ret = check_flags(flags, err);
	if (!ret)
		ret = check_elf32(image, size, err);
	if (ret)
		return ret;
	const char *name = args->name ? args->name : "";
	const char *cl = args->cmdline ? args->cmdline : "";
	size_t namelen = strlen(name), cllen = strlen(cl);
	if (namelen + 1 + cllen + 1 > MB_CMDLINE_MAX)
		return error_set(err, -E2BIG, "kernel path and command line are %zu bytes; the "
				 "limit is %u", namelen + 1 + cllen, MB_CMDLINE_MAX - 1);
	if (!gm_contains(gm, MB_DATA_START, MB_DATA_END - MB_DATA_START))
		return error_set(err, -ERANGE, "guest RAM too small for the boot data");
	Elf32_Ehdr eh;
	memcpy(&eh, image, sizeof(eh));
	struct multiboot_loaded l;
	ret = check_segments(gm, image, size, &eh, &l, err);
	if (ret)
		return ret;
	if (args->module) {
		/* Above the image and at or above 1 MiB: never over the boot data. */
		ret = initrd_place(gm, args->module_size, l.load_end, (uint64_t)UINT32_MAX + 1,
				   &l.module_addr, err);
		if (ret)
			return ret;
	}
	copy_segments(gm, image, &eh);
	if (args->module)
		memcpy(gm_ptr(gm, l.module_addr, args->module_size), args->module,
		       args->module_size);
	char *c = gm_ptr(gm, MB_CMDLINE_ADDR, MB_CMDLINE_MAX);
	memset(c, 0, MB_CMDLINE_MAX);
	memcpy(c, name, namelen);
	c[namelen] = ' ';
	memcpy(c + namelen + 1, cl, cllen);
	write_info(gm, &l, args->module ? args->module_size : 0);
	*out = l;
	return 0;
}
