/* guest/src/msi.h - plain MSI: one message to the BSP's LAPIC. */
#ifndef PROBE_MSI_H
#define PROBE_MSI_H

#include <stdbool.h>
#include <stdint.h>

#include "pci.h"

/*
 * Program d's MSI capability: address 0xFEE00000 (64-bit form if the device
 * supports it, upper half 0), data = vector (fixed, edge), one message
 * (MME = 0), unmask vector 0 if per-vector masking exists, disable INTx in
 * the command register, set MSI Enable. Returns 0, or -1 without MSI cap.
 */
int msi_enable(const struct pci_dev *d, uint8_t vector);

/* Per-vector masking of message 0: set or clear its mask bit. Returns 0, or -1 when the
 * capability has no per-vector masking. */
int msi_mask(const struct pci_dev *d, bool masked);

/* True while message 0's pending bit is set (false without per-vector masking). */
bool msi_pending(const struct pci_dev *d);

/* Clear MSI Enable (no-op without MSI cap). */
void msi_disable(const struct pci_dev *d);

#endif
