/* guest/src/wait.h - sleep in sti;hlt until a condition holds, bounded by a LAPIC watchdog timer. */
#ifndef PROBE_WAIT_H
#define PROBE_WAIT_H

#include <stdbool.h>

/* Watchdog period: 625000 LAPIC ticks at divide-by-16, 10 ms under KVM. */
#define WAIT_WATCHDOG_TICKS 625000u

/*
 * Wait for cond(ctx) to become true. The condition is evaluated with IF=0;
 * while it is false the CPU sleeps with "sti; hlt" (any interrupt wakes it).
 * A periodic LAPIC timer on IRQ_VEC_WATCHDOG runs meanwhile, so a lost device
 * interrupt still wakes the CPU; after `max_wakeups` watchdog ticks without
 * the condition the wait gives up (other interrupts, e.g. a flood= device's,
 * wake the CPU but do not count). Needs lapic_init(). A timer that is already
 * running (started by the caller's workload) is used as it is and left
 * running. Returns with IF=1 and the timer as it was (stopped if this call
 * started it): 0 if cond held, -1 on timeout.
 */
int wait_until(bool (*cond)(const void *ctx), const void *ctx, unsigned int max_wakeups);

#endif
