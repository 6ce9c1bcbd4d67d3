/* guest/src/console.h - formatted console output (currently COM1 only). */
#ifndef PROBE_CONSOLE_H
#define PROBE_CONSOLE_H

#include <stdarg.h>
#include <stddef.h>

/* Bring up the console device(s). Call once before any output. */
void console_init(void);

/* Write a string verbatim. */
void console_puts(const char *s);

/* printf-style output; see fmt.h for the supported conversions. */
int cprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vcprintf(const char *fmt, va_list ap);

#endif
