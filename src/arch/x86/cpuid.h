/* CPUID: what the guest sees, decided in one filter over KVM's supported set. */
#ifndef MSIVM_ARCH_X86_CPUID_H
#define MSIVM_ARCH_X86_CPUID_H

#include <linux/kvm.h>
#include <stdint.h>

#include "util/error.h"

/* Returns KVM's supported CPUID table (malloc'd; free() it) in *out.
 * Returns 0 or -errno with a message. */
int cpuid_get_supported(int kvm_fd, struct kvm_cpuid2 **out, struct error *err);

/* The one place that decides the guest's CPUID: for vCPU `apic_id` of
 * `ncpus`, sets the APIC IDs and logical CPU count (leaves 1, 0xB, 0x1F)
 * and the hypervisor bit. Edits `c` in place. */
void cpuid_filter(struct kvm_cpuid2 *c, uint32_t apic_id, uint32_t ncpus);

/* Copies `supported`, filters it for this vCPU and sets it with
 * KVM_SET_CPUID2. Returns 0 or -errno with a message. */
int cpuid_apply(int vcpu_fd, const struct kvm_cpuid2 *supported, uint32_t apic_id,
		uint32_t ncpus, struct error *err);

#endif
