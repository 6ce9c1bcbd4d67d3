/* Parsing of user-supplied option values: sizes and bounded integers. */
#ifndef MSIVM_UTIL_PARSE_H
#define MSIVM_UTIL_PARSE_H

#include <stddef.h>
#include <stdint.h>

/* Parses a size such as "256M", "1G", "512K" or "4096" (bytes; suffixes are
 * binary: K=2^10, M=2^20, G=2^30, T=2^40, case-insensitive, optional "iB"/"B").
 * Returns 0 and *out, or -EINVAL for a malformed value, -ERANGE on overflow. */
int parse_size(const char *s, uint64_t *out);

/* Parses a decimal integer in [min, max]. Returns 0, -EINVAL or -ERANGE. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* Parses one of an enumeration's spellings: names[v] is value v's (NULL: none). Returns 0 and
 * *out = v, or -EINVAL when s is none of them. */
int parse_word(const char *s, const char *const *names, size_t n, unsigned *out);

#define SIZE_TEXT_MAX 24

/* Formats a byte count with the largest binary suffix that divides it ("256M", "1G",
 * "4100K", "1000"); parse_size reads it back. Returns buf. */
const char *size_text(uint64_t v, char buf[SIZE_TEXT_MAX]);

#endif
