/* Power requests: what a guest-facing power device (ACPI PM registers, i8042) asks of the VM. */
#ifndef MSIVM_DEVICES_POWER_H
#define MSIVM_DEVICES_POWER_H

enum power_request {
	POWER_OFF,    /* the guest entered S5: stop, exit 0 */
	POWER_RESET,  /* the guest asked for a reset: reboot in place (or stop with --no-reboot) */
};

/* Where a power device sends its requests. `request` runs on the vCPU thread
 * that made the access; `why` is a static string for the log ("ACPI reset
 * register", ...). */
struct power_sink {
	void (*request)(void *opaque, enum power_request what, const char *why);
	void *opaque;
};

#endif
