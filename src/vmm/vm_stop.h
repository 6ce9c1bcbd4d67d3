/* VM stop: why the VM ends (the first reason wins) and host events, handed to the event loop from any thread. */
#ifndef MSIVM_VMM_VM_STOP_H
#define MSIVM_VMM_VM_STOP_H

#include <stdbool.h>

#include "vmm/vm_state.h"

/* Hands host events (VM_HOST_EV_*) to the I/O thread, which re-reads what
 * changed on the host (console sizes, disk sizes). Safe from any thread. */
void vm_post_host_event(struct vm *vm, unsigned ev);

/* Records why the VM ends (first caller wins) and wakes the event loop,
 * which stops the vCPUs. Safe from any thread. */
void vm_request_stop(struct vm *vm, enum vm_end why, int status);

/* The same with a static text that says what asked for it (kept in
 * vm->end_reason when this request wins). */
void vm_request_stop_reason(struct vm *vm, enum vm_end why, int status, const char *reason);

/* The operator asks the VM to end with `status` (SIGINT/SIGTERM, the API): recorded in
 * cfg.operator_stop for the caller's reboot loop, then as vm_request_stop_reason with
 * VM_END_SIGNAL. `hard` false only records it (a power button press that will end
 * the VM if the guest powers off or resets). Safe from any thread. */
void vm_operator_stop(struct vm *vm, int status, bool hard, const char *reason);

#endif
