/* guest/src/latency.h - interrupt latency workloads: virtio-rng latency mode (device-stamped completions) and the LAPIC self-IPI floor. */
#ifndef PROBE_LATENCY_H
#define PROBE_LATENCY_H

#include <stdbool.h>

#include "exit.h"
#include "virtio_pci.h"

#define LAT_MAX_N           4096
#define IRQ_VEC_SELFIPI     0x21    /* dedicated vector of selfipi= */

/*
 * lat=N on a started virtio-rng device in latency mode (msivm --rng
 * latency=US: the device completes one posted buffer per period with the
 * guest TSC at which it raised the interrupt and a sequence number, used
 * length 16). Keeps 8 64-byte buffers posted, re-posting each as it
 * completes (from the interrupt handler, then a kick). The rng queue's
 * vector is timed (idt_time_vector); per queue interrupt the latency is
 * entry TSC - the earliest stamp among the buffers it completed, the others
 * count as coalesced. The first interrupt is a warm-up (not measured; the
 * "probe: ready" line follows it); then N interrupts are measured between
 * markers 2 and 3, waiting with "sti; hlt" (poll = false) or spinning on a
 * volatile counter with IF=1 (poll = true). Prints
 *   probe: result latency requests=N lat_min=.. lat_avg=.. lat_p99=.. lat_max=.. coalesced=C wait=hlt|poll
 *   probe: latency hist ...
 *   probe: virtio <bdf> queue_irqs=Q config_irqs=C isr_empty=E
 * Returns 0, PROBE_EXIT_RNG_TIMEOUT (no completion for 2 s),
 * PROBE_EXIT_RNG_DATA (used length != 16, sequence numbers not increasing,
 * a stamp later than the handler entry) or PROBE_EXIT_VIRTIO (bad used id).
 */
int lat_run_rng(struct virtio_pci *vp, unsigned long n, bool poll);

/*
 * selfipi=N: N self-IPIs on IRQ_VEC_SELFIPI (timed vector), one at a time;
 * latency = entry TSC - rdtsc just before the ICR write. Between markers 2
 * and 3; needs lapic_init(). Prints
 *   probe: result floor requests=N lat_min=.. lat_avg=.. lat_p99=.. lat_max=..
 *   probe: floor hist ...
 * Returns 0, or PROBE_EXIT_IRQ_CHECK if an IPI was not delivered within
 * 2^32 TSC cycles ("probe: self-ipi N not delivered").
 */
int lat_run_floor(unsigned long n, bool poll);

#endif
