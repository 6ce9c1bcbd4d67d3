/* Hex text for binary blobs (a snapshot's kernel structures in its JSON). */
#ifndef MSIVM_UTIL_HEX_H
#define MSIVM_UTIL_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Writes the 2*len lowercase hex digits of buf[0..len) and a NUL to out (2*len+1 bytes). */
void hex_encode(const void *buf, size_t len, char *out);

/* Reads exactly 2*len hex digits of `text` (its length `tlen`) into buf[0..len).
 * Returns 0, or -EINVAL if the length differs or a character is not a hex digit. */
int hex_decode(const char *text, size_t tlen, void *buf, size_t len);

#endif
