/* guest/src/mem.c - bump allocator over the RAM that follows the probe image. */
#include "mem.h"

#define PAGE            4096ull
#define MEM_CAP         0xc0000000ull   /* PD3 (uncached MMIO window) starts here */
#define MEM_NO_MAP_END  0x1000000ull    /* assumed RAM end without a memory map */

extern char __image_end[];

static uint64_t mem_next, mem_end;

void mem_init(const struct hvm_start_info *si)
{
    uint64_t base = ((uint64_t)(uintptr_t)__image_end + PAGE - 1) & ~(PAGE - 1);
    uint32_t i;

    mem_next = mem_end = base;
    if (si->version < 1 || si->memmap_paddr == 0 || si->memmap_paddr >= MEM_CAP) {
        if (base < MEM_NO_MAP_END)
            mem_end = MEM_NO_MAP_END;
        return;
    }
    const struct hvm_memmap_table_entry *e =
        (const struct hvm_memmap_table_entry *)(uintptr_t)si->memmap_paddr;
    for (i = 0; i < si->memmap_entries; i++) {
        if (e[i].type == HVM_MEMMAP_TYPE_RAM && e[i].addr <= base &&
            base < e[i].addr + e[i].size) {
            mem_end = e[i].addr + e[i].size;
            break;
        }
    }
    if (mem_end > MEM_CAP)
        mem_end = MEM_CAP;
    mem_end &= ~(PAGE - 1);
    if (mem_end < base)
        mem_end = base;
}

size_t mem_avail(void)
{
    return (size_t)(mem_end - mem_next);
}

void *mem_alloc(size_t size)
{
    uint64_t p = mem_next, sz = ((uint64_t)size + PAGE - 1) & ~(PAGE - 1);

    if (sz > mem_end - mem_next)
        return 0;
    mem_next += sz;
    return (void *)(uintptr_t)p;
}
