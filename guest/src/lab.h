/* guest/src/lab.h - lab hooks: TSC reads, timestamp markers on port 0xf8, the one-time "probe: ready" line. */
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
 * Call after every virtio completion the driver has seen. The first call of
 * the run writes marker 1 and prints "probe: ready"; it returns the TSC
 * cycles that took (for the caller to leave out of its timing), later calls
 * return 0 at once.
 */
uint64_t lab_ready(void);

#endif
