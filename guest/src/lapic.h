/* guest/src/lapic.h - local APIC (xAPIC MMIO at 0xFEE00000): enable, EOI, TMR, one-shot watchdog timer, INIT/SIPI. */
#ifndef PROBE_LAPIC_H
#define PROBE_LAPIC_H

#include <stdbool.h>
#include <stdint.h>

#include "exit.h"

#define LAPIC_BASE              0xfee00000u
#define LAPIC_SPURIOUS_VECTOR   0xff

/*
 * Check IA32_APIC_BASE (enabled, xAPIC mode, base 0xFEE00000; a globally
 * disabled APIC at that base is enabled), then software-enable it: SVR =
 * enable | LAPIC_SPURIOUS_VECTOR, TPR = 0, LVT timer/LINT0/LINT1/error masked
 * (so 8259 ExtINT and NMI wiring left by firmware cannot interfere).
 * Idempotent. Returns 0, or -1 after printing "probe: lapic ..." if unusable.
 */
int lapic_init(void);

/* True once lapic_init() succeeded. */
bool lapic_ready(void);

/* This CPU's APIC ID (bits 31:24 of the ID register). */
uint8_t lapic_id(void);

/* Signal end of interrupt for the highest in-service vector. */
void lapic_eoi(void);

/* TMR bit of `vector`: 1 if the in-service interrupt was accepted as
 * level-triggered. Only meaningful before the EOI of that interrupt. */
bool lapic_tmr(uint8_t vector);

/* True while `vector` is requested in the LAPIC's IRR (accepted, not yet taken by the CPU). */
bool lapic_irr(uint8_t vector);

/* Send `vector` to this CPU: one ICR write, fixed delivery, edge, "self"
 * shorthand. */
void lapic_self_ipi(uint8_t vector);

/* On an AP (after INIT/SIPI; IA32_APIC_BASE enabled, LVTs masked by INIT):
 * software-enable its LAPIC, SVR = enable | LAPIC_SPURIOUS_VECTOR. */
void lapic_ap_enable(void);

/* INIT IPI to physical APIC ID `dest` (level assert, then de-assert), and
 * a STARTUP IPI with `vector` (the AP starts in real mode at vector << 12).
 * Each ICR write first waits (bounded) for the delivery status to clear. */
void lapic_send_init(uint8_t dest);
void lapic_send_sipi(uint8_t dest, uint8_t vector);

/*
 * Start the LAPIC timer in periodic mode, divide by 16, initial count
 * `count`, raising `vector` (edge). With KVM's 1 GHz APIC timer clock
 * 625000 is 10 ms. lapic_timer_stop() masks it and clears the count.
 */
void lapic_timer_start(uint8_t vector, uint32_t count);
void lapic_timer_stop(void);

/* True between lapic_timer_start() and lapic_timer_stop(). */
bool lapic_timer_running(void);

#endif
