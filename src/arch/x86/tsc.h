/* TSC: how the guest's time stamp counter relates to the host's, for latency stamps. */
#ifndef MSIVM_ARCH_X86_TSC_H
#define MSIVM_ARCH_X86_TSC_H

#include <stdint.h>

/* Guest TSC minus host TSC for the vCPU behind `vcpu_fd`: KVM's own offset
 * (KVM_VCPU_TSC_OFFSET) when available, otherwise estimated by reading the
 * guest's IA32_TSC between two host reads. Assumes no TSC scaling. */
int64_t x86_tsc_offset(int vcpu_fd);

#endif
