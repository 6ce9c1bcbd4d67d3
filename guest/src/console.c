/* guest/src/console.c - console output: formats with vformat, writes to the UART. */
#include "console.h"
#include "fmt.h"
#include "lib.h"
#include "uart.h"

void console_init(void)
{
    uart_init();
}

static void console_sink(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    uart_write(s, n);
}

void console_puts(const char *s)
{
    uart_write(s, strlen(s));
}

int vcprintf(const char *fmt, va_list ap)
{
    return vformat(console_sink, NULL, fmt, ap);
}

int cprintf(const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vcprintf(fmt, ap);
    va_end(ap);
    return n;
}
