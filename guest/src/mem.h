/* guest/src/mem.h - bump allocator for guest RAM after the probe image (from the PVH memory map). */
#ifndef PROBE_MEM_H
#define PROBE_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "start_info.h"

/*
 * Free RAM starts at __image_end rounded up to 4 KiB and ends at the end of
 * the e820 RAM entry (type 1) that contains that address, capped at 3 GiB
 * (0xC0000000 up is mapped uncached for MMIO). Without a memory map
 * (start_info version 0) 16 MiB of total RAM are assumed. The memory is not
 * cleared.
 */
void mem_init(const struct hvm_start_info *si);

/* Bytes still free. */
size_t mem_avail(void);

/* `size` bytes aligned to 4 KiB, or NULL if they do not fit. Never freed. */
void *mem_alloc(size_t size);

#endif
