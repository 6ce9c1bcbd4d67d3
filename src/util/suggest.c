/* "Did you mean": optimal-string-alignment distance and the nearest close name. */
#include "util/suggest.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SUGGEST_MAX_LEN 64

unsigned suggest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return SUGGEST_MAX_LEN + (unsigned)(la > lb ? la - lb : lb - la);
	/* d[i][j]: distance between the first i bytes of a and the first j of b. */
	unsigned d[SUGGEST_MAX_LEN + 1][SUGGEST_MAX_LEN + 1];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = a[i - 1] != b[j - 1];
			unsigned best = d[i - 1][j - 1] + cost;
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[la][lb];
}

const char *suggest_nearest(const char *word, const char *const *names, size_t n)
{
	size_t len = strlen(word);
	unsigned limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	const char *best = NULL;
	unsigned best_d = limit + 1;
	for (size_t i = 0; i < n; i++) {
		if (!names[i])
			continue;
		unsigned dist = suggest_distance(word, names[i]);
		bool prefix = !strncmp(names[i], word, len);
		if (dist < best_d || (dist == best_d && prefix && best && strncmp(best, word, len))) {
			best = names[i];
			best_d = dist;
		}
	}
	return best;
}

const char *suggest_hint(const char *word, const char *const *names, size_t n,
			 const char *prefix, char *buf, size_t len)
{
	const char *best = suggest_nearest(word, names, n);
	if (best)
		snprintf(buf, len, "; did you mean %s%s?", prefix, best);
	else if (len)
		buf[0] = 0;
	return buf;
}
