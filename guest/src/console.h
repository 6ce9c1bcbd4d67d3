/* guest/src/console.h - formatted console output: COM1, plus an optional mirror (virtio-console). */
#ifndef PROBE_CONSOLE_H
#define PROBE_CONSOLE_H

#include <stdarg.h>
#include <stddef.h>

/* Bring up the console device(s). Call once before any output. */
void console_init(void);

/* Also hand every byte written from now on to write(s, n), after the UART
 * got it; flush() sends what the mirror still holds (console_flush). NULLs
 * remove the mirror. */
void console_set_mirror(void (*write)(const char *s, size_t n), void (*flush)(void));

/* Push out a partial line the mirror still buffers (before exiting). */
void console_flush(void);

/* Write a string verbatim. */
void console_puts(const char *s);

/* printf-style output; see fmt.h for the supported conversions. */
int cprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vcprintf(const char *fmt, va_list ap);

#endif
