/* Long-mode boot state: identity page tables and the flat boot GDT -> guest RAM. */
#include "arch/x86/longmode.h"

#include <errno.h>
#include <string.h>

#include "arch/x86/layout.h"

#define PAGE_BYTES 4096ULL
#define PT_ENTRIES 512ULL
#define PAGE_2M    (2 * MiB)

_Static_assert(BOOT_PDPT == BOOT_PML4 + PAGE_BYTES && BOOT_PD == BOOT_PDPT + PAGE_BYTES,
	       "page tables are contiguous");
_Static_assert(BOOT_PD + BOOT_PD_COUNT * PAGE_BYTES <= CMDLINE_ADDR &&
	       BOOT_GDT + LM_GDT_BYTES <= PVH_START_INFO && ZERO_PAGE + PAGE_BYTES <= BOOT_PML4,
	       "boot data does not overlap");
_Static_assert(BOOT_PD_COUNT <= PT_ENTRIES, "one PDPT");

/* Flat descriptors: base 0, limit 0xfffff in 4 KiB units. Access byte
 * 0x9b = present, ring 0, code, execute/read, accessed; 0x93 = data,
 * read/write, accessed. Flags 0xa = granularity + long mode; 0xc =
 * granularity + 32-bit default size. */
#define DESC_CODE64 0x00af9b000000ffffULL
#define DESC_DATA   0x00cf93000000ffffULL
/* 64-bit TSS (busy, type 0xb), base 0, limit 0x67; the upper half is 0. */
#define DESC_TSS_LO 0x00008b0000000067ULL

int longmode_write_tables(const struct guest_mem *gm, struct error *err)
{
	uint64_t pt_bytes = (2 + BOOT_PD_COUNT) * PAGE_BYTES;
	uint64_t *pml4 = gm_ptr(gm, BOOT_PML4, pt_bytes);
	uint64_t *gdt = gm_ptr(gm, BOOT_GDT, LM_GDT_BYTES);
	if (!pml4 || !gdt)
		return error_set(err, -ERANGE, "guest RAM too small for the boot page tables");

	memset(pml4, 0, pt_bytes);
	uint64_t *pdpt = pml4 + PT_ENTRIES;
	uint64_t *pd = pdpt + PT_ENTRIES;
	pml4[0] = BOOT_PDPT | PTE_PRESENT | PTE_WRITABLE;
	for (uint64_t i = 0; i < BOOT_PD_COUNT; i++)
		pdpt[i] = (BOOT_PD + i * PAGE_BYTES) | PTE_PRESENT | PTE_WRITABLE;
	for (uint64_t i = 0; i < BOOT_PD_COUNT * PT_ENTRIES; i++)
		pd[i] = (i * PAGE_2M) | PTE_PRESENT | PTE_WRITABLE | PTE_PS;

	memset(gdt, 0, LM_GDT_BYTES);
	gdt[LM_SEL_CODE64 / 8] = DESC_CODE64;
	gdt[LM_SEL_DATA / 8] = DESC_DATA;
	gdt[LM_SEL_TSS / 8] = DESC_TSS_LO;
	return 0;
}
