/* e820 memory map: derived from the guest RAM regions and the x86 layout. */
#include "arch/x86/e820.h"

#include "arch/x86/layout.h"

uint32_t e820_build(const struct guest_mem *gm, struct e820_entry *out)
{
	uint32_t n = 0;
	out[n++] = (struct e820_entry){ 0, LOW_RAM_END, E820_RAM };
	out[n++] = (struct e820_entry){ LOW_RAM_END, HIGH_MEM_START - LOW_RAM_END, E820_RESERVED };
	for (uint32_t i = 0; i < gm->nregions; i++) {
		const struct guest_mem_region *r = &gm->regions[i];
		uint64_t start = r->gpa < HIGH_MEM_START ? HIGH_MEM_START : r->gpa;
		uint64_t end = r->gpa + r->size;
		if (end > start)
			out[n++] = (struct e820_entry){ start, end - start, E820_RAM };
	}
	return n;
}
