/* guest/src/snaphold.h - snaphold: an rng interrupt held pending across a VMM snapshot, then checked to arrive once. */
#ifndef PROBE_SNAPHOLD_H
#define PROBE_SNAPHOLD_H

/*
 * With the token `snaphold` on the command line (after the rng workload, which must have started
 * the virtio-rng device): masks the rng queue's interrupt (MSI-X: its table entry's mask bit;
 * MSI: the message's per-vector mask bit; INTx: interrupts off on the CPU), has the device
 * complete one request, waits until the interrupt is pending (MSI-X: the PBA bit; MSI: the
 * pending bit; INTx: the vector's LAPIC IRR bit; 5 s at most) and prints
 * "probe: snaphold pending <mode> vec=N", then "probe: snaphold ready", and waits for a line on
 * COM1 (the VMM is snapshotted, killed and restored meanwhile). Then it unmasks (or enables
 * interrupts) and expects exactly one interrupt on that vector within 2 s:
 * "probe: snaphold delivered count=1". Returns 0 (also without the token), or
 * PROBE_EXIT_NO_RNG / PROBE_EXIT_IRQ_CHECK after "probe: snaphold FAIL <why>".
 */
int probe_snaphold(const char *cmdline);

#endif
