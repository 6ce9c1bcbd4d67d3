/* guest/src/lib.h - freestanding libc subset (mem*, str*) and small helpers. */
#ifndef PROBE_LIB_H
#define PROBE_LIB_H

#include <stddef.h>
#include <stdint.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Static storage that entry.S does NOT zero (probe.ld puts .bss.noinit
 * before __bss_start): for large buffers the code initialises itself, since
 * clearing memory at CPL0 costs ~1 us per qword under PVM. The ELF loader
 * still zero-fills it (memsz > filesz), but code must not rely on that.
 */
#define __noinit __attribute__((section(".bss.noinit")))

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
