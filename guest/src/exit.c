/* guest/src/exit.c - probe termination through isa-debug-exit, halt fallback. */
#include "exit.h"
#include "console.h"
#include "io.h"

void probe_exit(uint8_t code)
{
    console_flush();
    outb(DEBUG_EXIT_PORT, code);
    console_puts("probe: no debug-exit device, halting\n");
    cpu_halt_forever();
}
