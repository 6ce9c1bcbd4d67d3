/* guest/src/smp.h - `smp`: application-processor bring-up (INIT/SIPI/SIPI, real-mode trampoline at 0x70000). */
#ifndef PROBE_SMP_H
#define PROBE_SMP_H

/* CPUs the probe can bring up (BSP included); one 4 KiB stack per AP. */
#define SMP_MAX_CPUS        64
#define SMP_AP_STACK_SIZE   4096
/* The trampoline page (below 1 MiB, page aligned) and its SIPI vector.
 * Overridable (-DSMP_TRAMP_PADDR=...) only to test the conflict checks. */
#ifndef SMP_TRAMP_PADDR
#define SMP_TRAMP_PADDR     0x70000
#endif
#define SMP_SIPI_VECTOR     (SMP_TRAMP_PADDR >> 12)

#ifndef __ASSEMBLER__
#include <stdbool.h>

#include "start_info.h"

/*
 * With the `smp` token: count the CPUs to expect (cpus=N, else CPUID leaf 1
 * EBX[23:16] if HTT, else 1), start every AP (APIC ID = index) with
 * INIT/SIPI/SIPI through the LAPIC, wait up to 2 s for them and print
 * "probe: cpus expected=N answered=M apic_ids=...". Exits 2 on a bad
 * cpus= value, 10 if the LAPIC is unusable, 22 if the trampoline page
 * cannot be used or M < N; returns otherwise. `cmdline` must be the
 * string at si->cmdline_paddr (or "").
 */
void smp_run(const struct hvm_start_info *si, const char *cmdline);

/* AP C entry (from smp_boot.S, on its own stack): enable the LAPIC, record
 * the APIC ID, park (or, after smp_ap_want_work, the first AP runs the work
 * smp_ap_set_work gives it, polling for it with IF=0). */
__attribute__((noreturn)) void smp_ap_main(void);

/* Before smp_run: keep the first AP awake for smp_ap_set_work. */
void smp_ap_want_work(void);

/* Hands `fn` to the first AP (after smp_ap_want_work and smp_run); it runs
 * there with IF=0 and must not return unless the AP is to park. */
void smp_ap_set_work(void (*fn)(void));

/* APs that answered smp_run. */
unsigned int smp_ap_count(void);
#endif

#endif
