/* --testdev: the devices kvm-unit-tests needs (fw_cfg, pc-testdev) on a VM's buses; absent without the option. */
#ifndef MSIVM_VMM_VM_TESTDEV_H
#define MSIVM_VMM_VM_TESTDEV_H

#include "devices/fw_cfg.h"
#include "devices/pc_testdev.h"
#include "util/error.h"

struct vm;

struct vm_testdev {
	struct fw_cfg fw;
	struct pc_testdev pc;
	bool fw_ready, pc_ready;
};

/* With vm->cfg.testdev: builds fw_cfg (RAM size, vCPU count) and pc-testdev (IRQ lines through
 * KVM_IRQ_LINE) and registers them on vm->pio and vm->mmio (setup_devices gave debug-exit QEMU's
 * status convention). Without it: does nothing. Returns 0, or -errno with a message (the caller's
 * vm_destroy releases what was built). */
int vm_testdev_create(struct vm *vm, struct error *err);

/* Releases what vm_testdev_create built (the buses are destroyed by the caller). */
void vm_testdev_destroy(struct vm *vm);

#endif
