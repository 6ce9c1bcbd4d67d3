/* A vCPU's whole architectural state (registers, FPU/XSAVE, MSRs, LAPIC, events) <-> a snapshot's JSON. */
#ifndef MSIVM_VMM_VCPU_STATE_H
#define MSIVM_VMM_VCPU_STATE_H

#include <jansson.h>

#include "util/error.h"

/* The state of the stopped vCPU `vcpu_fd` (its thread out of KVM_RUN) as a JSON object: each
 * KVM structure (kvm_regs, kvm_sregs, kvm_xsave, kvm_xcrs, kvm_lapic_state, kvm_vcpu_events,
 * kvm_debugregs) as hex of its bytes, mp_state as a number, and every MSR of KVM's index list
 * (`kvm_fd`) the vCPU lets be read as [index, value] pairs. The XSAVE area has the size
 * KVM_CAP_XSAVE2 gives on `kvm_fd` where that is more than 4 KiB (KVM_GET_XSAVE2). Returns NULL
 * with a message. */
json_t *vcpu_state_save(int kvm_fd, int vcpu_fd, struct error *err);

/* Puts a state vcpu_state_save wrote into the new vCPU `vcpu_fd` (before it first runs), in
 * the order KVM needs (registers, XSAVE, XCRs, special registers, MSRs, MP state, LAPIC, the
 * TSC deadline again, events, debug registers). Every field must be there with its exact
 * size, the XSAVE area with the size this host's KVM (`kvm_fd`) takes. Returns 0, or -errno
 * with a message naming the part KVM or the file refused. */
int vcpu_state_load(int kvm_fd, int vcpu_fd, const json_t *state, struct error *err);

#endif
