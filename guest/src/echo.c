/* guest/src/echo.c - serial echo: COM1 input lines printed back on COM1. */
#include "echo.h"

#include <stdint.h>

#include "cmdline.h"
#include "console.h"
#include "io.h"
#include "uart.h"

#define LSR        (UART_COM1_BASE + 5)
#define LSR_DR     0x01
#define LINE_MAX   120

int probe_echo(const char *cmdline)
{
    if (!cmdline_has(cmdline, "echo"))
        return 0;
    char line[LINE_MAX + 1];
    unsigned len = 0;
    console_puts("probe: echo ready\n");
    console_flush();
    for (;;) {
        if (!(inb(LSR) & LSR_DR)) {
            cpu_relax();
            continue;
        }
        char c = (char)inb(UART_COM1_BASE);
        if (c != '\r' && c != '\n') {
            if (len < LINE_MAX)
                line[len++] = c;
            continue;
        }
        if (!len)
            continue;
        line[len] = 0;
        cprintf("probe: echo %s\n", line);
        console_flush();
        if (len == 4 && line[0] == 'q' && line[1] == 'u' && line[2] == 'i' && line[3] == 't')
            return 0;
        len = 0;
    }
}
