/* guest/src/lib.h - freestanding libc subset (mem*, str*) and small helpers. */
#ifndef PROBE_LIB_H
#define PROBE_LIB_H

#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Standard semantics; gcc may emit calls to memcpy/memset/memmove/memcmp. */
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
/* Length of s, but at most max (s need not be NUL-terminated within max). */
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

#endif
