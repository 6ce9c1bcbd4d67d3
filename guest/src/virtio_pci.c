/* guest/src/virtio_pci.c - virtio 1.x modern PCI transport: capabilities, status handshake, queues, interrupts. */
#include "virtio_pci.h"
#include "console.h"
#include "ioapic.h"
#include "irq.h"
#include "lib.h"
#include "mmio.h"
#include "msi.h"
#include "msix.h"

/* virtio_pci_cap.cfg_type */
#define CAP_COMMON  1
#define CAP_NOTIFY  2
#define CAP_ISR     3
#define CAP_DEVICE  4

/* struct virtio_pci_common_cfg */
#define CC_DFSELECT     0x00
#define CC_DF           0x04
#define CC_GFSELECT     0x08
#define CC_GF           0x0c
#define CC_MSIX_CONFIG  0x10
#define CC_NUM_QUEUES   0x12
#define CC_STATUS       0x14
#define CC_CFG_GEN      0x15
#define CC_Q_SELECT     0x16
#define CC_Q_SIZE       0x18
#define CC_Q_MSIX       0x1a
#define CC_Q_ENABLE     0x1c
#define CC_Q_NOFF       0x1e
#define CC_Q_DESC       0x20
#define CC_Q_DRIVER     0x28
#define CC_Q_DEVICE     0x30
#define CC_MIN_LEN      0x38

#define STATUS_ACKNOWLEDGE  1
#define STATUS_DRIVER       2
#define STATUS_DRIVER_OK    4
#define STATUS_FEATURES_OK  8

#define ISR_QUEUE   1
#define ISR_CONFIG  2

#define NO_VECTOR   0xffff
#define RESET_POLLS 1000

/* Results of one start attempt besides 0. */
#define TRY_REFUSED (-1)    /* interrupt mode not accepted: try the next one */

#define CFG_GEN_TRIES   100

static struct virtq_mem ring_pool[VIRTIO_RING_POOL] __noinit;
static unsigned int ring_pool_used;

static const char *const mode_names[] = {
    [VIRTIO_IRQ_AUTO] = "auto",
    [VIRTIO_IRQ_MSIX] = "msix",
    [VIRTIO_IRQ_MSIX_SHARED] = "msix-shared",
    [VIRTIO_IRQ_MSI] = "msi",
    [VIRTIO_IRQ_INTX] = "intx",
};

const char *virtio_irq_mode_name(enum virtio_irq_mode m)
{
    return (unsigned int)m < ARRAY_SIZE(mode_names) ? mode_names[m] : "?";
}

int virtio_irq_mode_parse(const char *s, size_t len, enum virtio_irq_mode *out)
{
    unsigned int m;

    for (m = VIRTIO_IRQ_MSIX; m < ARRAY_SIZE(mode_names); m++) {
        if (strlen(mode_names[m]) == len && !memcmp(s, mode_names[m], len)) {
            *out = (enum virtio_irq_mode)m;
            return 0;
        }
    }
    return -1;
}

int virtio_pci_type(const struct pci_dev *d)
{
    if (d->vendor != VIRTIO_PCI_VENDOR || d->device < 0x1000 || d->device > 0x107f)
        return -1;
    if (d->device >= 0x1040)
        return d->device - 0x1040;
    return d->header_type == 0 ? d->subsys_id : -1;
}

/* Find the first capability of each type (as Linux does) and map it. */
static int find_caps(struct virtio_pci *vp)
{
    const struct pci_dev *d = vp->pci;
    uint8_t off = 0;

    while ((off = pci_find_cap(d, PCI_CAP_VENDOR, off))) {
        uint32_t w0 = pci_cfg_read32(d, off);
        uint8_t type = (uint8_t)(w0 >> 24), bar = pci_cfg_read8(d, off + 4);
        uint32_t boff = pci_cfg_read32(d, off + 8), len = pci_cfg_read32(d, off + 12);
        const struct pci_bar *b;
        uintptr_t addr;

        if (((w0 >> 16) & 0xff) < 16 || type < CAP_COMMON || type > CAP_DEVICE ||
            bar >= PCI_NUM_BARS)
            continue;
        b = &d->bar[bar];
        if ((b->type != PCI_BAR_MEM32 && b->type != PCI_BAR_MEM64) ||
            (uint64_t)boff + len > b->size)
            continue;
        addr = (uintptr_t)(b->addr + boff);
        if (type == CAP_COMMON && !vp->common && len >= CC_MIN_LEN) {
            vp->common = addr;
        } else if (type == CAP_NOTIFY && !vp->notify && ((w0 >> 16) & 0xff) >= 20) {
            vp->notify = addr;
            vp->notify_len = len;
            vp->notify_mult = pci_cfg_read32(d, off + 16);
        } else if (type == CAP_ISR && !vp->isr && len >= 1) {
            vp->isr = addr;
        } else if (type == CAP_DEVICE && !vp->device) {
            vp->device = addr;
            vp->device_len = len;
        }
    }
    if (!vp->common || !vp->notify || !vp->isr) {
        cprintf("probe: virtio %s missing %s capability\n", d->name,
                !vp->common ? "common cfg" : !vp->notify ? "notify" : "isr");
        return -1;
    }
    return 0;
}

static uint8_t status_read(const struct virtio_pci *vp)
{
    return mmio_read8(vp->common + CC_STATUS);
}

uint8_t virtio_pci_status(const struct virtio_pci *vp)
{
    return status_read(vp);
}

static void status_set(const struct virtio_pci *vp, uint8_t bits)
{
    mmio_write8(vp->common + CC_STATUS, status_read(vp) | bits);
}

void virtio_pci_reset(const struct virtio_pci *vp)
{
    unsigned int i;

    mmio_write8(vp->common + CC_STATUS, 0);
    for (i = 0; i < RESET_POLLS && status_read(vp) != 0; i++)
        ;
}

static uint64_t kicks, kicks_skipped;

void virtio_pci_kick(const struct virtio_pci *vp, const struct virtq *vq)
{
    (void)vp;
    /* The device may be polling the ring (used.flags NO_NOTIFY): then no kick is due. The
     * fence orders the avail.idx store before the flags load (virtio 1.x 2.7.7.2). */
    __asm__ volatile("mfence" ::: "memory");
    if (*(volatile uint16_t *)&vq->mem->used.flags & VIRTQ_USED_F_NO_NOTIFY) {
        kicks_skipped++;
        return;
    }
    kicks++;
    mmio_write16(vq->notify_addr, vq->index);
}

uint64_t virtio_pci_kicks_skipped(void)
{
    return kicks_skipped;
}

uint64_t virtio_pci_kicks(void)
{
    return kicks;
}

uint64_t virtio_pci_offered(const struct virtio_pci *vp)
{
    uint64_t dev;

    mmio_write32(vp->common + CC_DFSELECT, 0);
    dev = mmio_read32(vp->common + CC_DF);
    mmio_write32(vp->common + CC_DFSELECT, 1);
    return dev | (uint64_t)mmio_read32(vp->common + CC_DF) << 32;
}

static bool cfg_ok(const struct virtio_pci *vp, uint32_t off, uint32_t size)
{
    return vp->device && (uint64_t)off + size <= vp->device_len;
}

uint8_t virtio_pci_cfg8(const struct virtio_pci *vp, uint32_t off)
{
    return cfg_ok(vp, off, 1) ? mmio_read8(vp->device + off) : 0;
}

uint16_t virtio_pci_cfg16(const struct virtio_pci *vp, uint32_t off)
{
    return cfg_ok(vp, off, 2) ? mmio_read16(vp->device + off) : 0;
}

uint32_t virtio_pci_cfg32(const struct virtio_pci *vp, uint32_t off)
{
    return cfg_ok(vp, off, 4) ? mmio_read32(vp->device + off) : 0;
}

uint64_t virtio_pci_cfg64(const struct virtio_pci *vp, uint32_t off)
{
    uint64_t v = 0;
    unsigned int i;
    uint8_t gen;

    if (!cfg_ok(vp, off, 8))
        return 0;
    for (i = 0; i < CFG_GEN_TRIES; i++) {
        gen = mmio_read8(vp->common + CC_CFG_GEN);
        v = mmio_read32(vp->device + off);
        v |= (uint64_t)mmio_read32(vp->device + off + 4) << 32;
        if (mmio_read8(vp->common + CC_CFG_GEN) == gen)
            break;
    }
    return v;
}

/* ---- interrupt handlers (interrupt context) ---- */

static void signal_all_queues(struct virtio_pci *vp)
{
    unsigned int q;

    for (q = 0; q < vp->nvqs; q++) {
        vp->vq[q].signalled = true;
        vp->vq[q].irqs++;
        if (vp->vq[q].irq_hook)
            vp->vq[q].irq_hook(&vp->vq[q], vp->vq[q].irq_ctx);
    }
}

static void vq_irq(void *ctx)
{
    struct virtq *vq = ctx;

    vq->signalled = true;
    vq->irqs++;
    if (vq->irq_hook)
        vq->irq_hook(vq, vq->irq_ctx);
}

static void queues_irq(void *ctx)
{
    signal_all_queues(ctx);
}

static void config_irq(void *ctx)
{
    struct virtio_pci *vp = ctx;

    vp->config_irqs++;
}

/* MSI and INTx: one vector for everything; reading ISR clears it (and
 * deasserts INTx). */
static void isr_irq(void *ctx)
{
    struct virtio_pci *vp = ctx;
    uint8_t isr = mmio_read8(vp->isr);

    if (isr & ISR_QUEUE)
        signal_all_queues(vp);
    if (isr & ISR_CONFIG)
        vp->config_irqs++;
    if (!isr)
        vp->isr_empty++;
}

/* ---- interrupt mode setup ---- */

static bool mode_available(const struct virtio_pci *vp, enum virtio_irq_mode m)
{
    const struct pci_dev *d = vp->pci;

    switch (m) {
    case VIRTIO_IRQ_MSIX:
        return msix_table_size(d) >= vp->nvqs + 1;
    case VIRTIO_IRQ_MSIX_SHARED:
        return msix_table_size(d) >= 2;
    case VIRTIO_IRQ_MSI:
        return d->cap_msi != 0;
    case VIRTIO_IRQ_INTX:
        return d->irq_pin >= 1 && d->irq_pin <= 4 && d->irq_line != 0 &&
               d->irq_line != 0xff && d->irq_line < ioapic_pins();
    default:
        return false;
    }
}

static int alloc_vector(struct virtio_pci *vp)
{
    int v = irq_alloc_vector();

    if (v < 0)
        return -1;
    /* Reserve it right away so the next allocation differs. */
    irq_register((uint8_t)v, 0, 0, IRQ_EDGE, 0, "reserved");
    irq_set_owner((uint8_t)v, vp->pci->name);
    vp->vectors[vp->nvectors++] = (uint8_t)v;
    return v;
}

static void release_irqs(struct virtio_pci *vp, enum virtio_irq_mode m)
{
    unsigned int i;

    if (m == VIRTIO_IRQ_MSIX || m == VIRTIO_IRQ_MSIX_SHARED)
        msix_disable(vp->pci, vp->msix_entries);
    else if (m == VIRTIO_IRQ_MSI)
        msi_disable(vp->pci);
    else if (m == VIRTIO_IRQ_INTX)
        ioapic_mask(vp->pci->irq_line);
    for (i = 0; i < vp->nvectors; i++)
        irq_unregister(vp->vectors[i]);
    vp->nvectors = 0;
    vp->msix_entries = 0;
}

/*
 * Allocate vectors, register handlers and program the interrupt source for
 * mode m. MSI-X table: entry 0 config, then queue entries. Returns 0 or -1.
 */
static int setup_irqs(struct virtio_pci *vp, enum virtio_irq_mode m)
{
    const struct pci_dev *d = vp->pci;
    uint8_t table[VIRTIO_MAX_QUEUES + 1];
    unsigned int q;
    int v, cfg;

    switch (m) {
    case VIRTIO_IRQ_MSIX:
        for (q = 0; q < vp->nvqs; q++) {
            if ((v = alloc_vector(vp)) < 0)
                return -1;
            table[1 + q] = (uint8_t)v;
            irq_register((uint8_t)v, vq_irq, &vp->vq[q], IRQ_EDGE, 0,
                         "msix %s entry %u (queue %u)", d->name, 1 + q, q);
        }
        if ((cfg = alloc_vector(vp)) < 0)
            return -1;
        table[0] = (uint8_t)cfg;
        irq_register((uint8_t)cfg, config_irq, vp, IRQ_EDGE, 0,
                     "msix %s entry 0 (config)", d->name);
        vp->msix_entries = vp->nvqs + 1;
        return msix_enable(d, vp->msix_entries, table);
    case VIRTIO_IRQ_MSIX_SHARED:
        if ((v = alloc_vector(vp)) < 0 || (cfg = alloc_vector(vp)) < 0)
            return -1;
        table[0] = (uint8_t)cfg;
        table[1] = (uint8_t)v;
        irq_register((uint8_t)v, queues_irq, vp, IRQ_EDGE, 0,
                     "msix %s entry 1 (queues)", d->name);
        irq_register((uint8_t)cfg, config_irq, vp, IRQ_EDGE, 0,
                     "msix %s entry 0 (config)", d->name);
        vp->msix_entries = 2;
        return msix_enable(d, 2, table);
    case VIRTIO_IRQ_MSI:
        if ((v = alloc_vector(vp)) < 0)
            return -1;
        irq_register((uint8_t)v, isr_irq, vp, IRQ_EDGE, 0, "msi %s", d->name);
        return msi_enable(d, (uint8_t)v);
    case VIRTIO_IRQ_INTX:
        if ((v = alloc_vector(vp)) < 0)
            return -1;
        irq_register((uint8_t)v, isr_irq, vp, IRQ_LEVEL, 0, "ioapic pin %u %s",
                     d->irq_line, d->name);
        pci_command(d, 0, PCI_CMD_INTX_DIS);
        /* PCI INTx is level-triggered; msivm and KVM's IOAPIC take the GSI
         * as active-high (see README: polarity). */
        return ioapic_route(d->irq_line, (uint8_t)v, true, false, 0);
    default:
        return -1;
    }
}

/* Write an MSI-X entry number to a vector register and check it stuck. */
static bool set_msix_vector(const struct virtio_pci *vp, uint32_t reg, uint16_t entry)
{
    mmio_write16(vp->common + reg, entry);
    return mmio_read16(vp->common + reg) == entry;
}

static int negotiate(struct virtio_pci *vp, uint64_t want)
{
    uint64_t dev = virtio_pci_offered(vp);

    vp->features = dev & (want | VIRTIO_F_VERSION_1);
    if (!(vp->features & VIRTIO_F_VERSION_1)) {
        cprintf("probe: virtio %s lacks VIRTIO_F_VERSION_1 (features 0x%lx)\n",
                vp->pci->name, (unsigned long)dev);
        return -1;
    }
    mmio_write32(vp->common + CC_GFSELECT, 0);
    mmio_write32(vp->common + CC_GF, (uint32_t)vp->features);
    mmio_write32(vp->common + CC_GFSELECT, 1);
    mmio_write32(vp->common + CC_GF, (uint32_t)(vp->features >> 32));
    status_set(vp, STATUS_FEATURES_OK);
    if (!(status_read(vp) & STATUS_FEATURES_OK)) {
        cprintf("probe: virtio %s did not accept FEATURES_OK\n", vp->pci->name);
        return -1;
    }
    return 0;
}

/* Largest power of two <= n (n >= 1). */
static uint16_t pow2_floor(uint16_t n)
{
    uint16_t p = 1;

    while ((uint16_t)(p << 1) && (uint16_t)(p << 1) <= n)
        p <<= 1;
    return p;
}

static int setup_queue(struct virtio_pci *vp, unsigned int q, enum virtio_irq_mode m)
{
    struct virtq *vq = &vp->vq[q];
    uintptr_t c = vp->common;
    uint16_t max, size, noff;

    mmio_write16(c + CC_Q_SELECT, (uint16_t)q);
    max = mmio_read16(c + CC_Q_SIZE);
    if (max == 0) {
        cprintf("probe: virtio %s queue %u unavailable\n", vp->pci->name, q);
        return PROBE_EXIT_VIRTIO;
    }
    if (!vp->ring[q]) {
        if (ring_pool_used == VIRTIO_RING_POOL) {
            cprintf("probe: virtio %s out of ring memory (queue %u)\n", vp->pci->name, q);
            return PROBE_EXIT_VIRTIO;
        }
        vp->ring[q] = &ring_pool[ring_pool_used++];
    }
    size = pow2_floor(max < VIRTQ_MAX_SIZE ? max : VIRTQ_MAX_SIZE);
    mmio_write16(c + CC_Q_SIZE, size);
    virtq_init(vq, vp->ring[q], (uint16_t)q, size);
    if (m == VIRTIO_IRQ_MSIX || m == VIRTIO_IRQ_MSIX_SHARED) {
        uint16_t entry = m == VIRTIO_IRQ_MSIX ? (uint16_t)(1 + q) : 1;

        if (!set_msix_vector(vp, CC_Q_MSIX, entry)) {
            cprintf("probe: virtio %s refused msix entry %u for queue %u\n",
                    vp->pci->name, entry, q);
            return TRY_REFUSED;
        }
    }
    mmio_write64_split(c + CC_Q_DESC, virtq_desc_addr(vq));
    mmio_write64_split(c + CC_Q_DRIVER, virtq_driver_addr(vq));
    mmio_write64_split(c + CC_Q_DEVICE, virtq_device_addr(vq));
    noff = mmio_read16(c + CC_Q_NOFF);
    if ((uint64_t)noff * vp->notify_mult + 2 > vp->notify_len) {
        cprintf("probe: virtio %s queue %u notify offset out of range\n",
                vp->pci->name, q);
        return PROBE_EXIT_VIRTIO;
    }
    vq->notify_addr = vp->notify + (uintptr_t)noff * vp->notify_mult;
    mmio_write16(c + CC_Q_ENABLE, 1);
    return 0;
}

/* One full initialisation in mode m. 0, TRY_REFUSED or an exit status. */
static int try_start(struct virtio_pci *vp, enum virtio_irq_mode m, uint64_t features)
{
    unsigned int q;
    int rc;

    virtio_pci_reset(vp);
    status_set(vp, STATUS_ACKNOWLEDGE);
    status_set(vp, STATUS_DRIVER);
    if (negotiate(vp, features))
        return PROBE_EXIT_VIRTIO;
    if (mmio_read16(vp->common + CC_NUM_QUEUES) < vp->nvqs) {
        cprintf("probe: virtio %s has fewer than %u queues\n", vp->pci->name, vp->nvqs);
        return PROBE_EXIT_VIRTIO;
    }
    if (setup_irqs(vp, m)) {
        cprintf("probe: virtio %s cannot program irq mode %s\n", vp->pci->name,
                virtio_irq_mode_name(m));
        return TRY_REFUSED;
    }
    for (q = 0; q < vp->nvqs; q++)
        if ((rc = setup_queue(vp, q, m)))
            return rc;
    if ((m == VIRTIO_IRQ_MSIX || m == VIRTIO_IRQ_MSIX_SHARED) &&
        !set_msix_vector(vp, CC_MSIX_CONFIG, 0)) {
        cprintf("probe: virtio %s refused msix entry 0 for config\n", vp->pci->name);
        return TRY_REFUSED;
    }
    status_set(vp, STATUS_DRIVER_OK);
    return 0;
}

int virtio_pci_open(struct virtio_pci *vp, struct pci_dev *d)
{
    memset(vp, 0, sizeof(*vp));
    vp->pci = d;
    vp->type = virtio_pci_type(d);
    if (find_caps(vp))
        return PROBE_EXIT_VIRTIO;
    pci_command(d, PCI_CMD_MEM | PCI_CMD_MASTER, 0);
    return 0;
}

int virtio_pci_setup(struct virtio_pci *vp, uint64_t features, unsigned int nvqs,
                     enum virtio_irq_mode want)
{
    static const enum virtio_irq_mode order[] = {
        VIRTIO_IRQ_MSIX, VIRTIO_IRQ_MSIX_SHARED, VIRTIO_IRQ_MSI, VIRTIO_IRQ_INTX,
    };
    struct pci_dev *d = vp->pci;
    unsigned int i;

    vp->nvqs = nvqs;
    if (nvqs == 0 || nvqs > VIRTIO_MAX_QUEUES)
        return PROBE_EXIT_VIRTIO;

    for (i = 0; i < ARRAY_SIZE(order); i++) {
        enum virtio_irq_mode m = want == VIRTIO_IRQ_AUTO ? order[i] : want;
        int rc;

        if (!mode_available(vp, m)) {
            if (want != VIRTIO_IRQ_AUTO)
                break;
            continue;
        }
        rc = try_start(vp, m, features);
        if (rc == 0) {
            vp->mode = m;
            irq_device(d->name, virtio_irq_mode_name(m));
            cprintf("probe: virtio %s type %d irq=%s queues=%u size=%u features=0x%lx\n",
                    d->name, vp->type, virtio_irq_mode_name(m), nvqs, vp->vq[0].size,
                    (unsigned long)vp->features);
            return 0;
        }
        virtio_pci_reset(vp);
        release_irqs(vp, m);
        if (rc != TRY_REFUSED)
            return rc;
        if (want != VIRTIO_IRQ_AUTO)
            break;
        cprintf("probe: virtio %s irq mode %s refused, falling back\n", d->name,
                virtio_irq_mode_name(m));
    }
    if (want != VIRTIO_IRQ_AUTO) {
        cprintf("probe: irq mode %s unavailable\n", virtio_irq_mode_name(want));
        return PROBE_EXIT_IRQ_MODE;
    }
    cprintf("probe: virtio %s no usable irq mode\n", d->name);
    return PROBE_EXIT_VIRTIO;
}

int virtio_pci_start(struct virtio_pci *vp, struct pci_dev *d, uint64_t features,
                     unsigned int nvqs, enum virtio_irq_mode want)
{
    int rc = virtio_pci_open(vp, d);

    return rc ? rc : virtio_pci_setup(vp, features, nvqs, want);
}
