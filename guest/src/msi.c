/* guest/src/msi.c - MSI capability programming (single message). */
#include "msi.h"

#define MSI_CTRL            2
#define MSI_ADDR_LO         4
#define MSI_ADDR_HI         8       /* 64-bit capable only */
#define MSI_CTRL_ENABLE     0x0001
#define MSI_CTRL_MME        0x0070
#define MSI_CTRL_64BIT      0x0080
#define MSI_CTRL_MASKABLE   0x0100

#define MSI_ADDR_BASE       0xfee00000u     /* dest APIC ID 0 in bits 19:12 */

int msi_enable(const struct pci_dev *d, uint8_t vector)
{
    uint8_t c = d->cap_msi;
    uint16_t ctrl;
    uint8_t data_off;

    if (!c)
        return -1;
    ctrl = pci_cfg_read16(d, c + MSI_CTRL);
    pci_cfg_write16(d, c + MSI_CTRL, ctrl & ~MSI_CTRL_ENABLE);
    pci_cfg_write32(d, c + MSI_ADDR_LO, MSI_ADDR_BASE);
    if (ctrl & MSI_CTRL_64BIT) {
        pci_cfg_write32(d, c + MSI_ADDR_HI, 0);
        data_off = 0x0c;
    } else {
        data_off = 0x08;
    }
    pci_cfg_write16(d, c + data_off, vector);
    if (ctrl & MSI_CTRL_MASKABLE)   /* mask bits follow the data word */
        pci_cfg_write32(d, c + data_off + 4, 0);
    pci_command(d, PCI_CMD_INTX_DIS, 0);
    pci_cfg_write16(d, c + MSI_CTRL, (ctrl & ~MSI_CTRL_MME) | MSI_CTRL_ENABLE);
    return 0;
}

/* Offset of the mask bits in the capability (the pending bits follow), or 0 without them. */
static uint8_t mask_off(const struct pci_dev *d)
{
    uint16_t ctrl;

    if (!d->cap_msi)
        return 0;
    ctrl = pci_cfg_read16(d, d->cap_msi + MSI_CTRL);
    if (!(ctrl & MSI_CTRL_MASKABLE))
        return 0;
    return ctrl & MSI_CTRL_64BIT ? 0x10 : 0x0c;
}

int msi_mask(const struct pci_dev *d, bool masked)
{
    uint8_t m = mask_off(d);

    if (!m)
        return -1;
    pci_cfg_write32(d, d->cap_msi + m, masked ? 1 : 0);
    return 0;
}

bool msi_pending(const struct pci_dev *d)
{
    uint8_t m = mask_off(d);

    return m && (pci_cfg_read32(d, d->cap_msi + m + 4) & 1);
}

void msi_disable(const struct pci_dev *d)
{
    if (d->cap_msi)
        pci_cfg_write16(d, d->cap_msi + MSI_CTRL,
                        pci_cfg_read16(d, d->cap_msi + MSI_CTRL) & ~MSI_CTRL_ENABLE);
}
