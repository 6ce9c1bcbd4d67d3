/* Initrd placement: where in low guest RAM an initial ramdisk goes. */
#ifndef MSIVM_ARCH_X86_INITRD_H
#define MSIVM_ARCH_X86_INITRD_H

#include <stdint.h>

#include "util/error.h"
#include "core/guest_mem.h"

/* One past the last byte of the RAM region that starts at guest address 0
 * (RAM below the MMIO hole). */
uint64_t low_ram_top(const struct guest_mem *gm);

/* Chooses the page-aligned address for an initrd of `size` bytes as high as
 * possible: it ends at or below `limit` (exclusive; e.g. initrd_addr_max + 1)
 * and the top of low RAM, and starts at or above `floor` (the end of the
 * kernel) and 1 MiB (below it lie msivm's boot data, the legacy area and
 * the ACPI tables). Returns 0 and *addr, or -ENOSPC (with a message giving the sizes)
 * when it does not fit. Writes nothing. */
int initrd_place(const struct guest_mem *gm, uint64_t size, uint64_t floor, uint64_t limit,
		 uint64_t *addr, struct error *err);

#endif
