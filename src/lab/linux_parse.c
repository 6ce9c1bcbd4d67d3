/* Linux guest console: lines, framed "lab:" blocks, dmesg timestamps and the vsk lines of the vsock workloads. */
#include "lab/linux_parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool lp_next_line(const char **cursor, const char **line, size_t *len)
{
	const char *p = *cursor, *nl;
	size_t n;

	if (!*p)
		return false;
	nl = strchr(p, '\n');
	n = nl ? (size_t)(nl - p) : strlen(p);
	*cursor = nl ? nl + 1 : p + n;
	while (n > 0 && p[n - 1] == '\r')
		n--;
	*line = p;
	*len = n;
	return true;
}

/* Whether the line is `marker` followed by `name` (trailing blanks ignored). */
static bool is_marker(const char *line, size_t len, const char *marker, const char *name)
{
	size_t m = strlen(marker), n = strlen(name);

	while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	return len == m + n && !memcmp(line, marker, m) && !memcmp(line + m, name, n);
}

static bool starts_with(const char *line, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);
	return len >= n && !memcmp(line, prefix, n);
}

/* Whether the text has anything but white space. */
static bool has_text(const char *s)
{
	for (; *s; s++)
		if (!isspace((unsigned char)*s))
			return true;
	return false;
}

/* Copies the block's output lines from *cursor (just after its begin marker) into buf. */
static int block_body(const char *cursor, const char *name, char *buf, struct error *err)
{
	const char *line;
	size_t len;
	char *w = buf;

	while (lp_next_line(&cursor, &line, &len)) {
		if (is_marker(line, len, "lab: end ", name)) {
			*w = '\0';
			if (!has_text(buf))
				return error_set(err, -ENODATA, "console block '%s' is empty", name);
			return 0;
		}
		if (starts_with(line, len, "lab: begin "))
			return error_set(err, -EPROTO,
					 "console block '%s' is truncated: '%.*s' before 'lab: end %s'",
					 name, (int)(len > 80 ? 80 : len), line, name);
		if (starts_with(line, len, "lab| ")) {
			memcpy(w, line + 5, len - 5);
			w += len - 5;
			*w++ = '\n';
		} else if (len == 4 && starts_with(line, len, "lab|")) {
			*w++ = '\n';
		}
	}
	return error_set(err, -EPROTO, "console block '%s' is truncated: no 'lab: end %s'", name,
			 name);
}

int lp_block(const char *console, const char *name, char **out, struct error *err)
{
	const char *cursor = console, *line;
	size_t len;
	char *buf;
	int ret;

	*out = NULL;
	if (!name || !*name)
		return error_set(err, -EINVAL, "console block: no name");
	for (;;) {
		if (!lp_next_line(&cursor, &line, &len))
			return error_set(err, -ENOENT, "no console block '%s' (no 'lab: begin %s')",
					 name, name);
		if (is_marker(line, len, "lab: begin ", name))
			break;
	}
	/* The block's text is never longer than the rest of the console. */
	buf = malloc(strlen(cursor) + 1);
	if (!buf)
		return error_set(err, -ENOMEM, "console block '%s': out of memory", name);
	ret = block_body(cursor, name, buf, err);
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	return 0;
}

/* Parses "[ SECONDS]" at `p` (just past the '['): blanks, digits, optionally '.' digits, ']'.
 * Returns the position after ']', or NULL if malformed. */
static const char *parse_stamp(const char *p, const char *end, double *secs)
{
	const char *num, *q;

	while (p < end && *p == ' ')
		p++;
	num = q = p;
	while (q < end && isdigit((unsigned char)*q))
		q++;
	if (q == num)
		return NULL;
	if (q < end && *q == '.') {
		const char *frac = ++q;
		while (q < end && isdigit((unsigned char)*q))
			q++;
		if (q == frac)
			return NULL;
	}
	if (q >= end || *q != ']')
		return NULL;
	/* Only digits and one '.' up to the ']': strtod reads exactly them. */
	*secs = strtod(num, NULL);
	return q + 1;
}

/* Whether `needle` occurs in [p, end). */
static bool contains(const char *p, const char *end, const char *needle)
{
	size_t n = strlen(needle);

	for (; (size_t)(end - p) >= n; p++)
		if (!memcmp(p, needle, n))
			return true;
	return false;
}

int lp_dmesg_time(const char *text, const char *needle, double *secs, struct error *err)
{
	const char *cursor = text, *line;
	size_t len;

	if (!needle || !*needle)
		return error_set(err, -EINVAL, "dmesg time: empty needle");
	while (lp_next_line(&cursor, &line, &len)) {
		const char *end = line + len, *open = memchr(line, '[', len), *after;
		double v;

		if (!open)
			continue;
		after = parse_stamp(open + 1, end, &v);
		if (!after) {
			if (contains(open + 1, end, needle))
				return error_set(err, -EINVAL,
						 "dmesg line with '%s' has a malformed timestamp: '%.*s'",
						 needle, (int)(len > 80 ? 80 : len), line);
			continue;
		}
		if (contains(after, end, needle)) {
			*secs = v;
			return 0;
		}
	}
	return error_set(err, -ENOENT, "no dmesg line with '%s'", needle);
}

/* The value of " KEY=" in line[0, len) as a finite number >= 0; false if absent or malformed. */
static bool key_value(const char *line, size_t len, const char *key, double *v)
{
	char pat[24];
	int n = snprintf(pat, sizeof(pat), " %s=", key);
	const char *p = memmem(line, len, pat, (size_t)n), *end = line + len;
	char buf[32], *stop;
	if (!p)
		return false;
	p += n;
	size_t k = 0;
	while (p + k < end && k < sizeof(buf) - 1 && p[k] != ' ')
		k++;
	memcpy(buf, p, k);
	buf[k] = 0;
	*v = strtod(buf, &stop);
	return k && !*stop && isfinite(*v) && *v >= 0;
}

int lp_vsock_line(const char *text, struct lp_vsock *out, struct error *err)
{
	static const char *const rr_keys[] = { "count", "size", "min_us", "p50_us", "p99_us",
					       "max_us", "mean_us" };
	static const char *const bulk_keys[] = { "bytes", "secs", "mib_s" };
	const char *cursor = text ? text : "", *line;
	size_t len;
	memset(out, 0, sizeof(*out));
	while (lp_next_line(&cursor, &line, &len)) {
		bool rr = len > 3 && !memcmp(line, "rr ", 3);
		if (!rr && !(len > 5 && !memcmp(line, "bulk ", 5)))
			continue;
		double *rr_out[] = { &out->count, &out->size, &out->min_us, &out->p50_us,
				     &out->p99_us, &out->max_us, &out->mean_us };
		double *bulk_out[] = { &out->bytes, &out->secs, &out->mib_s };
		const char *const *keys = rr ? rr_keys : bulk_keys;
		double **vals = rr ? rr_out : bulk_out;
		unsigned n = rr ? 7 : 3;
		out->rr = rr;
		for (unsigned i = 0; i < n; i++)
			if (!key_value(line, len, keys[i], vals[i]))
				return error_set(err, -EINVAL, "vsk line without a valid %s=: '%.*s'",
						 keys[i], (int)(len > 120 ? 120 : len), line);
		if (rr && (!out->count || !out->size || out->min_us > out->p50_us ||
			   out->p50_us > out->p99_us || out->p99_us > out->max_us))
			return error_set(err, -EINVAL, "vsk rr line with no round trips or latencies "
					 "out of order: '%.*s'", (int)(len > 120 ? 120 : len), line);
		if (!rr && (!out->bytes || !out->secs))
			return error_set(err, -EINVAL, "vsk bulk line with nothing moved: '%.*s'",
					 (int)(len > 120 ? 120 : len), line);
		return 0;
	}
	return error_set(err, -EINVAL, "no 'rr ' or 'bulk ' line from vsk");
}
