/* Operator controls of a running VM: pause and resume the vCPUs, press the power button. */
#ifndef MSIVM_VMM_VM_CONTROL_H
#define MSIVM_VMM_VM_CONTROL_H

#include <stdbool.h>

#include "util/error.h"

struct vm;
struct vcpu;

/* Creates the pause lock and condition of `vm` (vm_create calls it). Returns 0 or -errno. */
int vm_control_init(struct vm *vm);

/* Releases what vm_control_init made. Safe when it never ran. */
void vm_control_destroy(struct vm *vm);

/* Stops every vCPU outside KVM_RUN and returns once all are parked (the
 * guest makes no progress; devices still complete requests already
 * posted). Returns 0, -EALREADY when paused already, -ESHUTDOWN when the VM
 * is ending, -ETIMEDOUT (message in *err) when a vCPU did not park within
 * 5 s (the VM stays marked paused and the vCPU parks when it can). Safe
 * from any thread but a vCPU's. */
int vm_pause(struct vm *vm, struct error *err);

/* Lets parked vCPUs run again. Returns 0, or -EALREADY when not paused. */
int vm_resume(struct vm *vm);

/* True while the VM is paused. */
bool vm_is_paused(struct vm *vm);

/* Presses the guest's ACPI power button if the guest listens for it.
 * Returns 1 pressed, 0 the guest does not listen (nothing done), -errno. */
int vm_power_button(struct vm *vm);

#endif
