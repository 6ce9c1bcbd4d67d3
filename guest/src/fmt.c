/* guest/src/fmt.c - printf-style formatting (vformat, snprintf). */
#include "fmt.h"
#include "lib.h"

#include <stdint.h>

struct fmt_out {
    fmt_sink_fn sink;
    void *ctx;
    int count;
};

static void emit(struct fmt_out *o, const char *s, size_t n)
{
    if (n) {
        o->sink(o->ctx, s, n);
        o->count += (int)n;
    }
}

static void emit_pad(struct fmt_out *o, char c, int n)
{
    char pad[16];
    int i;

    for (i = 0; i < (int)sizeof(pad); i++)
        pad[i] = c;
    while (n > 0) {
        int k = n < (int)sizeof(pad) ? n : (int)sizeof(pad);
        emit(o, pad, (size_t)k);
        n -= k;
    }
}

/* Emit a field of len chars with width/justification; zero-pad goes after sign/prefix. */
static void emit_field(struct fmt_out *o, const char *prefix, const char *s,
                       size_t len, int width, int left, int zero)
{
    size_t plen = prefix ? strlen(prefix) : 0;
    int pad = width - (int)(plen + len);

    if (!left && !zero)
        emit_pad(o, ' ', pad);
    emit(o, prefix, plen);
    if (!left && zero)
        emit_pad(o, '0', pad);
    emit(o, s, len);
    if (left)
        emit_pad(o, ' ', pad);
}

/* Digits of v in base 10 or 16, written backwards ending at end; returns start. */
static char *utoa_rev(char *end, uint64_t v, unsigned base, int upper)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";

    do {
        *--end = digits[v % base];
        v /= base;
    } while (v);
    return end;
}

int vformat(fmt_sink_fn sink, void *ctx, const char *fmt, va_list ap)
{
    struct fmt_out o = { sink, ctx, 0 };
    char num[24];

    while (*fmt) {
        const char *lit = fmt;
        int left = 0, zero = 0, width = 0, lng = 0;
        const char *prefix = NULL;
        uint64_t u;
        char *p;

        while (*fmt && *fmt != '%')
            fmt++;
        emit(&o, lit, (size_t)(fmt - lit));
        if (!*fmt)
            break;
        fmt++;  /* '%' */

        for (;; fmt++) {
            if (*fmt == '-')
                left = 1;
            else if (*fmt == '0')
                zero = 1;
            else
                break;
        }
        if (*fmt == '*') {
            width = va_arg(ap, int);
            if (width < 0) {
                left = 1;
                width = -width;
            }
            fmt++;
        } else {
            while (*fmt >= '0' && *fmt <= '9')
                width = width * 10 + (*fmt++ - '0');
        }
        if (*fmt == 'z') {
            lng = 2;
            fmt++;
        } else {
            while (*fmt == 'l') {
                lng++;
                fmt++;
            }
        }

        switch (*fmt) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            emit_field(&o, NULL, s, strlen(s), width, left, 0);
            break;
        }
        case 'c':
            num[0] = (char)va_arg(ap, int);
            emit_field(&o, NULL, num, 1, width, left, 0);
            break;
        case 'd':
        case 'i': {
            int64_t v = lng ? va_arg(ap, long) : va_arg(ap, int);
            if (v < 0) {
                prefix = "-";
                u = (uint64_t)0 - (uint64_t)v;
            } else {
                u = (uint64_t)v;
            }
            p = utoa_rev(num + sizeof(num), u, 10, 0);
            emit_field(&o, prefix, p, (size_t)(num + sizeof(num) - p), width, left, zero);
            break;
        }
        case 'u':
        case 'x':
        case 'X':
            u = lng ? va_arg(ap, unsigned long) : va_arg(ap, unsigned int);
            p = utoa_rev(num + sizeof(num), u, *fmt == 'u' ? 10 : 16, *fmt == 'X');
            emit_field(&o, NULL, p, (size_t)(num + sizeof(num) - p), width, left, zero);
            break;
        case 'p':
            u = (uintptr_t)va_arg(ap, void *);
            p = utoa_rev(num + sizeof(num), u, 16, 0);
            emit_field(&o, "0x", p, (size_t)(num + sizeof(num) - p), width, left, zero);
            break;
        case '%':
            emit(&o, "%", 1);
            break;
        case '\0':
            return o.count;  /* dangling '%' */
        default:            /* unknown conversion: print '%' and the char */
            emit(&o, "%", 1);
            emit(&o, fmt, 1);
            break;
        }
        fmt++;
    }
    return o.count;
}

struct buf_sink {
    char *buf;
    size_t size;
    size_t pos;
};

static void buf_put(void *ctx, const char *s, size_t n)
{
    struct buf_sink *b = ctx;

    if (b->pos < b->size) {
        size_t room = b->size - b->pos;
        memcpy(b->buf + b->pos, s, n < room ? n : room);
    }
    b->pos += n;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct buf_sink b = { buf, size ? size - 1 : 0, 0 };
    int n = vformat(buf_put, &b, fmt, ap);

    if (size)
        buf[b.pos < b.size ? b.pos : b.size] = '\0';
    return n;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
