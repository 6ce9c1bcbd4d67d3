/* pvpanic: the ISA panic device (port 0x505, ACPI QEMU0001) a Linux guest writes when it panics. */
#ifndef MSIVM_DEVICES_PVPANIC_H
#define MSIVM_DEVICES_PVPANIC_H

#include "bus/bus.h"

#define PVPANIC_PORT 0x505
#define PVPANIC_SIZE 1
#define PVPANIC_PANICKED     0x1u /* the guest panicked */
#define PVPANIC_CRASH_LOADED 0x2u /* the guest loaded a crash kernel (kdump) and goes on */

/* What the guest's writes are told to: on_panic once per PANICKED write. */
struct pvpanic {
	void (*on_panic)(void *opaque);
	void *opaque;
	unsigned crash_loaded;   /* CRASH_LOADED writes seen (logged, the guest goes on) */
};

/* Handlers for the one port: reads give the events msivm understands (PANICKED |
 * CRASH_LOADED), a write reports them; unknown bits are ignored (logged once). */
extern const struct bus_ops pvpanic_ops;

#endif
