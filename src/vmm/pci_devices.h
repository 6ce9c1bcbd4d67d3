/* PCI devices of a VM: the host bridge, GSI routes and every virtio device the options asked for. */
#ifndef MSIVM_VMM_PCI_DEVICES_H
#define MSIVM_VMM_PCI_DEVICES_H

#include "pci/pci_func.h"
#include "util/error.h"

struct vm;

/* Creates the PCI host bridge and each device in vm->cfg.devices, gives it
 * a slot, INTx GSI and firmware-style BAR addresses (decode left off).
 * Returns 0 or -errno with a message. */
int pci_devices_create(struct vm *vm, struct error *err);

/* Puts a function built elsewhere (--testdev's pci-testdev) on bus 0 after the devices of
 * pci_devices_create: a slot, its BARs placed (decode left off). `f` must outlive the host.
 * Returns 0 or -errno with a message. */
int pci_devices_add_func(struct vm *vm, struct pci_func *f, struct error *err);

/* Releases what pci_devices_create made; safe on a partial setup. */
void pci_devices_destroy(struct vm *vm);

#endif
