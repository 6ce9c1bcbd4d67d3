/* Boot registers: the vCPU state a kernel entry protocol asks for. */
#ifndef MSIVM_ARCH_X86_BOOT_REGS_H
#define MSIVM_ARCH_X86_BOOT_REGS_H

#include <stdint.h>

#include "util/error.h"

/* Puts the boot vCPU in the state the PVH ABI defines: 32-bit protected mode,
 * paging off, flat 4 GiB code and data segments, a busy 32-bit TSS,
 * interrupts off, %ebx = `start_info`, %eip = `entry`. Returns 0 or -errno. */
int x86_set_pvh_entry(int vcpu_fd, uint32_t entry, uint32_t start_info, struct error *err);

/* Puts the boot vCPU in the state Multiboot v1 defines: as PVH (32-bit
 * protected mode, paging off, flat segments, interrupts off) with
 * %eax = 0x2BADB002 and %ebx = `info` (struct multiboot_info), %eip = `entry`.
 * Returns 0 or -errno. */
int x86_set_multiboot_entry(int vcpu_fd, uint32_t entry, uint32_t info, struct error *err);

/* Puts the boot vCPU in 64-bit long mode as the Linux 64-bit boot protocol
 * asks: paging on with the identity page tables at BOOT_PML4 (written by
 * longmode_write_tables), the boot GDT at BOOT_GDT loaded, CS = 0x10 (64-bit
 * code), DS/ES/SS/FS/GS = 0x18 (flat data), interrupts off, %rsi = `rsi`
 * (the zero page), %rip = `entry`. Returns 0 or -errno. */
int x86_set_long_mode_entry(int vcpu_fd, uint64_t entry, uint64_t rsi, struct error *err);

#endif
