/* guest/src/pci.h - PCI type-1 config access (0xCF8/0xCFC), bus 0 enumeration, lspci-style listing. */
#ifndef PROBE_PCI_H
#define PROBE_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_MAX_DEVS    32
#define PCI_NUM_BARS    6

#define PCI_COMMAND         0x04
#define PCI_CMD_IO          0x0001
#define PCI_CMD_MEM         0x0002
#define PCI_CMD_MASTER      0x0004
#define PCI_CMD_INTX_DIS    0x0400

#define PCI_CAP_PM      0x01
#define PCI_CAP_MSI     0x05
#define PCI_CAP_VENDOR  0x09
#define PCI_CAP_PCIE    0x10
#define PCI_CAP_MSIX    0x11

enum pci_bar_type {
    PCI_BAR_NONE,       /* not implemented (or upper half of a 64-bit BAR) */
    PCI_BAR_IO,
    PCI_BAR_MEM32,
    PCI_BAR_MEM64,
};

struct pci_bar {
    uint64_t addr;
    uint64_t size;
    uint8_t type;       /* enum pci_bar_type */
    bool prefetch;
};

struct pci_dev {
    uint8_t bus, dev, fn;
    uint16_t vendor, device;
    uint16_t subsys_vendor, subsys_id;  /* header type 0 only */
    uint32_t class_code;                /* base << 16 | sub << 8 | prog-if */
    uint8_t header_type;                /* without the multifunction bit */
    uint8_t irq_line, irq_pin;          /* config 0x3C / 0x3D */
    struct pci_bar bar[PCI_NUM_BARS];
    uint8_t cap_msi, cap_msix;          /* config offsets, 0 if absent */
    bool usable;                        /* every implemented BAR assigned, below 4 GiB */
    const char *skip_reason;            /* why not usable, or NULL */
    bool claimed;                       /* taken by a flood= (main.c drives only unclaimed ones) */
    char name[8];                       /* "bb:dd.f" */
};

/* Raw config accesses (type 1 mechanism, 2 port I/Os each). `off` must be
 * naturally aligned for the access size. */
uint32_t pci_cfg_read32(const struct pci_dev *d, uint8_t off);
uint16_t pci_cfg_read16(const struct pci_dev *d, uint8_t off);
uint8_t pci_cfg_read8(const struct pci_dev *d, uint8_t off);
void pci_cfg_write32(const struct pci_dev *d, uint8_t off, uint32_t v);
void pci_cfg_write16(const struct pci_dev *d, uint8_t off, uint16_t v);

/*
 * Scan bus 0 (32 slots, function 0, functions 1-7 of multifunction devices),
 * print each function like lspci -v and record up to PCI_MAX_DEVS of them:
 *   pci 00:03.0 1af4:1044 class 00ff00
 *     bar0 mem64 0x00000000c0000000 size 0x4000 [pref]
 *     cap 0x40 msix table=bar0+0x2000 pba=bar0+0x3000 size 3
 * BARs are sized with all-ones writes while I/O and memory decode are off,
 * then the original BAR and command values are restored; nothing is
 * assigned. After its listing, a function with an implemented BAR at address
 * 0 prints "probe: bb:dd.f bar unassigned, skipped", one with a memory BAR
 * reaching above 4 GiB (not mapped by the probe) "probe: bb:dd.f bar above
 * 4 GiB, skipped"; both get usable = false and are not driven.
 * Returns the number of functions recorded.
 */
int pci_enumerate(void);

/* The i-th recorded function (0 <= i < pci_enumerate()'s result). */
struct pci_dev *pci_get(int i);

/* Config offset of the first capability with `id` after offset `after`
 * (0: from the start of the list), or 0 if there is none. */
uint8_t pci_find_cap(const struct pci_dev *d, uint8_t id, uint8_t after);

/* Set and clear bits in the command register (read-modify-write). */
void pci_command(const struct pci_dev *d, uint16_t set, uint16_t clear);

#endif
