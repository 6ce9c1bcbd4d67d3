/* guest/src/intx_stress.h - intxstress=N: two vCPUs on one level-triggered virtio-rng line; a lost INTx assertion fails the run. */
#ifndef PROBE_INTX_STRESS_H
#define PROBE_INTX_STRESS_H

#include "pci.h"

#define INTX_STRESS_MAX_N 100000

/*
 * Drives the virtio-rng function `d` by INTx through the IOAPIC (level, to the
 * BSP) while the first AP (started by `smp`, see smp_ap_set_work) posts and
 * kicks its requests: the BSP takes every interrupt (ISR read, the requests'
 * completions, EOI) while the AP keeps adding requests, so the device raises
 * the line while the guest reads ISR and EOIs, and KVM resamples it
 * meanwhile. N requests of 16 bytes, at most 4 in flight; then 16 rounds of
 * one late request after the BSP went idle (a single interrupt with nothing
 * after it, at delays from 0 to 5 ms).
 *
 * Prints "probe: intxstress n=N done=D irqs=I isr_empty=E late=L/16" and
 * returns 0; PROBE_EXIT_INTX_LOST (after a line naming the phase, the counts
 * and whether the used ring held completions) when 2 s pass without the
 * interrupt of a completed request; PROBE_EXIT_IRQ_MODE if INTx is not
 * available; PROBE_EXIT_SMP without a second CPU.
 */
int intx_stress_run(struct pci_dev *d, unsigned long n);

#endif
