/* guest/src/lib.c - freestanding mem* and str* implementations. */
#include "lib.h"

/*
 * rep movs/stos: under PVM each CPL0 iteration is still emulated separately
 * (~1 us per iteration, measured), so the bulk moves 8 bytes per iteration
 * and only the tail is done bytewise.
 */
void *memcpy(void *dst, const void *src, size_t n)
{
    void *d = dst;
    size_t q = n >> 3, r = n & 7;

    __asm__ volatile("rep movsq" : "+D"(d), "+S"(src), "+c"(q) : : "memory");
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(r) : : "memory");
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;

    if (d <= s || d >= s + n)
        return memcpy(dst, src, n);
    /* Overlapping with dst above src: copy backwards (asm, so gcc cannot
     * turn the loop back into a memmove call). */
    d += n - 1;
    s += n - 1;
    __asm__ volatile("std; rep movsb; cld" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    void *d = dst;
    size_t q = n >> 3, r = n & 7;
    uint64_t v = (uint8_t)c * 0x0101010101010101ull;

    __asm__ volatile("rep stosq" : "+D"(d), "+c"(q) : "a"(v) : "memory");
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(r) : "a"(v) : "memory");
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;

    for (; n; n--, p++, q++)
        if (*p != *q)
            return *p - *q;
    return 0;
}

size_t strlen(const char *s)
{
    const char *p = s;

    while (*p)
        p++;
    return (size_t)(p - s);
}

size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;

    while (n < max && s[n])
        n++;
    return n;
}

int strcmp(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (; n; n--, a++, b++) {
        if (*a != *b)
            return (unsigned char)*a - (unsigned char)*b;
        if (!*a)
            break;
    }
    return 0;
}
