/* Initrd placement: size, kernel end and limits -> the highest page-aligned slot in low RAM. */
#include "arch/x86/initrd.h"

#include <errno.h>
#include <inttypes.h>

#include "arch/x86/layout.h"

#define PAGE_MASK 0xfffULL

uint64_t low_ram_top(const struct guest_mem *gm)
{
	for (uint32_t i = 0; i < gm->nregions; i++)
		if (gm->regions[i].gpa == 0)
			return gm->regions[i].size;
	return 0;
}

int initrd_place(const struct guest_mem *gm, uint64_t size, uint64_t floor, uint64_t limit,
		 uint64_t *addr, struct error *err)
{
	if (size == 0)
		return error_set(err, -EINVAL, "initrd is empty");
	uint64_t top = low_ram_top(gm);
	if (limit < top)
		top = limit;
	/* Never below 1 MiB: boot data, the legacy area and the ACPI tables. */
	if (floor < HIGH_MEM_START)
		floor = HIGH_MEM_START;
	if (floor > UINT64_MAX - PAGE_MASK)
		return error_set(err, -ENOSPC, "initrd: the kernel ends at 0x%" PRIx64 ", no room "
				 "above it", floor);
	uint64_t lowest = (floor + PAGE_MASK) & ~PAGE_MASK;
	if (size > top || ((top - size) & ~PAGE_MASK) < lowest)
		return error_set(err, -ENOSPC,
				 "initrd of %" PRIu64 " bytes does not fit between the kernel's end "
				 "(0x%" PRIx64 ") and 0x%" PRIx64 " (the lower of the kernel's "
				 "initrd_addr_max and the top of RAM below the MMIO hole)",
				 size, floor, top);
	*addr = (top - size) & ~PAGE_MASK;
	return 0;
}
