/* guest/src/power.h - end the probe by a power request (ACPI S5, ACPI reset, i8042 pulse, triple fault). */
#ifndef PROBE_POWER_H
#define PROBE_POWER_H

/*
 * `power=off|acpi-reset|kbd-reset|triple` on the command line: instead of
 * debug-exit, end the run the way an OS powers off or reboots a PC, using
 * msivm's fixed ports (the FADT of msivm describes them; the probe does not
 * parse ACPI): sleep control 0x600 (SLP_TYP 5 | SLP_EN), reset register 0x602
 * (value 1), i8042 command 0xFE to port 0x64, or an exception with an empty
 * IDT. Prints "probe: power=<what>" first. Returns only when the token is
 * absent (0) or the request had no effect ("probe: power=<what> had no
 * effect", PROBE_EXIT_POWER); a bad value returns PROBE_EXIT_BAD_ARG.
 */
int probe_power(const char *cmdline);

/*
 * `button=off|ignore` on the command line: listen for msivm's ACPI power
 * button as an OS would once its GED driver binds (IOAPIC pin 5, edge,
 * unmasked), print "probe: button=<what>: waiting for the power button",
 * then for `off` wait (60 s at most) for the press and power off by ACPI S5
 * ("probe: power button pressed: powering off"); for `ignore` sleep forever
 * (the press is taken and ignored). Returns 0 when the token is absent,
 * PROBE_EXIT_POWER when no press came or the power-off had no effect,
 * PROBE_EXIT_BAD_ARG for a bad value.
 */
int probe_button(const char *cmdline);

#endif
