/* guest/src/virtio_pci.h - virtio 1.x modern PCI transport (spec 4.1): init, queues, interrupt mode selection. */
#ifndef PROBE_VIRTIO_PCI_H
#define PROBE_VIRTIO_PCI_H

#include <stddef.h>
#include <stdint.h>

#include "exit.h"
#include "pci.h"
#include "virtq.h"

#define VIRTIO_PCI_VENDOR   0x1af4
#define VIRTIO_MAX_QUEUES   8       /* per device (msivm virtio-blk offers up to 8) */
#define VIRTIO_F_VERSION_1  (1ull << 32)
#define VIRTIO_RING_POOL    (VIRTIO_MAX_QUEUES + 11) /* queues of all devices together (rng 1, blk 8, net 2,
                                                      console 2; flood=: rng 1, blk 1, net 2, console 2) */
#define VIRTIO_STATUS_NEEDS_RESET 0x40

enum virtio_irq_mode {
    VIRTIO_IRQ_AUTO,            /* pick like Linux virtio_pci, see below */
    VIRTIO_IRQ_MSIX,            /* one MSI-X vector per queue + one for config */
    VIRTIO_IRQ_MSIX_SHARED,     /* MSI-X: one for config, one shared by all queues */
    VIRTIO_IRQ_MSI,             /* one MSI vector; handler reads ISR */
    VIRTIO_IRQ_INTX,            /* INTx via IOAPIC pin = Interrupt Line; handler reads ISR */
};

struct virtio_pci {
    struct pci_dev *pci;
    int type;                           /* virtio device type (4 = rng) */
    uintptr_t common, notify, isr, device;  /* mapped structures (device may be 0) */
    uint32_t notify_len, notify_mult, device_len;
    uint64_t features;                  /* negotiated */
    enum virtio_irq_mode mode;          /* mode in use after a successful start */
    unsigned int nvqs;
    struct virtq vq[VIRTIO_MAX_QUEUES];
    struct virtq_mem *ring[VIRTIO_MAX_QUEUES]; /* from a static pool, kept across retries */
    uint8_t vectors[VIRTIO_MAX_QUEUES + 1]; /* IDT vectors registered for the mode */
    unsigned int nvectors;
    unsigned int msix_entries;          /* MSI-X table entries in use */
    volatile uint32_t config_irqs;      /* configuration-change interrupts */
    volatile uint32_t isr_empty;        /* ISR-mode interrupts with ISR == 0 */
};

/* "msix", "msix-shared", "msi", "intx" ("auto" for VIRTIO_IRQ_AUTO). */
const char *virtio_irq_mode_name(enum virtio_irq_mode m);

/* Parse one of the names above (not "auto") from s[0..len). 0 or -1. */
int virtio_irq_mode_parse(const char *s, size_t len, enum virtio_irq_mode *out);

/* Virtio device type of a PCI function: device 0x1040 + type (modern), or
 * for transitional devices 0x1000..0x103f the subsystem ID (as Linux does);
 * -1 if d is not a virtio function. */
int virtio_pci_type(const struct pci_dev *d);

/*
 * Prepare d (must be usable) for driving: clear *vp, find and map the
 * common/notify/ISR/device capabilities (the first of each type, as Linux
 * does), enable memory decode and bus mastering. The device is not reset;
 * its offered features and device configuration can be read afterwards.
 * Returns 0, or PROBE_EXIT_VIRTIO after "probe: virtio <bdf> missing ...".
 */
int virtio_pci_open(struct virtio_pci *vp, struct pci_dev *d);

/* Features the device offers (64 bits, device_feature_select 0 and 1). */
uint64_t virtio_pci_offered(const struct virtio_pci *vp);

/* Device-specific configuration reads at byte offset `off` (natural widths;
 * 0 when there is no device capability or `off` lies beyond it). The 64-bit
 * read is two 32-bit reads retried until config_generation is stable. */
uint8_t virtio_pci_cfg8(const struct virtio_pci *vp, uint32_t off);
uint16_t virtio_pci_cfg16(const struct virtio_pci *vp, uint32_t off);
uint32_t virtio_pci_cfg32(const struct virtio_pci *vp, uint32_t off);
uint64_t virtio_pci_cfg64(const struct virtio_pci *vp, uint32_t off);

/*
 * Bring up the opened device with `nvqs` queues and the driver features
 * `features` (VIRTIO_F_VERSION_1 is always requested, and required): reset,
 * ACKNOWLEDGE, DRIVER, feature negotiation, FEATURES_OK (checked), interrupt
 * setup, queues (size = min(device max, 256), ring memory from a static
 * pool of VIRTIO_RING_POOL queues shared by all devices), DRIVER_OK.
 *
 * Interrupt mode: `want` forces one; VIRTIO_IRQ_AUTO tries, in order, msix
 * (table >= nvqs + 1 entries), msix-shared (>= 2 entries), msi (MSI cap),
 * intx (Interrupt Pin != 0, Interrupt Line a valid IOAPIC pin). A mode whose
 * MSI-X vector the device refuses (reads back 0xFFFF) falls back to the next
 * one after a reset. MSI-X: entry 0 = config, entry 1 + q = queue q (shared:
 * entry 1 = all queues); msi/intx: one vector whose handler reads the ISR.
 * The vectors are owned by the device's name in the interrupt table
 * (irq_set_owner), and the device is listed for the per-device summary.
 * Prints "probe: virtio <bdf> type T irq=<mode> queues=N size=S features=0x.."
 * on success. Returns 0, PROBE_EXIT_IRQ_MODE after "probe: irq mode X
 * unavailable" (forced mode impossible), or PROBE_EXIT_VIRTIO after
 * "probe: virtio <bdf> <reason>".
 */
int virtio_pci_setup(struct virtio_pci *vp, uint64_t features, unsigned int nvqs,
                     enum virtio_irq_mode want);

/* virtio_pci_open(vp, d), then virtio_pci_setup(vp, features, nvqs, want). */
int virtio_pci_start(struct virtio_pci *vp, struct pci_dev *d, uint64_t features,
                     unsigned int nvqs, enum virtio_irq_mode want);

/* Notify the device that queue vq has new available buffers, unless the device said it needs no
 * kick (used.flags NO_NOTIFY: it is polling the ring). */
void virtio_pci_kick(const struct virtio_pci *vp, const struct virtq *vq);

/* Notify writes of every device so far, and kicks left out because of NO_NOTIFY. */
uint64_t virtio_pci_kicks(void);
uint64_t virtio_pci_kicks_skipped(void);

/* The device_status register (e.g. VIRTIO_STATUS_NEEDS_RESET). */
uint8_t virtio_pci_status(const struct virtio_pci *vp);

/* Reset the device (device_status = 0) and wait for the reset to complete. */
void virtio_pci_reset(const struct virtio_pci *vp);

#endif
