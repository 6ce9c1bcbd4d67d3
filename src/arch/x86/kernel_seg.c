/* Kernel segment checks: a segment's file range, then its guest range against RAM and msivm's fixed areas. */
#include "arch/x86/kernel_seg.h"

#include <errno.h>
#include <inttypes.h>

#include "arch/x86/layout.h"

static int overlaps(uint64_t start, uint64_t end, uint64_t lo, uint64_t hi)
{
	return start < hi && end > lo;
}

int kernel_seg_check(const struct guest_mem *gm, size_t file_size, const struct kernel_seg *s,
		     uint64_t resv_start, uint64_t resv_end, struct error *err)
{
	unsigned idx = s->idx;
	if (s->filesz > s->memsz)
		return error_set(err, -ENOEXEC, "segment %u: file size exceeds memory size", idx);
	if (s->offset > file_size || s->filesz > file_size - s->offset)
		return error_set(err, -ENOEXEC, "segment %u: data lies past the end of the file", idx);
	uint64_t start = s->paddr, end = s->paddr + s->memsz;
	if (end < start)
		return error_set(err, -ERANGE, "segment %u: address range wraps around", idx);
	if (overlaps(start, end, MMIO_HOLE_START, MMIO_HOLE_END))
		return error_set(err, -ERANGE,
				 "segment %u at 0x%" PRIx64 "-0x%" PRIx64 " lies over the MMIO hole "
				 "(0x%llx-0x%llx)", idx, start, end, MMIO_HOLE_START, MMIO_HOLE_END);
	if (overlaps(start, end, resv_start, resv_end))
		return error_set(err, -ERANGE,
				 "segment %u at 0x%" PRIx64 "-0x%" PRIx64 " overlaps msivm's boot data "
				 "(0x%" PRIx64 "-0x%" PRIx64 ")", idx, start, end, resv_start, resv_end);
	if (overlaps(start, end, ACPI_START, ACPI_END))
		return error_set(err, -ERANGE,
				 "segment %u at 0x%" PRIx64 "-0x%" PRIx64 " overlaps msivm's ACPI tables "
				 "(0x%llx-0x%llx)", idx, start, end, ACPI_START, ACPI_END);
	if (overlaps(start, end, LOW_RAM_END, HIGH_MEM_START))
		return error_set(err, -ERANGE,
				 "segment %u at 0x%" PRIx64 "-0x%" PRIx64 " overlaps the legacy "
				 "VGA/BIOS area (0x%llx-0x%llx), which is not RAM", idx, start, end,
				 LOW_RAM_END, HIGH_MEM_START);
	if (!gm_contains(gm, start, s->memsz))
		return error_set(err, -ERANGE,
				 "segment %u at 0x%" PRIx64 "-0x%" PRIx64 " is outside guest RAM "
				 "(%" PRIu64 " MiB)", idx, start, end, gm->size >> 20);
	return 0;
}
