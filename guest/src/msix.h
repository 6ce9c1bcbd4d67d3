/* guest/src/msix.h - MSI-X: locate table/PBA, program entries to the BSP's LAPIC, enable. */
#ifndef PROBE_MSIX_H
#define PROBE_MSIX_H

#include <stdbool.h>
#include <stdint.h>

#include "pci.h"

/* Number of MSI-X table entries of d, or 0 if d has no MSI-X capability or
 * its table/PBA BAR is not an assigned memory BAR. */
unsigned int msix_table_size(const struct pci_dev *d);

/*
 * Program table entries 0..n-1 with address 0xFEE00000 (destination APIC
 * ID 0, physical, fixed), data = vectors[i] (edge), unmask them, disable
 * INTx in the command register, set MSI-X Enable and clear Function Mask
 * (entries are written with the function masked). Returns 0, or -1 if
 * n > msix_table_size(d).
 */
int msix_enable(const struct pci_dev *d, unsigned int n, const uint8_t *vectors);

/* Set or clear the mask bit of table entry `entry`. */
void msix_mask_entry(const struct pci_dev *d, unsigned int entry, bool masked);

/* True while table entry `entry`'s pending bit (PBA) is set. */
bool msix_pending(const struct pci_dev *d, unsigned int entry);

/* Mask all entries in use and clear MSI-X Enable. */
void msix_disable(const struct pci_dev *d, unsigned int n);

#endif
