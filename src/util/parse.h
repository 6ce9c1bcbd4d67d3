/* Parsing of user-supplied option values: sizes and bounded integers. */
#ifndef MSIVM_UTIL_PARSE_H
#define MSIVM_UTIL_PARSE_H

#include <stdint.h>

/* Parses a size such as "256M", "1G", "512K" or "4096" (bytes; suffixes are
 * binary: K=2^10, M=2^20, G=2^30, T=2^40, case-insensitive, optional "iB"/"B").
 * Returns 0 and *out, or -EINVAL for a malformed value, -ERANGE on overflow. */
int parse_size(const char *s, uint64_t *out);

/* Parses a decimal integer in [min, max]. Returns 0, -EINVAL or -ERANGE. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif
