/* CPUID: what the guest sees, decided in one filter over KVM's supported set. */
#ifndef MSIVM_ARCH_X86_CPUID_H
#define MSIVM_ARCH_X86_CPUID_H

#include <linux/kvm.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

/* Returns KVM's supported CPUID table (malloc'd; free() it) in *out, with the TSC-deadline
 * timer (leaf 1 ECX bit 24) where KVM has KVM_CAP_TSC_DEADLINE_TIMER: KVM emulates it in its
 * LAPIC (msivm's is always in the kernel) but does not list it there before Linux 6.x's later
 * releases; QEMU and Firecracker add it the same way. Returns 0 or -errno with a message. */
int cpuid_get_supported(int kvm_fd, struct kvm_cpuid2 **out, struct error *err);

/* Sets leaf 1's TSC-deadline bit in `c` when `have` (KVM_CAP_TSC_DEADLINE_TIMER). */
void cpuid_add_tsc_deadline(struct kvm_cpuid2 *c, bool have);

/* A set of features to hide from the guest: bit i stands for the i-th
 * name cpuid_feature_name() lists. 0 hides nothing. */
typedef uint64_t cpuid_hide_t;

/* The name of hideable feature `i` ("cmpxchg16b", "xsave", ...), or NULL
 * past the last one. */
const char *cpuid_feature_name(unsigned i);

/* Parses a comma-separated list of feature names (case-insensitive; empty
 * items ignored, so "" hides nothing) into *hide. Returns 0, or -EINVAL with
 * a message naming the unknown feature and listing the known ones. */
/* The hypervisor timing leaf (as VMware, ACRN and others define it): EAX =
 * TSC frequency in kHz, EBX = LAPIC timer (bus) frequency in kHz. KVM's
 * LAPIC timer runs at 1 GHz. */
#define CPUID_TIMING_LEAF  0x40000010u
#define CPUID_APIC_BUS_KHZ 1000000u

/* Appends the timing leaf with `tsc_khz` to `c` (which must have room for
 * one more entry) and raises the hypervisor leaf range to include it, when
 * KVM's signature leaf 0x40000000 is present and KVM did not provide one.
 * A zero frequency adds nothing. Lets a guest time without calibrating. */
void cpuid_add_timing_leaf(struct kvm_cpuid2 *c, uint32_t tsc_khz);

int cpuid_hide_parse(const char *list, cpuid_hide_t *hide, struct error *err);

/* The one place that decides the guest's CPUID: for vCPU `apic_id` of
 * `ncpus`, sets the APIC IDs and logical CPU count (leaves 1, 0xB, 0x1F)
 * and the hypervisor bit, and clears the bits of every feature in `hide`
 * (xsave also empties leaf 0xD and hides what needs XSAVE state: osxsave,
 * avx, fma, f16c, avx2, avx512f). Edits `c` in place. */
void cpuid_filter(struct kvm_cpuid2 *c, uint32_t apic_id, uint32_t ncpus, cpuid_hide_t hide);

/* Copies `supported`, filters it for this vCPU (hiding `hide`) and sets it
 * with KVM_SET_CPUID2. Returns 0 or -errno with a message. */
int cpuid_apply_hide(int vcpu_fd, const struct kvm_cpuid2 *supported, uint32_t apic_id,
		     uint32_t ncpus, cpuid_hide_t hide, struct error *err);

/* cpuid_apply_hide hiding nothing. */
int cpuid_apply(int vcpu_fd, const struct kvm_cpuid2 *supported, uint32_t apic_id,
		uint32_t ncpus, struct error *err);

#endif
