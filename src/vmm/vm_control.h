/* Operator controls of a running VM: pause and resume the vCPUs, press the power button. */
#ifndef MSIVM_VMM_VM_CONTROL_H
#define MSIVM_VMM_VM_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

struct vm;
struct vcpu;
struct rate_limit_opts;

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

/* Snapshots, with the vCPUs parked (vm_pause): asks the I/O thread to quiesce every device
 * (requests in flight complete, held notifications go out) and to wait, and returns once it
 * does: no device then touches guest memory or the rings until vm_io_release. Returns 0,
 * -ESHUTDOWN when the VM is ending, -ETIMEDOUT (message in *err) after 30 s. Any thread but
 * the I/O thread and a vCPU's. */
int vm_io_park(struct vm *vm, struct error *err);

/* Lets a parked I/O thread go on. */
void vm_io_release(struct vm *vm);

/* The I/O thread's handler of vm->park_fd (vm.c registers it): quiesces and parks. */
void vm_io_park_handler(void *opaque, uint32_t events);

/* Opens `path` in place of the host file of device `dev` (its index in vm->devs; a disk's
 * image: Firecracker's PATCH /drives) with the vCPUs (paused for it unless paused already) and
 * the I/O thread parked, so that requests in flight finish on the old file; the device tells
 * the guest (a disk: a configuration-change interrupt with its new capacity). Returns 0,
 * -EOPNOTSUPP when the device has no such file, -ESHUTDOWN when the VM is ending, or -errno
 * with a message (the old file is then kept). Any thread but a vCPU's and the I/O thread. */
int vm_device_replace(struct vm *vm, uint32_t dev, const char *path, struct error *err);

/* Changes the rate limits of device `dev` (its index in vm->devs) while it runs: `limit` (a
 * NIC: what it transmits) and `rx_limit` (a NIC: what it receives), NULL for unchanged. The
 * device takes them under its own lock; a request it holds back under the old limits is
 * admitted under the new ones. vm->cfg records them. Returns 0, -EOPNOTSUPP when the device
 * has no such limits, or -errno with a message. Any thread but a vCPU's and the I/O thread;
 * the caller serialises it with vm_device_replace and snapshots. */
int vm_device_set_limit(struct vm *vm, uint32_t dev, const struct rate_limit_opts *limit,
			const struct rate_limit_opts *rx_limit, struct error *err);

/* Presses the guest's ACPI power button if the guest listens for it.
 * Returns 1 pressed, 0 the guest does not listen (nothing done), -errno. */
int vm_power_button(struct vm *vm);

#endif
