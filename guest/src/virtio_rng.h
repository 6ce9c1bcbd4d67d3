/* guest/src/virtio_rng.h - virtio-rng (virtio type 4) driver and its read/check workload. */
#ifndef PROBE_VIRTIO_RNG_H
#define PROBE_VIRTIO_RNG_H

#include "exit.h"
#include "pci.h"
#include "virtio_pci.h"

#define VIRTIO_TYPE_RNG     4

/* True if d is a virtio-rng PCI function (modern 0x1044 or transitional). */
bool virtio_rng_match(const struct pci_dev *d);

/*
 * Start d with one queue in irq mode `want` (see virtio_pci_start), then read
 * at least `kib` KiB: one device-writable 4 KiB buffer at a time, kick,
 * sleep until the used ring advances (at most 100 wake-ups per request, else
 * "probe: rng timeout"). Checks: each full buffer was written (first and last
 * qword, zeroed before posting, are non-zero), no 16 consecutive empty
 * completions, more than 200 distinct byte values (if >= 1 KiB was read),
 * and at least one queue interrupt (if a request was made). Prints
 * "probe: rng read N bytes, distinct=D, requests=R" and "probe: virtio <bdf>
 * queue_irqs=Q config_irqs=C isr_empty=E" (interrupts that signalled the
 * queue, configuration changes, ISR-mode interrupts with ISR = 0) before
 * the checks, and "probe: result rng requests=R bytes=B cycles=C" (TSC
 * cycles of the read loop, bracketed by port 0xf8 markers 2 and 3; the first
 * completion triggers lab_ready). *mode is set to the
 * interrupt mode used ("none" if the device did not start).
 * Returns 0 or a PROBE_EXIT_* status (5, 6, 7, 8, 9).
 */
int virtio_rng_run(struct pci_dev *d, unsigned long kib, enum virtio_irq_mode want,
                   const char **mode);

/* The virtio-rng device virtio_rng_run started (its queue, mode and vectors), or NULL. */
struct virtio_pci *virtio_rng_device(void);

/*
 * Start d like virtio_rng_run, then run the interrupt latency workload
 * lat_run_rng(n, poll) instead of reading (see latency.h); the data are
 * stamps, so no "probe: rng read" line and no entropy check.
 */
int virtio_rng_latency(struct pci_dev *d, unsigned long n, bool poll,
                       enum virtio_irq_mode want, const char **mode);

#endif
