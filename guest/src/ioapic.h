/* guest/src/ioapic.h - I/O APIC at 0xFEC00000: program and mask redirection entries. */
#ifndef PROBE_IOAPIC_H
#define PROBE_IOAPIC_H

#include <stdbool.h>
#include <stdint.h>

#define IOAPIC_BASE 0xfec00000u

/* Number of redirection entries (pins), from the version register. */
unsigned int ioapic_pins(void);

/*
 * Route `pin` to `vector`: fixed delivery, physical destination APIC ID
 * `dest`, level- or edge-triggered, active-high or active-low, unmasked.
 * The entry is written masked first and unmasked last. Returns 0, or -1 if
 * pin >= ioapic_pins().
 */
int ioapic_route(unsigned int pin, uint8_t vector, bool level, bool active_low,
                 uint8_t dest);

/* Set the mask bit of `pin` (no-op for pins out of range). */
void ioapic_mask(unsigned int pin);

#endif
