/* Kernel segment checks: where in guest RAM an image's loadable segment may go. */
#ifndef MSIVM_ARCH_X86_KERNEL_SEG_H
#define MSIVM_ARCH_X86_KERNEL_SEG_H

#include <stddef.h>
#include <stdint.h>

#include "core/guest_mem.h"
#include "util/error.h"

/* One loadable segment of a kernel file of `file_size` bytes: `filesz` bytes
 * at file offset `offset` go to guest address `paddr`, zero-filled up to
 * `memsz`. */
struct kernel_seg {
	unsigned idx;
	uint64_t offset, filesz, paddr, memsz;
};

/* Checks that segment s is consistent (filesz <= memsz, data inside the file,
 * no wrap) and lies in guest RAM outside the MMIO hole, the ACPI tables, the
 * legacy VGA/BIOS area and the boot data range [resv_start, resv_end) (the
 * entry protocol's own; resv_start == resv_end: none). Returns 0, or
 * -ENOEXEC/-ERANGE with a message naming segment s->idx. */
int kernel_seg_check(const struct guest_mem *gm, size_t file_size, const struct kernel_seg *s,
		     uint64_t resv_start, uint64_t resv_end, struct error *err);

#endif
