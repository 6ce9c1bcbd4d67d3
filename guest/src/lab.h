/* guest/src/lab.h - lab hooks: TSC reads, timestamp markers on port 0xf8, the work window lines, the one-time "probe: ready" line. */
#ifndef PROBE_LAB_H
#define PROBE_LAB_H

#include <stdint.h>

#include "io.h"

/* msivm timestamps every byte written to this port (QEMU ignores it). */
#define LAB_MARKER_PORT     0xf8
#define LAB_MARK_READY      1       /* first virtio request completed */
#define LAB_MARK_BEGIN      2       /* a timed workload starts */
#define LAB_MARK_END        3       /* ... and ends */

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;

    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

static inline void lab_marker(uint8_t m)
{
    outb(LAB_MARKER_PORT, m);
}

/*
 * TSC frequency in Hz: CPUID leaf 0x15 (crystal ratio, with the crystal
 * frequency in ECX), else 0x16 (base MHz), else the hypervisor timing leaf
 * 0x40000010 (EAX = TSC kHz, if the hypervisor's max leaf reaches it); else
 * 2 GHz is assumed. *src (if non-NULL) names the source: "cpuid 0x15",
 * "cpuid 0x16", "cpuid 0x40000010" or "assumed".
 */
uint64_t lab_tsc_hz(const char **src);

/*
 * The lab's work window around each timed workload (rng, blk, net), for the
 * host to sample the VMM's CPU on console lines. lab_set_window(ms) with
 * ms > 0 (cmdline labwin=MS) turns it on; with 0 (the default) the calls
 * below only write markers 2 and 3.
 *   lab_work_begin: "probe: work begin", an idle pause of ms, marker 2;
 *   lab_work_end:   marker 3, "probe: work end irqs=D kicks=K halts=H" (device
 *                   interrupts, notify writes and HLTs between the markers),
 *                   an idle pause of ms.
 * The pauses let the host's sample land while the guest is idle. idle(t)
 * must return once the TSC passed t (NULL: sti;hlt with the LAPIC watchdog
 * timer, wait_until); a workload that must keep serving its device passes
 * its own loop.
 */
typedef void (*lab_idle_fn)(uint64_t deadline_tsc);
void lab_set_window(unsigned long ms);
void lab_work_begin(lab_idle_fn idle);
void lab_work_end(lab_idle_fn idle);

/* HLTs executed so far (irq_enable_and_halt, cpu.h). */
extern uint64_t cpu_halts;

/*
 * Call after every virtio completion the driver has seen. The first call of
 * the run writes marker 1 and prints "probe: ready"; it returns the TSC
 * cycles that took (for the caller to leave out of its timing), later calls
 * return 0 at once.
 */
uint64_t lab_ready(void);

#endif
