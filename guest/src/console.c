/* guest/src/console.c - console output: formats with vformat, writes to the UART (and a mirror, e.g. virtio-console). */
#include "console.h"
#include "fmt.h"
#include "lib.h"
#include "uart.h"

static void (*mirror_write)(const char *s, size_t n);
static void (*mirror_flush)(void);

void console_init(void)
{
    uart_init();
}

void console_set_mirror(void (*write)(const char *s, size_t n), void (*flush)(void))
{
    mirror_write = write;
    mirror_flush = flush;
}

void console_flush(void)
{
    if (mirror_flush)
        mirror_flush();
}

static void console_write(const char *s, size_t n)
{
    uart_write(s, n);
    if (mirror_write)
        mirror_write(s, n);
}

static void console_sink(void *ctx, const char *s, size_t n)
{
    (void)ctx;
    console_write(s, n);
}

void console_puts(const char *s)
{
    console_write(s, strlen(s));
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
