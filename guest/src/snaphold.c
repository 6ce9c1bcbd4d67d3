/* guest/src/snaphold.c - snaphold: an rng interrupt held pending across a VMM snapshot, then checked to arrive once. */
#include "snaphold.h"

#include <stdint.h>

#include "cmdline.h"
#include "console.h"
#include "cpu.h"
#include "exit.h"
#include "io.h"
#include "irq.h"
#include "lab.h"
#include "lapic.h"
#include "msi.h"
#include "msix.h"
#include "uart.h"
#include "virtio_rng.h"
#include "wait.h"

#define LSR        (UART_COM1_BASE + 5)
#define LSR_DR     0x01

static uint8_t hold_buf[64] __attribute__((aligned(64)));

/* Seconds of TSC from now, as a deadline. */
static uint64_t deadline(unsigned int s)
{
    return rdtsc() + (uint64_t)s * lab_tsc_hz(0);
}

static int fail(const char *why)
{
    cprintf("probe: snaphold FAIL %s\n", why);
    console_flush();
    return PROBE_EXIT_IRQ_CHECK;
}

/* Masked: the device's signal must leave its pending bit (or, INTx, the LAPIC's IRR bit). */
static bool pending(const struct virtio_pci *vp, unsigned int entry, uint8_t vec)
{
    if (vp->mode == VIRTIO_IRQ_MSIX || vp->mode == VIRTIO_IRQ_MSIX_SHARED)
        return msix_pending(vp->pci, entry);
    if (vp->mode == VIRTIO_IRQ_MSI)
        return msi_pending(vp->pci);
    return lapic_irr(vec);
}

static void hold(const struct virtio_pci *vp, unsigned int entry, bool on)
{
    if (vp->mode == VIRTIO_IRQ_MSIX || vp->mode == VIRTIO_IRQ_MSIX_SHARED)
        msix_mask_entry(vp->pci, entry, on);
    else if (vp->mode == VIRTIO_IRQ_MSI)
        msi_mask(vp->pci, on);
    else if (on)
        irq_disable();
    else
        irq_enable();
}

static uint32_t irqs_before;

/* The queue was signalled since irqs_before (MSI-X: its vector; MSI, INTx: the ISR's queue bit). */
static bool signalled(const void *ctx)
{
    return ((const struct virtq *)ctx)->irqs != irqs_before;
}

static bool never(const void *ctx)
{
    (void)ctx;
    return false;
}

/* One COM1 line, by polling (interrupts may be off). */
static void wait_line(void)
{
    for (;;) {
        while (!(inb(LSR) & LSR_DR))
            cpu_relax();
        char c = (char)inb(UART_COM1_BASE);
        if (c == '\n' || c == '\r')
            return;
    }
}

int probe_snaphold(const char *cmdline)
{
    if (!cmdline_has(cmdline, "snaphold"))
        return 0;
    struct virtio_pci *vp = virtio_rng_device();
    if (!vp) {
        console_puts("probe: snaphold FAIL no virtio-rng device (rng=N starts it)\n");
        return PROBE_EXIT_NO_RNG;
    }
    bool msix = vp->mode == VIRTIO_IRQ_MSIX || vp->mode == VIRTIO_IRQ_MSIX_SHARED;
    unsigned int entry = msix ? 1 : 0; /* MSI-X entry 1 + q is queue q's (shared: all queues) */
    uint8_t vec = vp->vectors[entry];
    if (vp->mode == VIRTIO_IRQ_MSI && msi_mask(vp->pci, false))
        return fail("the MSI capability has no per-vector masking");
    struct virtq *vq = &vp->vq[0];
    hold(vp, entry, true);
    uint32_t before = irq_count(vec);
    irqs_before = vq->irqs;
    if (virtq_add_buf(vq, (uintptr_t)hold_buf, sizeof(hold_buf), true) < 0)
        return fail("rng queue full");
    virtio_pci_kick(vp, vq);
    uint64_t end = deadline(5);
    while (!(virtq_has_used(vq) && pending(vp, entry, vec)) && rdtsc() < end)
        cpu_relax();
    if (!virtq_has_used(vq))
        return fail("the request did not complete");
    if (!pending(vp, entry, vec))
        return fail("no pending bit");
    if (irq_count(vec) != before || vq->irqs != irqs_before)
        return fail("the interrupt came while masked");
    uint32_t id, len;
    virtq_pop_used(vq, &id, &len);
    cprintf("probe: snaphold pending %s vec=%u\n", virtio_irq_mode_name(vp->mode), entry);
    console_puts("probe: snaphold ready\n");
    console_flush();
    wait_line();
    hold(vp, entry, false);
    (void)wait_until(signalled, vq, 200);  /* sti; hlt: ~2 s of watchdog ticks at most */
    (void)wait_until(never, 0, 5);          /* 50 ms more: a second one would show */
    uint32_t got = vq->irqs - irqs_before;
    if (got != 1) {
        cprintf("probe: snaphold FAIL not delivered once (count=%u, vector interrupts %u)\n",
                got, irq_count(vec) - before);
        console_flush();
        return PROBE_EXIT_IRQ_CHECK;
    }
    cprintf("probe: snaphold delivered count=%u\n", got);
    console_flush();
    return 0;
}
