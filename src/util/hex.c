/* Hex text for binary blobs: encode, and a strict decode (length and digits checked). */
#include "util/hex.h"

#include <errno.h>

void hex_encode(const void *buf, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	const uint8_t *p = buf;
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = '\0';
}

static int nibble(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hex_decode(const char *text, size_t tlen, void *buf, size_t len)
{
	if (tlen != 2 * len)
		return -EINVAL;
	uint8_t *p = buf;
	for (size_t i = 0; i < len; i++) {
		int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		p[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}
