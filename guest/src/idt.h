/* guest/src/idt.h - 64-bit IDT: entry stubs for all 256 vectors, exception reporting. */
#ifndef PROBE_IDT_H
#define PROBE_IDT_H

#include <stdint.h>

#include "exit.h"

/*
 * Load the IDT (256 interrupt gates, DPL0, code selector 0x08, no IST,
 * pointing at the isr.S stubs; built at link time) with LIDT. IF is not
 * touched. Call once, early; exceptions are reported from then on.
 */
void idt_init(void);

/*
 * Timed entry for `vector` (up to 4 vectors at a time): its gate is pointed
 * at a stub that reads the TSC as its third instruction (after saving %rax
 * and %rdx, before the ordinary stub and isr_common) and keeps the value for
 * idt_entry_tsc(). Returns 0, or -1 when all timed stubs are in use.
 * idt_untime_vector() restores the ordinary gate. Both reload the IDT and
 * leave IF as it was.
 */
int idt_time_vector(uint8_t vector);
void idt_untime_vector(uint8_t vector);

/* TSC at entry of the latest interrupt on timed `vector` (0 if not timed or
 * not fired yet); valid inside its handler for the current interrupt. */
uint64_t idt_entry_tsc(uint8_t vector);

/*
 * Called by isr.S for every vector with frame = {error code (0 if the CPU
 * pushes none), RIP, CS, RFLAGS, RSP, SS}. Vectors 0..31 print
 * "probe: exception N rip=0x..." (plus "probe: page fault cr2=0x... error=0x..."
 * for #PF) and exit with PROBE_EXIT_EXCEPTION; others go to irq_handle().
 */
void isr_dispatch(uint64_t vector, const uint64_t *frame);

#endif
