/* Multiboot v1 boot: find the header, load an ELF32 image by its program headers, build multiboot_info. */
#ifndef MSIVM_ARCH_X86_MULTIBOOT_H
#define MSIVM_ARCH_X86_MULTIBOOT_H

#include <stddef.h>
#include <stdint.h>

#include "core/guest_mem.h"
#include "util/error.h"

#define MULTIBOOT_HEADER_MAGIC 0x1BADB002u  /* in the image */
#define MULTIBOOT_BOOT_MAGIC   0x2BADB002u  /* in %eax at entry */
#define MULTIBOOT_SEARCH       8192         /* the header lies in the first 8 KiB, 4-aligned */

/* Header flags (bits 0-15 are requirements a loader must meet or refuse). */
#define MB_HDR_PAGE_ALIGN  (1u << 0)        /* modules page aligned: always done */
#define MB_HDR_MEMORY_INFO (1u << 1)        /* mem_* and the memory map: always given */
#define MB_HDR_VIDEO_MODE  (1u << 2)        /* a video mode: msivm has no display */
#define MB_HDR_AOUT_KLUDGE (1u << 16)       /* load addresses in the header instead of ELF */

/* multiboot_info flags msivm sets. */
#define MB_INFO_MEMORY   (1u << 0)
#define MB_INFO_CMDLINE  (1u << 2)
#define MB_INFO_MODS     (1u << 3)
#define MB_INFO_MMAP     (1u << 6)
#define MB_INFO_LOADER   (1u << 9)

/* The boot data msivm writes for a multiboot kernel, all in [MB_DATA_START,
 * MB_DATA_END): a kernel segment may not overlap it (the rest of the low
 * 640 KiB is the kernel's: kvm-unit-tests' realmode test loads at 32 KiB). */
#define MB_DATA_START  0x1000ULL
#define MB_INFO_ADDR   0x1000ULL   /* struct multiboot_info */
#define MB_MODS_ADDR   0x1080ULL   /* struct multiboot_mod: the initrd as module 0 */
#define MB_LOADER_ADDR 0x10C0ULL   /* boot_loader_name, "msivm" */
#define MB_MMAP_ADDR   0x1100ULL   /* struct multiboot_mmap[] */
#define MB_CMDLINE_ADDR 0x2000ULL  /* "<kernel path> <command line>", NUL-terminated */
#define MB_CMDLINE_MAX 4096
#define MB_DATA_END    (MB_CMDLINE_ADDR + MB_CMDLINE_MAX)

/* The Multiboot 0.6.96 structures (little-endian, as the spec lays them out). */
struct multiboot_info {
	uint32_t flags;
	uint32_t mem_lower;          /* KiB of RAM from 0 */
	uint32_t mem_upper;          /* KiB of RAM from 1 MiB up to the first hole */
	uint32_t boot_device;
	uint32_t cmdline;
	uint32_t mods_count;
	uint32_t mods_addr;
	uint32_t syms[4];
	uint32_t mmap_length;        /* bytes */
	uint32_t mmap_addr;
	uint32_t drives_length;
	uint32_t drives_addr;
	uint32_t config_table;
	uint32_t boot_loader_name;
	uint32_t apm_table;
	uint32_t vbe_control_info;
	uint32_t vbe_mode_info;
	uint16_t vbe_mode, vbe_interface_seg, vbe_interface_off, vbe_interface_len;
};

struct multiboot_mod {
	uint32_t mod_start, mod_end, cmdline, reserved;
};

struct multiboot_mmap {
	uint32_t size;               /* of the rest of the entry: 20 */
	uint64_t addr;
	uint64_t len;
	uint32_t type;               /* 1: RAM, 2: reserved */
} __attribute__((packed));

/* What to pass the kernel beside its image. */
struct multiboot_args {
	const char *name;            /* the kernel's path: the command line's first word */
	const char *cmdline;         /* NULL: none */
	const uint8_t *module;       /* the initrd, module 0; NULL: no module */
	size_t module_size;
};

struct multiboot_loaded {
	uint32_t entry;              /* ELF e_entry */
	uint64_t load_start, load_end;
	uint64_t module_addr;        /* 0 without a module */
};

/* Looks for a multiboot v1 header (magic, flags, checksum summing to 0) at a
 * 4-byte aligned offset in the first MULTIBOOT_SEARCH bytes of `image`.
 * Returns 1 and its flags in *flags, or 0. */
int multiboot_find(const uint8_t *image, size_t size, uint32_t *flags);

/* Loads a multiboot v1 kernel: checks the header's flags (a requirement
 * msivm cannot meet, or the a.out kludge, is refused), then an ELF32 x86
 * executable whose PT_LOAD segments (by physical address) fit in guest RAM
 * outside the MMIO hole, the legacy area, the ACPI tables and the boot data
 * [MB_DATA_START, MB_DATA_END), with e_entry in one of them; copies them
 * (zeroing bss), places the module page-aligned above the image, and writes
 * multiboot_info (memory, memory map, command line, module, loader name).
 * Returns 0 and fills *out, or -ENOEXEC/-ERANGE/-E2BIG/-ENOSPC with a message;
 * guest RAM is written only when every check passed. */
int multiboot_load(const struct guest_mem *gm, const uint8_t *image, size_t size,
		   const struct multiboot_args *args, struct multiboot_loaded *out,
		   struct error *err);

#endif
