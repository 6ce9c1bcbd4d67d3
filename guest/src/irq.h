/* guest/src/irq.h - vector registry: per-vector handlers, counts (total/level), the /proc/interrupts-style table. */
#ifndef PROBE_IRQ_H
#define PROBE_IRQ_H

#include <stdbool.h>
#include <stdint.h>

#include "exit.h"

/* Fixed vectors; device vectors are allocated from IRQ_VEC_DEVICE_FIRST up. */
#define IRQ_VEC_WATCHDOG        0x20
#define IRQ_VEC_DEVICE_FIRST    0x30
#define IRQ_VEC_DEVICE_LAST     0xef

/* Expected trigger mode of a vector, checked against the LAPIC TMR. */
enum irq_trigger {
    IRQ_EDGE,
    IRQ_LEVEL,
};

/* Runs in interrupt context (IF=0) before the EOI. */
typedef void (*irq_handler_fn)(void *ctx);

/* Registration flags. */
#define IRQ_F_HIDE_IDLE 0x1     /* omit from the table while count == 0 */

/* Next unused device vector (not yet registered), or -1 if none is left. */
int irq_alloc_vector(void);

/*
 * Register `fn(ctx)` for `vector` with the expected trigger mode and a
 * printf-style source description for the table (e.g. "msix 00:03.0 entry 1
 * (queue 0)"). Replaces any previous registration; counts are kept.
 */
void irq_register(uint8_t vector, irq_handler_fn fn, void *ctx,
                  enum irq_trigger trig, unsigned int flags, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* Forget the registration of `vector` (its counts and owner are reset too). */
void irq_unregister(uint8_t vector);

/* Attribute a registered vector to a device (`owner` is a stable string,
 * e.g. the PCI function's name "00:02.0"; compared by content). Kept until
 * irq_unregister. */
void irq_set_owner(uint8_t vector, const char *owner);

/* List a driven device (stable strings) for the per-device summary lines,
 * in call order; a repeated name updates its mode. Up to 8 devices. */
void irq_device(const char *name, const char *mode);

/*
 * Interrupt entry for vectors 32..255 (from isr_dispatch): reads the LAPIC
 * TMR bit of the vector, counts the interrupt (total, and level if the TMR bit
 * was set), calls the registered handler, then EOIs. The LAPIC spurious
 * vector is counted but neither handled nor EOIed.
 */
void irq_handle(uint8_t vector);

/* Total interrupts taken on `vector` so far. */
uint32_t irq_count(uint8_t vector);

/* Interrupts taken so far on the vectors of devices (those with an owner,
 * irq_set_owner): no timer, self-IPI or spurious interrupt. */
uint64_t irq_device_count(void);

/*
 * Print one line per vector that is registered (unless IRQ_F_HIDE_IDLE and
 * idle) or fired:
 *   probe: irq vec=0x30 count=16 level=0 src=<description>
 * then per device listed with irq_device, the sums over its vectors:
 *   probe: irq dev=00:02.0 mode=msix total=N level=L
 * then "probe: irq mode=<mode> total=<sum of counts> level=<sum of levels>"
 * over all printed vector lines.
 * Then checks: every fired vector was registered, and its TMR-observed
 * trigger matched the registered one (edge: level=0, level: level=count);
 * each failure prints "probe: irq check failed vec=0x.. ...".
 * Returns 0 if all checks passed, PROBE_EXIT_IRQ_CHECK otherwise.
 */
int irq_report(const char *mode);

#endif
