/* e820 memory map: the RAM and reserved ranges a guest is told about. */
#ifndef MSIVM_ARCH_X86_E820_H
#define MSIVM_ARCH_X86_E820_H

#include <stdint.h>

#include "core/guest_mem.h"

#define E820_RAM      1
#define E820_RESERVED 2

struct e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
};

#define E820_MAX_ENTRIES 8

/* Fills `out` (room for E820_MAX_ENTRIES) with the map for `gm`: low RAM below
 * 640 KiB, the legacy hole reserved, RAM from 1 MiB to the MMIO hole, RAM
 * above 4 GiB. Returns the number of entries. */
uint32_t e820_build(const struct guest_mem *gm, struct e820_entry *out);

#endif
