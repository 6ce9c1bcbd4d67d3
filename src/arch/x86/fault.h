/* Fault reports: where a vCPU stopped (RIP, mode, instruction bytes) for a fatal-exit log line. */
#ifndef MSIVM_ARCH_X86_FAULT_H
#define MSIVM_ARCH_X86_FAULT_H

#include <stddef.h>

#include "core/guest_mem.h"

/* Writes "rip 0x... (cs.l=1 cpl=0) bytes: 0f c7 ..." for vCPU `vcpu_fd` into
 * buf, translating RIP through the guest's page tables (KVM_TRANSLATE).
 * Never fails: what cannot be read is said so in the text, and a vCPU in
 * the power-on state (KVM on AMD resets one that shut down) is named so. */
void x86_describe_fault(int vcpu_fd, const struct guest_mem *gm, char *buf, size_t len);

#endif
