/* VM: creating one (KVM, irqchip, RAM, devices, vCPUs), running it to its end, releasing it; the state is vm_state.h's. */
#ifndef MSIVM_VMM_VM_H
#define MSIVM_VMM_VM_H

#include "util/error.h"
#include "vmm/vm_state.h"
#include "vmm/vm_stop.h"

/* Ignores SIGPIPE, blocks SIGINT/SIGTERM in the calling thread (so every thread created after
 * inherits the mask and the VM's signalfd receives them) and installs the
 * no-op SIGUSR1 handler used to kick vCPUs out of KVM_RUN. Call once, in
 * main, before vm_create. Returns 0 or -errno. */
int vm_signals_init(void);

/* Creates the VM: opens KVM, checks capabilities, creates the irqchip before
 * the memory slots, maps RAM, creates the vCPUs and the legacy devices
 * (COM1, debug-exit). Returns 0 or -errno with a message in *err; on
 * failure everything created so far is released. */
int vm_create(struct vm *vm, const struct vm_config *cfg, struct error *err);

/* Releases everything vm_create made. Safe on a partly created VM. */
void vm_destroy(struct vm *vm);

/* Starts the control thread (signals), the I/O thread (event loop) and
 * every vCPU thread, each with its seccomp filter, and waits until the VM
 * ends; on return every thread it started has finished (vCPU fds stay open
 * for statistics). Returns 0 (see vm->end and vm->exit_status) or -errno. */
int vm_run(struct vm *vm, struct error *err);

#endif
