/* Parsing of option values: strict, overflow-checked, no silent truncation. */
#include "util/parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Reads leading decimal digits; returns the number of digits or -ERANGE. */
static int read_digits(const char *s, uint64_t *v)
{
	int n = 0;
	*v = 0;
	for (; isdigit((unsigned char)s[n]); n++) {
		uint64_t d = (uint64_t)(s[n] - '0');
		if (*v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		*v = *v * 10 + d;
	}
	return n;
}

int parse_size(const char *s, uint64_t *out)
{
	uint64_t v;
	int n = read_digits(s, &v);
	if (n < 0)
		return n;
	if (n == 0)
		return -EINVAL;
	const char *suf = s + n;
	unsigned shift = 0;
	switch (toupper((unsigned char)*suf)) {
	case '\0': break;
	case 'K': shift = 10; suf++; break;
	case 'M': shift = 20; suf++; break;
	case 'G': shift = 30; suf++; break;
	case 'T': shift = 40; suf++; break;
	default: return -EINVAL;
	}
	if (*suf && strcasecmp(suf, "iB") != 0 && strcasecmp(suf, "B") != 0)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int n = read_digits(s, &v);
	if (n < 0)
		return n;
	if (n == 0 || s[n] != '\0')
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_word(const char *s, const char *const *names, size_t n, unsigned *out)
{
	for (size_t i = 0; i < n; i++) {
		if (names[i] && !strcmp(s, names[i])) {
			*out = (unsigned)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *size_text(uint64_t v, char buf[SIZE_TEXT_MAX])
{
	static const char suffix[] = "KMGT";
	int shift = -1;
	for (int i = 3; i >= 0 && v; i--) {
		if (!(v & ((1ULL << (10 * (i + 1))) - 1))) {
			shift = i;
			break;
		}
	}
	if (shift < 0)
		snprintf(buf, SIZE_TEXT_MAX, "%llu", (unsigned long long)v);
	else
		snprintf(buf, SIZE_TEXT_MAX, "%llu%c", (unsigned long long)(v >> (10 * (shift + 1))),
			 suffix[shift]);
	return buf;
}
