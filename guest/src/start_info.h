/* guest/src/start_info.h - PVH boot ABI structures (xen/include/public/arch-x86/hvm/start_info.h). */
#ifndef PROBE_START_INFO_H
#define PROBE_START_INFO_H

#include <stdint.h>

#define HVM_START_MAGIC_VALUE 0x336ec578u

/* Passed in %ebx at the PVH entry point. All addresses are guest-physical. */
struct hvm_start_info {
    uint32_t magic;          /* HVM_START_MAGIC_VALUE */
    uint32_t version;        /* >= 1: memmap_paddr/memmap_entries are valid */
    uint32_t flags;
    uint32_t nr_modules;
    uint64_t modlist_paddr;  /* struct hvm_modlist_entry[nr_modules] */
    uint64_t cmdline_paddr;  /* NUL-terminated command line, 0 if none */
    uint64_t rsdp_paddr;     /* ACPI RSDP, 0 if none */
    uint64_t memmap_paddr;   /* struct hvm_memmap_table_entry[memmap_entries] */
    uint32_t memmap_entries;
    uint32_t reserved;
};

struct hvm_modlist_entry {
    uint64_t paddr;
    uint64_t size;
    uint64_t cmdline_paddr;
    uint64_t reserved;
};

/* E820-compatible memory map entry. */
struct hvm_memmap_table_entry {
    uint64_t addr;
    uint64_t size;
    uint32_t type;           /* 1 RAM, 2 reserved, 3 ACPI, 4 NVS, 5 unusable */
    uint32_t reserved;
};

#define HVM_MEMMAP_TYPE_RAM 1

_Static_assert(sizeof(struct hvm_start_info) == 56, "hvm_start_info layout");
_Static_assert(sizeof(struct hvm_memmap_table_entry) == 24, "memmap entry layout");

#endif
