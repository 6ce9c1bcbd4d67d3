/* guest/src/exit.h - terminate the probe via the isa-debug-exit port. */
#ifndef PROBE_EXIT_H
#define PROBE_EXIT_H

#include <stdint.h>

#define DEBUG_EXIT_PORT 0xf4

/* Exit codes used by the probe itself (besides the exit=N value). */
#define PROBE_EXIT_BAD_ARG   2
#define PROBE_EXIT_BAD_MAGIC 3

/*
 * outb(code, DEBUG_EXIT_PORT). If that returns (no debug-exit device), print
 * "probe: no debug-exit device, halting" and halt forever with IF=0.
 */
__attribute__((noreturn)) void probe_exit(uint8_t code);

#endif
