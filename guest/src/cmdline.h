/* guest/src/cmdline.h - kernel command line token parsing ("key" and "key=value"). */
#ifndef PROBE_CMDLINE_H
#define PROBE_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>

/* Tokens are separated by spaces/tabs; cmdline may be NULL (treated as empty). */

/* True if cmdline contains the bare token `key` (not "key=..."). */
bool cmdline_has(const char *cmdline, const char *key);

/*
 * Value of the last "key=value" token: returns a pointer into cmdline and sets
 * *len to the value length (may be 0), or returns NULL if key is absent.
 */
const char *cmdline_get(const char *cmdline, const char *key, size_t *len);

/*
 * Parse the last "key=N" token as a decimal number in 0..max into *out.
 * Returns 1 if found and valid, 0 if absent (*out untouched), -1 if present
 * but not a plain decimal number or > max.
 */
int cmdline_get_uint(const char *cmdline, const char *key, unsigned long max,
                     unsigned long *out);

/*
 * Parse a comma-separated list of names (s, len bytes, e.g. the value of
 * "blk=verify,randread") into indices of `names` (nnames entries), in order,
 * at most `max` of them, into out[]. Returns the count, or -1 for an unknown
 * or empty name or more than `max` entries.
 */
int cmdline_pick_list(const char *s, size_t len, const char *const *names, unsigned int nnames,
                      unsigned char *out, unsigned int max);

#endif
