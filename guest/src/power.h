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

#endif
