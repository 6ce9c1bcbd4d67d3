/* INTx: a function's level-triggered pin as a KVM irqfd with a resample eventfd (no exit to raise it, one at the EOI). */
#ifndef MSIVM_PCI_INTX_H
#define MSIVM_PCI_INTX_H

#include <stdint.h>

struct pci_intx {
	uint32_t gsi;
	int fd;             /* written: the line goes up (KVM's irqfd) */
	int resample_fd;    /* KVM signals it at the guest's EOI, after lowering the line */
	int vm_fd;          /* -1: tests, no irqfd registered */
};

/* Marks x unset (both fds -1), so pci_intx_close is safe before pci_intx_open. */
void pci_intx_clear(struct pci_intx *x);

/* Creates the two eventfds and registers them with KVM as a resampling irqfd on `gsi`
 * (vm_fd < 0: no registration). Returns 0 or -errno; on error x holds nothing open. */
int pci_intx_open(struct pci_intx *x, int vm_fd, uint32_t gsi);

/* Closes the eventfds (KVM drops the irqfd when its eventfd goes). Safe twice. */
void pci_intx_close(struct pci_intx *x);

#endif
