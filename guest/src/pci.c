/* guest/src/pci.c - PCI bus 0 enumeration, BAR sizing and capability listing via config mechanism #1. */
#include "pci.h"
#include "console.h"
#include "fmt.h"
#include "io.h"
#include "lib.h"

#define PCI_CONFIG_ADDR 0xcf8
#define PCI_CONFIG_DATA 0xcfc

#define PCI_VENDOR_ID       0x00
#define PCI_STATUS          0x06
#define PCI_CLASS_REV       0x08
#define PCI_HEADER_TYPE     0x0e
#define PCI_BAR0            0x10
#define PCI_SUBSYS          0x2c
#define PCI_CAP_PTR         0x34
#define PCI_INTERRUPT       0x3c
#define PCI_STATUS_CAPS     0x0010
#define PCI_HDR_MULTIFN     0x80

#define VIRTIO_VENDOR       0x1af4

static struct pci_dev devs[PCI_MAX_DEVS] __noinit;   /* filled by probe_function */
static int ndevs;

static void cfg_select(const struct pci_dev *d, uint8_t off)
{
    outl(PCI_CONFIG_ADDR, 0x80000000u | ((uint32_t)d->bus << 16) |
         ((uint32_t)d->dev << 11) | ((uint32_t)d->fn << 8) | (off & 0xfc));
}

uint32_t pci_cfg_read32(const struct pci_dev *d, uint8_t off)
{
    cfg_select(d, off);
    return inl(PCI_CONFIG_DATA);
}

uint16_t pci_cfg_read16(const struct pci_dev *d, uint8_t off)
{
    cfg_select(d, off);
    return inw(PCI_CONFIG_DATA + (off & 2));
}

uint8_t pci_cfg_read8(const struct pci_dev *d, uint8_t off)
{
    cfg_select(d, off);
    return inb(PCI_CONFIG_DATA + (off & 3));
}

void pci_cfg_write32(const struct pci_dev *d, uint8_t off, uint32_t v)
{
    cfg_select(d, off);
    outl(PCI_CONFIG_DATA, v);
}

void pci_cfg_write16(const struct pci_dev *d, uint8_t off, uint16_t v)
{
    cfg_select(d, off);
    outw(PCI_CONFIG_DATA + (off & 2), v);
}

void pci_command(const struct pci_dev *d, uint16_t set, uint16_t clear)
{
    uint16_t cmd = pci_cfg_read16(d, PCI_COMMAND);

    pci_cfg_write16(d, PCI_COMMAND, (uint16_t)((cmd & ~clear) | set));
}

uint8_t pci_find_cap(const struct pci_dev *d, uint8_t id, uint8_t after)
{
    unsigned int guard;
    uint8_t off;

    if (!(pci_cfg_read16(d, PCI_STATUS) & PCI_STATUS_CAPS))
        return 0;
    off = after ? pci_cfg_read8(d, after + 1) : pci_cfg_read8(d, PCI_CAP_PTR);
    for (guard = 0; guard < 48 && off >= 0x40; guard++) {
        uint16_t hdr = pci_cfg_read16(d, off & 0xfc);

        if ((hdr & 0xff) == id)
            return off & 0xfc;
        off = (uint8_t)(hdr >> 8);
    }
    return 0;
}

/* Size all BARs of d (decode off meanwhile) and print them. */
static void probe_bars(struct pci_dev *d, int nbars)
{
    uint16_t cmd = pci_cfg_read16(d, PCI_COMMAND);
    bool unassigned = false, high = false;
    int i;

    /* All-ones sizing writes with I/O and memory decode off; restored after. */
    pci_cfg_write16(d, PCI_COMMAND, cmd & ~(PCI_CMD_IO | PCI_CMD_MEM));
    for (i = 0; i < nbars; i++) {
        struct pci_bar *b = &d->bar[i];
        uint8_t off = PCI_BAR0 + 4 * i;
        uint32_t orig = pci_cfg_read32(d, off), mask;

        pci_cfg_write32(d, off, 0xffffffffu);
        mask = pci_cfg_read32(d, off);
        pci_cfg_write32(d, off, orig);
        if (mask == 0 || mask == 0xffffffffu)
            continue;
        if (orig & 1) {
            mask &= ~3u;
            if (!(mask & 0xffff0000u))
                mask |= 0xffff0000u;
            b->type = PCI_BAR_IO;
            b->addr = orig & ~3u;
            b->size = (uint32_t)(~mask + 1);
        } else if (((orig >> 1) & 3) == 2 && i + 1 < nbars) {
            uint32_t orig_hi = pci_cfg_read32(d, off + 4), mask_hi;
            uint64_t m;

            pci_cfg_write32(d, off + 4, 0xffffffffu);
            mask_hi = pci_cfg_read32(d, off + 4);
            pci_cfg_write32(d, off + 4, orig_hi);
            m = ((uint64_t)mask_hi << 32) | (mask & ~0xfu);
            b->type = PCI_BAR_MEM64;
            b->addr = ((uint64_t)orig_hi << 32) | (orig & ~0xfu);
            b->size = ~m + 1;
            b->prefetch = orig & 8;
            i++;
        } else {
            b->type = PCI_BAR_MEM32;
            b->addr = orig & ~0xfu;
            b->size = (uint32_t)(~(mask & ~0xfu) + 1);
            b->prefetch = orig & 8;
        }
    }
    pci_cfg_write16(d, PCI_COMMAND, cmd);

    for (i = 0; i < nbars; i++) {
        const struct pci_bar *b = &d->bar[i];
        static const char *const names[] = { "", "io", "mem32", "mem64" };

        if (b->type == PCI_BAR_NONE)
            continue;
        cprintf("  bar%d %s 0x%016lx size 0x%lx%s\n", i, names[b->type],
                (unsigned long)b->addr, (unsigned long)b->size,
                b->prefetch ? " pref" : "");
        if (b->addr == 0)
            unassigned = true;
        else if (b->type != PCI_BAR_IO && b->addr + b->size > 0x100000000ull)
            high = true;
    }
    d->usable = !unassigned && !high;
    d->skip_reason = unassigned ? "bar unassigned" : high ? "bar above 4 GiB" : 0;
}

static void print_vendor_cap(const struct pci_dev *d, uint8_t off)
{
    uint32_t w0 = pci_cfg_read32(d, off);

    if (d->vendor != VIRTIO_VENDOR || ((w0 >> 16) & 0xff) < 16) {
        cprintf("  cap 0x%02x vendor len %u\n", off, (w0 >> 16) & 0xff);
        return;
    }
    cprintf("  cap 0x%02x vendor virtio cfg_type %u bar %u off 0x%x len 0x%x", off,
            w0 >> 24, pci_cfg_read8(d, off + 4), pci_cfg_read32(d, off + 8),
            pci_cfg_read32(d, off + 12));
    if ((w0 >> 24) == 2 && ((w0 >> 16) & 0xff) >= 20)   /* notify: multiplier */
        cprintf(" mult %u", pci_cfg_read32(d, off + 16));
    cprintf("\n");
}

/* Walk and print the capability list; remember MSI/MSI-X offsets. */
static void probe_caps(struct pci_dev *d)
{
    unsigned int guard;
    uint8_t off;

    if (!(pci_cfg_read16(d, PCI_STATUS) & PCI_STATUS_CAPS))
        return;
    off = pci_cfg_read8(d, PCI_CAP_PTR);
    for (guard = 0; guard < 48 && off >= 0x40; guard++) {
        uint32_t hdr, t, p;
        uint16_t ctrl;

        off &= 0xfc;
        hdr = pci_cfg_read32(d, off);
        ctrl = (uint16_t)(hdr >> 16);
        switch (hdr & 0xff) {
        case PCI_CAP_MSIX:
            d->cap_msix = off;
            t = pci_cfg_read32(d, off + 4);
            p = pci_cfg_read32(d, off + 8);
            cprintf("  cap 0x%02x msix table=bar%u+0x%x pba=bar%u+0x%x size %u\n", off,
                    t & 7, t & ~7u, p & 7, p & ~7u, (ctrl & 0x7ff) + 1);
            break;
        case PCI_CAP_MSI:
            d->cap_msi = off;
            cprintf("  cap 0x%02x msi %s%s multi=%u\n", off,
                    ctrl & 0x80 ? "64bit" : "32bit", ctrl & 0x100 ? " maskable" : "",
                    1u << ((ctrl >> 1) & 7));
            break;
        case PCI_CAP_VENDOR:
            print_vendor_cap(d, off);
            break;
        case PCI_CAP_PCIE:
            cprintf("  cap 0x%02x pciexp\n", off);
            break;
        case PCI_CAP_PM:
            cprintf("  cap 0x%02x pm\n", off);
            break;
        default:
            cprintf("  cap 0x%02x id 0x%02x\n", off, hdr & 0xff);
            break;
        }
        off = (uint8_t)(hdr >> 8);
    }
}

/* Record and print one present function; returns its header type byte. */
static uint8_t probe_function(uint8_t slot, uint8_t fn, uint32_t id)
{
    struct pci_dev tmp = { .bus = 0, .dev = slot, .fn = fn };
    struct pci_dev *d = ndevs < PCI_MAX_DEVS ? &devs[ndevs++] : &tmp;
    uint32_t irq;
    uint8_t hdr;

    *d = tmp;
    snprintf(d->name, sizeof(d->name), "%02x:%02x.%x", d->bus, slot, fn);
    d->vendor = (uint16_t)id;
    d->device = (uint16_t)(id >> 16);
    d->class_code = pci_cfg_read32(d, PCI_CLASS_REV) >> 8;
    hdr = pci_cfg_read8(d, PCI_HEADER_TYPE);
    d->header_type = hdr & 0x7f;
    cprintf("pci %s %04x:%04x class %06x\n", d->name, d->vendor, d->device, d->class_code);
    if (d->header_type == 0) {
        uint32_t ss = pci_cfg_read32(d, PCI_SUBSYS);

        d->subsys_vendor = (uint16_t)ss;
        d->subsys_id = (uint16_t)(ss >> 16);
    }
    if (d->header_type <= 1) {
        irq = pci_cfg_read32(d, PCI_INTERRUPT);
        d->irq_line = (uint8_t)irq;
        d->irq_pin = (uint8_t)(irq >> 8);
        probe_bars(d, d->header_type == 0 ? PCI_NUM_BARS : 2);
        probe_caps(d);
        if (d->skip_reason)
            cprintf("probe: %s %s, skipped\n", d->name, d->skip_reason);
    }
    if (d == &tmp)
        cprintf("probe: %s not recorded (more than %d functions)\n", d->name, PCI_MAX_DEVS);
    return hdr;
}

int pci_enumerate(void)
{
    uint8_t slot, fn;

    ndevs = 0;
    for (slot = 0; slot < 32; slot++) {
        struct pci_dev f0 = { .bus = 0, .dev = slot, .fn = 0 };
        uint32_t id = pci_cfg_read32(&f0, PCI_VENDOR_ID);

        if ((id & 0xffff) == 0xffff || (id & 0xffff) == 0)
            continue;
        if (!(probe_function(slot, 0, id) & PCI_HDR_MULTIFN))
            continue;
        for (fn = 1; fn < 8; fn++) {
            struct pci_dev fx = { .bus = 0, .dev = slot, .fn = fn };

            id = pci_cfg_read32(&fx, PCI_VENDOR_ID);
            if ((id & 0xffff) != 0xffff && (id & 0xffff) != 0)
                probe_function(slot, fn, id);
        }
    }
    return ndevs;
}

struct pci_dev *pci_get(int i)
{
    return &devs[i];
}
