/* guest/src/msix.c - MSI-X capability and table programming. */
#include "msix.h"
#include "mmio.h"

#define MSIX_CTRL           2
#define MSIX_TABLE          4
#define MSIX_PBA            8
#define MSIX_CTRL_SIZE      0x07ff
#define MSIX_CTRL_FMASK     0x4000
#define MSIX_CTRL_ENABLE    0x8000

#define ENTRY_SIZE          16
#define ENTRY_ADDR_LO       0
#define ENTRY_ADDR_HI       4
#define ENTRY_DATA          8
#define ENTRY_CTRL          12
#define ENTRY_CTRL_MASKED   1

#define MSI_ADDR_BASE       0xfee00000u     /* dest APIC ID 0 in bits 19:12 */

/* Address of a BIR/offset register's structure, or 0 if its BAR is unusable. */
static uintptr_t bir_addr(const struct pci_dev *d, uint32_t reg)
{
    const struct pci_bar *b;

    if ((reg & 7) >= PCI_NUM_BARS || !d->usable)
        return 0;
    b = &d->bar[reg & 7];
    if ((b->type != PCI_BAR_MEM32 && b->type != PCI_BAR_MEM64) || b->addr == 0)
        return 0;
    return (uintptr_t)(b->addr + (reg & ~7u));
}

static uintptr_t table_addr(const struct pci_dev *d)
{
    return bir_addr(d, pci_cfg_read32(d, d->cap_msix + MSIX_TABLE));
}

unsigned int msix_table_size(const struct pci_dev *d)
{
    if (!d->cap_msix || !table_addr(d) ||
        !bir_addr(d, pci_cfg_read32(d, d->cap_msix + MSIX_PBA)))
        return 0;
    return (pci_cfg_read16(d, d->cap_msix + MSIX_CTRL) & MSIX_CTRL_SIZE) + 1u;
}

int msix_enable(const struct pci_dev *d, unsigned int n, const uint8_t *vectors)
{
    uintptr_t t = table_addr(d);
    uint16_t ctrl;
    unsigned int i;

    if (n > msix_table_size(d))
        return -1;
    ctrl = pci_cfg_read16(d, d->cap_msix + MSIX_CTRL);
    pci_command(d, PCI_CMD_INTX_DIS, 0);
    pci_cfg_write16(d, d->cap_msix + MSIX_CTRL, ctrl | MSIX_CTRL_ENABLE | MSIX_CTRL_FMASK);
    for (i = 0; i < n; i++, t += ENTRY_SIZE) {
        mmio_write32(t + ENTRY_CTRL, ENTRY_CTRL_MASKED);
        mmio_write32(t + ENTRY_ADDR_LO, MSI_ADDR_BASE);
        mmio_write32(t + ENTRY_ADDR_HI, 0);
        mmio_write32(t + ENTRY_DATA, vectors[i]);   /* fixed, edge */
        mmio_write32(t + ENTRY_CTRL, 0);
    }
    pci_cfg_write16(d, d->cap_msix + MSIX_CTRL,
                    (ctrl | MSIX_CTRL_ENABLE) & ~MSIX_CTRL_FMASK);
    return 0;
}

void msix_mask_entry(const struct pci_dev *d, unsigned int entry, bool masked)
{
    uintptr_t t = table_addr(d);

    if (t)
        mmio_write32(t + entry * ENTRY_SIZE + ENTRY_CTRL, masked ? ENTRY_CTRL_MASKED : 0);
}

bool msix_pending(const struct pci_dev *d, unsigned int entry)
{
    uintptr_t p = bir_addr(d, pci_cfg_read32(d, d->cap_msix + MSIX_PBA));

    return p && (mmio_read32(p + (entry / 32) * 4) >> (entry % 32)) & 1;
}

void msix_disable(const struct pci_dev *d, unsigned int n)
{
    uintptr_t t = table_addr(d);
    uint16_t ctrl = pci_cfg_read16(d, d->cap_msix + MSIX_CTRL);
    unsigned int i;

    for (i = 0; t && i < n; i++, t += ENTRY_SIZE)
        mmio_write32(t + ENTRY_CTRL, ENTRY_CTRL_MASKED);
    pci_cfg_write16(d, d->cap_msix + MSIX_CTRL, ctrl & ~MSIX_CTRL_ENABLE);
}
