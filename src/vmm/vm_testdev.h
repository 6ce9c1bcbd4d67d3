/* --testdev: the devices kvm-unit-tests needs (fw_cfg, pc-testdev, pci-testdev) on a VM's buses; absent without the option. */
#ifndef MSIVM_VMM_VM_TESTDEV_H
#define MSIVM_VMM_VM_TESTDEV_H

#include "devices/fw_cfg.h"
#include "devices/pc_testdev.h"
#include "devices/pci_testdev.h"
#include "devices/pm_timer.h"
#include "util/error.h"

struct vm;

struct vm_testdev {
	struct fw_cfg fw;
	struct pc_testdev pc;
	struct pci_testdev pci;
	struct pm_timer pmt;
	bool fw_ready, pc_ready, pci_ready, pmt_ready;
};

/* With vm->cfg.testdev: builds fw_cfg (RAM size, vCPU count), pc-testdev (IRQ lines through
 * KVM_IRQ_LINE) and the ACPI PM timer (boot.c puts its port in the FADT) and registers them on vm->pio and vm->mmio (setup_devices gave debug-exit QEMU's
 * status convention). Without it: does nothing. Returns 0, or -errno with a message (the caller's
 * vm_destroy releases what was built). */
int vm_testdev_create(struct vm *vm, struct error *err);

/* With vm->cfg.testdev, after pci_devices_create: builds pci-testdev (1b36:0005) and puts it on
 * bus 0 with its BARs placed and decoding, as firmware leaves a device (kvm-unit-tests does not
 * enable decode itself). Without it: does nothing. Returns 0, or -errno with a message. */
int vm_testdev_attach_pci(struct vm *vm, struct error *err);

/* Releases what vm_testdev_create built (the buses are destroyed by the caller). */
void vm_testdev_destroy(struct vm *vm);

#endif
