/* PVH boot: ELF kernel image -> guest RAM segments, start_info, memory map, command line, RSDP, initrd. */
#include "arch/x86/pvh.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "arch/x86/e820.h"
#include "arch/x86/kernel_seg.h"
#include "arch/x86/layout.h"

_Static_assert(sizeof(struct hvm_start_info) == 56, "hvm_start_info layout");
_Static_assert(sizeof(struct hvm_memmap_table_entry) == 24, "memmap entry layout");
_Static_assert(sizeof(struct hvm_modlist_entry) == 32, "modlist entry layout");
_Static_assert(PVH_MODLIST >= PVH_START_INFO + sizeof(struct hvm_start_info) &&
	       PVH_MODLIST + sizeof(struct hvm_modlist_entry) <= PVH_MEMMAP, "modlist room");

/* True if [off, off+len) lies inside a buffer of `size` bytes. */
static int in_file(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

static int check_header(const uint8_t *image, size_t size, struct error *err)
{
	if (size < EI_NIDENT || memcmp(image, ELFMAG, SELFMAG) != 0)
		return error_set(err, -ENOEXEC, "not an ELF file");
	if (size < sizeof(Elf64_Ehdr))
		return error_set(err, -ENOEXEC, "truncated ELF header");
	if (image[EI_CLASS] != ELFCLASS64 || image[EI_DATA] != ELFDATA2LSB)
		return error_set(err, -ENOEXEC, "not a 64-bit little-endian ELF file");
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
	if (eh->e_machine != EM_X86_64)
		return error_set(err, -ENOEXEC, "ELF machine %u is not x86-64", eh->e_machine);
	if (eh->e_type != ET_EXEC)
		return error_set(err, -ENOEXEC, "ELF type %u is not an executable kernel", eh->e_type);
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0 ||
	    !in_file(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return error_set(err, -ENOEXEC, "ELF program headers are missing or truncated");
	if (eh->e_phoff % 8)
		return error_set(err, -ENOEXEC, "ELF program headers are misaligned");
	return 0;
}

/* Looks for the PVH entry note in one PT_NOTE segment. Returns 1 if found. */
static int find_note(const uint8_t *image, const Elf64_Phdr *ph, uint32_t *entry)
{
	uint64_t off = ph->p_offset, end = ph->p_offset + ph->p_filesz;
	while (end - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		memcpy(&nh, image + off, sizeof(nh));
		uint64_t name_off = off + sizeof(nh);
		uint64_t desc_off = name_off + (((uint64_t)nh.n_namesz + 3) & ~3ULL);
		uint64_t next = desc_off + (((uint64_t)nh.n_descsz + 3) & ~3ULL);
		if (next > end || next <= off)
			return 0;
		if (nh.n_type == XEN_ELFNOTE_PHYS32_ENTRY && nh.n_namesz == 4 &&
		    memcmp(image + name_off, "Xen", 4) == 0) {
			if (nh.n_descsz == 4) {
				uint32_t v;
				memcpy(&v, image + desc_off, 4);
				*entry = v;
				return 1;
			}
			if (nh.n_descsz == 8) { /* Linux writes the address as a .quad */
				uint64_t v;
				memcpy(&v, image + desc_off, 8);
				if (v > UINT32_MAX)
					return 0;
				*entry = (uint32_t)v;
				return 1;
			}
			return 0;
		}
		off = next;
	}
	return 0;
}

static int check_segment(const struct guest_mem *gm, size_t size, unsigned idx,
			 const Elf64_Phdr *ph, struct error *err)
{
	struct kernel_seg seg = { .idx = idx, .offset = ph->p_offset, .filesz = ph->p_filesz,
				  .paddr = ph->p_paddr, .memsz = ph->p_memsz };
	return kernel_seg_check(gm, size, &seg, BOOT_DATA_START, BOOT_DATA_END, err);
}

int pvh_load_elf(const struct guest_mem *gm, const uint8_t *image, size_t size,
		 struct pvh_image *out, struct error *err)
{
	int ret = check_header(image, size, err);
	if (ret)
		return ret;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
	const Elf64_Phdr *phs = (const Elf64_Phdr *)(image + eh->e_phoff);

	/* Pass 1: find the note and validate everything before touching RAM. */
	uint32_t entry = 0;
	int have_entry = 0, nload = 0, entry_loaded = 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = &phs[i];
		if (ph->p_type == PT_NOTE && !have_entry && in_file(size, ph->p_offset, ph->p_filesz))
			have_entry = find_note(image, ph, &entry);
		if (ph->p_type != PT_LOAD || ph->p_memsz == 0)
			continue;
		ret = check_segment(gm, size, i, ph, err);
		if (ret)
			return ret;
		nload++;
		if (ph->p_paddr < lo)
			lo = ph->p_paddr;
		if (ph->p_paddr + ph->p_memsz > hi)
			hi = ph->p_paddr + ph->p_memsz;
	}
	if (!have_entry)
		return error_set(err, -ENOEXEC,
				 "no PVH entry point: the ELF has no XEN_ELFNOTE_PHYS32_ENTRY note "
				 "(build the kernel with CONFIG_PVH=y)");
	if (nload == 0)
		return error_set(err, -ENOEXEC, "the ELF has no loadable segment");
	for (unsigned i = 0; i < eh->e_phnum && !entry_loaded; i++)
		entry_loaded = phs[i].p_type == PT_LOAD && entry >= phs[i].p_paddr &&
			       entry - phs[i].p_paddr < phs[i].p_memsz;
	if (!entry_loaded)
		return error_set(err, -ENOEXEC, "PVH entry 0x%x is not inside any loaded segment "
				 "(image spans 0x%" PRIx64 "-0x%" PRIx64 ")", entry, lo, hi);

	/* Pass 2: copy. Every range was checked above. */
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = &phs[i];
		if (ph->p_type != PT_LOAD || ph->p_memsz == 0)
			continue;
		uint8_t *dst = gm_ptr(gm, ph->p_paddr, ph->p_memsz);
		memcpy(dst, image + ph->p_offset, ph->p_filesz);
		memset(dst + ph->p_filesz, 0, ph->p_memsz - ph->p_filesz);
	}
	*out = (struct pvh_image){ .entry = entry, .load_start = lo, .load_end = hi };
	return 0;
}

int pvh_write_start_info(const struct guest_mem *gm, const char *cmdline, struct error *err)
{
	size_t cmdlen = cmdline ? strlen(cmdline) : 0;
	if (cmdlen + 1 > CMDLINE_MAX)
		return error_set(err, -E2BIG, "command line is %zu bytes; the limit is %u",
				 cmdlen, CMDLINE_MAX - 1);

	struct e820_entry map[E820_MAX_ENTRIES];
	uint32_t n = e820_build(gm, map);
	_Static_assert(E820_MAX_ENTRIES <= PVH_MEMMAP_MAX, "memmap room");

	struct hvm_memmap_table_entry *mm =
		gm_ptr(gm, PVH_MEMMAP, (uint64_t)n * sizeof(*mm));
	char *cl = gm_ptr(gm, CMDLINE_ADDR, CMDLINE_MAX);
	struct hvm_start_info *si = gm_ptr(gm, PVH_START_INFO, sizeof(*si));
	if (!mm || !cl || !si)
		return error_set(err, -ERANGE, "guest RAM too small for the boot data");

	for (uint32_t i = 0; i < n; i++)
		mm[i] = (struct hvm_memmap_table_entry){ map[i].addr, map[i].size, map[i].type, 0 };
	memset(cl, 0, CMDLINE_MAX);
	if (cmdlen)
		memcpy(cl, cmdline, cmdlen);
	*si = (struct hvm_start_info){
		.magic = HVM_START_MAGIC,
		.version = 1,
		.cmdline_paddr = CMDLINE_ADDR,
		.memmap_paddr = PVH_MEMMAP,
		.memmap_entries = n,
	};
	return 0;
}

int pvh_set_boot_extras(const struct guest_mem *gm, uint64_t rsdp, uint64_t initrd_addr,
			uint64_t initrd_size, struct error *err)
{
	struct hvm_start_info *si = gm_ptr(gm, PVH_START_INFO, sizeof(*si));
	struct hvm_modlist_entry *mod = gm_ptr(gm, PVH_MODLIST, sizeof(*mod));
	if (!si || !mod)
		return error_set(err, -ERANGE, "guest RAM too small for the boot data");
	si->rsdp_paddr = rsdp;
	if (initrd_size) {
		*mod = (struct hvm_modlist_entry){ .paddr = initrd_addr, .size = initrd_size };
		si->nr_modules = 1;
		si->modlist_paddr = PVH_MODLIST;
	}
	return 0;
}
