/* Long-mode boot state: identity-mapping page tables and a flat GDT that msivm writes to guest RAM. */
#ifndef MSIVM_ARCH_X86_LONGMODE_H
#define MSIVM_ARCH_X86_LONGMODE_H

#include <stdint.h>

#include "util/error.h"
#include "core/guest_mem.h"

/* Selectors of the boot GDT at BOOT_GDT (the Linux 64-bit boot protocol's
 * __BOOT_CS and __BOOT_DS), and its TSS descriptor (16 bytes). */
#define LM_SEL_CODE64 0x10
#define LM_SEL_DATA   0x18
#define LM_SEL_TSS    0x20
#define LM_GDT_BYTES  0x30

#define PTE_PRESENT  (1ULL << 0)
#define PTE_WRITABLE (1ULL << 1)
#define PTE_PS       (1ULL << 7)   /* in a page directory entry: a 2 MiB page */

/* Writes page tables that identity-map [0, BOOT_PD_COUNT GiB) with 2 MiB
 * pages (PML4 at BOOT_PML4, PDPT at BOOT_PDPT, directories from BOOT_PD) and
 * the boot GDT (null, null, 64-bit code at LM_SEL_CODE64, flat data at
 * LM_SEL_DATA, a busy 64-bit TSS at LM_SEL_TSS) at BOOT_GDT. Returns 0, or
 * -ERANGE with a message when guest RAM does not hold them. */
int longmode_write_tables(const struct guest_mem *gm, struct error *err);

#endif
