/* guest/src/fmt.h - tiny printf-style formatter with pluggable output sinks. */
#ifndef PROBE_FMT_H
#define PROBE_FMT_H

#include <stdarg.h>
#include <stddef.h>

/* Receives formatted output in chunks (s[0..n), not NUL-terminated). */
typedef void (*fmt_sink_fn)(void *ctx, const char *s, size_t n);

/*
 * Format into sink. Supports %s %c %d %i %u %x %X %p %%, flags '-' and '0',
 * a decimal or '*' width, and length modifiers l, ll, z. %p prints 0x + hex.
 * Returns the number of characters produced.
 */
int vformat(fmt_sink_fn sink, void *ctx, const char *fmt, va_list ap);

/* Like C snprintf: always NUL-terminates if size > 0, returns full length. */
int snprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

#endif
