/* Guest crash dumps: an ELF core of guest RAM with every vCPU's registers, and msivm's own view of its devices as JSON. */
#ifndef MSIVM_VMM_VM_DUMP_H
#define MSIVM_VMM_VM_DUMP_H

#include <fcntl.h>

#include "util/error.h"

struct vm;

/* How vm_dump_write opens its files (the API thread's seccomp filter allows exactly these). */
#define VM_DUMP_OPEN_FLAGS (O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC)

/*
 * Writes STEM.core and STEM.json in the directory `dirfd` (opened by the caller, before any
 * jail) for a VM whose vCPUs have stopped (after vm_run, before vm_destroy):
 * - STEM.core: an ELF64 core (ET_CORE, EM_X86_64): one NT_PRSTATUS note per vCPU (the general
 *   registers in the kernel's user_regs_struct order, pr_pid = vCPU number + 1), an "MSIVM"
 *   note per vCPU with CR0, CR2, CR3, CR4 and EFER, a "QEMU" note per vCPU in the format of
 *   QEMU's dump-guest-memory (version 1: registers, segments, GDT/IDT, CRs, KERNEL_GS_BASE;
 *   what the `crash` utility needs for a KASLR kernel), and one PT_LOAD per RAM region with
 *   p_paddr = p_vaddr = its guest-physical address (identity, as the probe maps it); pages of
 *   zeroes are left as holes, so the file is as sparse as the guest's RAM.
 * - STEM.json: for each device its transport (status, features, ISR, INTx level, MSI-X
 *   enable, mask, table and PBA), each queue (size, enable, ring addresses, vector, indices)
 *   and the --stats-json counters.
 * Returns 0 or -errno with a message naming the file.
 */
int vm_dump_write(struct vm *vm, int dirfd, const char *stem, struct error *err);

#endif
