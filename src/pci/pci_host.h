/* PCI host bridge: bus 0, config access through ports 0xCF8/0xCFC and an ECAM window. */
#ifndef MSIVM_PCI_PCI_HOST_H
#define MSIVM_PCI_PCI_HOST_H

#include <pthread.h>
#include <stdint.h>

#include "bus/bus.h"
#include "pci/pci_func.h"

#define PCI_CONFIG_ADDR_PORT 0xcf8
#define PCI_CONFIG_DATA_PORT 0xcfc
#define PCI_MAX_DEVFN 256

struct pci_host {
	pthread_mutex_t lock;         /* guards config_addr and the slot table */
	uint32_t config_addr;         /* last value written to 0xCF8 */
	struct pci_func *funcs[PCI_MAX_DEVFN];
	struct pci_func bridge;       /* 00:00.0 */
	uint64_t ecam_base;
	uint8_t next_slot;
};

/* Creates bus 0 with the host bridge at 00:00.0 and registers the CF8/CFC
 * ports on `pio` and an ECAM window for bus 0 (1 MiB) at `ecam_base` on
 * `mmio`. Returns 0 or -errno. */
int pci_host_init(struct pci_host *h, struct bus *pio, struct bus *mmio, uint64_t ecam_base,
		  struct pci_window window);
void pci_host_destroy(struct pci_host *h, struct bus *pio, struct bus *mmio);

/* Puts `f` in the next free slot (function 0) and returns the slot number,
 * or -ENOSPC. The caller keeps ownership of `f`, which must outlive the host. */
int pci_host_add(struct pci_host *h, struct pci_func *f);

/* The INTx GSI for pin A of `slot`: IOAPIC inputs 16..23, swizzled by slot. */
uint32_t pci_host_intx_gsi(uint8_t slot);

#endif
