/* "Did you mean": the nearest of a few known names to a misspelt one, by edit distance. */
#ifndef MSIVM_UTIL_SUGGEST_H
#define MSIVM_UTIL_SUGGEST_H

#include <stddef.h>

/* Edit distance between a and b: insertions, deletions, substitutions and
 * swaps of two neighbouring characters each cost 1 (optimal string
 * alignment). Strings longer than 64 bytes count as far from everything
 * (returns 64 or more). */
unsigned suggest_distance(const char *a, const char *b);

/* The name of `names[0..n)` (NULL entries skipped) nearest to `word`, or
 * NULL when none is close: a distance of at most 1 for words of up to 4
 * characters, 2 up to 8, 3 beyond. Ties go to a name that starts with `word`, then to the
 * earlier name. */
const char *suggest_nearest(const char *word, const char *const *names, size_t n);

/* Writes "; did you mean PREFIXNAME?" (prefix such as "--") into buf when one of
 * names[0..n) (NULL entries skipped) is close to word, else "". Returns buf. */
const char *suggest_hint(const char *word, const char *const *names, size_t n,
			 const char *prefix, char *buf, size_t len);

#endif
