/* PVH boot: load an ELF kernel with a XEN_ELFNOTE_PHYS32_ENTRY note and build hvm_start_info. */
#ifndef MSIVM_ARCH_X86_PVH_H
#define MSIVM_ARCH_X86_PVH_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "core/guest_mem.h"

#define XEN_ELFNOTE_PHYS32_ENTRY 18
#define HVM_START_MAGIC 0x336ec578u

/* The PVH ABI structures (xen/include/public/arch-x86/hvm/start_info.h). */
struct hvm_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;   /* version >= 1 */
	uint32_t memmap_entries;
	uint32_t reserved;
};

struct hvm_memmap_table_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint32_t reserved;
};

struct hvm_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
};

struct pvh_image {
	uint32_t entry;      /* 32-bit physical entry point from the note */
	uint64_t load_start; /* lowest byte loaded */
	uint64_t load_end;   /* one past the highest byte loaded (memsz) */
};

/* Checks that `image` is an x86-64 ELF executable with a PVH entry note and
 * that every PT_LOAD segment fits in guest RAM, outside the MMIO hole,
 * msivm's boot data and the ACPI tables; then copies the segments (zeroing
 * .bss). Returns 0 and fills *out, or -ENOEXEC/-EINVAL/-ERANGE with a
 * message in *err. Nothing is written to guest memory unless every check
 * passes. */
int pvh_load_elf(const struct guest_mem *gm, const uint8_t *image, size_t size,
		 struct pvh_image *out, struct error *err);

/* Writes hvm_start_info (version 1), its memory map and the command line at
 * their fixed places in the boot data area. Returns 0, or -E2BIG when the
 * command line does not fit in CMDLINE_MAX bytes (message in *err). */
int pvh_write_start_info(const struct guest_mem *gm, const char *cmdline, struct error *err);

/* Adds to the hvm_start_info that pvh_write_start_info wrote: the ACPI RSDP
 * address `rsdp` (0: none) and, when `initrd_size` is not 0, the initrd at
 * `initrd_addr` as module 0 (modlist at PVH_MODLIST; Linux takes it as its
 * initrd). Returns 0, or -ERANGE with a message if RAM does not hold them. */
int pvh_set_boot_extras(const struct guest_mem *gm, uint64_t rsdp, uint64_t initrd_addr,
			uint64_t initrd_size, struct error *err);

#endif
