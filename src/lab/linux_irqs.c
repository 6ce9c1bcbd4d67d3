/* Linux guest /proc/interrupts: rows per irq, level/MSI kinds, deltas between two snapshots. */
#include "lab/linux_parse.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A cursor over one line: [p, end). */
struct span {
	const char *p, *end;
};

static void skip_blanks(struct span *s)
{
	while (s->p < s->end && isspace((unsigned char)*s->p))
		s->p++;
}

/* The next blank-separated token of *s (empty at the end of the line). */
static struct span next_token(struct span *s)
{
	struct span t;

	skip_blanks(s);
	t.p = s->p;
	while (s->p < s->end && !isspace((unsigned char)*s->p))
		s->p++;
	t.end = s->p;
	return t;
}

static size_t span_len(struct span s)
{
	return (size_t)(s.end - s.p);
}

/* Copies the span into dst (cut to fit), trailing blanks dropped. */
static void copy_span(char *dst, size_t size, struct span s)
{
	size_t n;

	while (s.end > s.p && isspace((unsigned char)s.end[-1]))
		s.end--;
	n = span_len(s) < size - 1 ? span_len(s) : size - 1;
	memcpy(dst, s.p, n);
	dst[n] = '\0';
}

static bool all_digits(struct span s)
{
	if (s.p == s.end)
		return false;
	for (const char *c = s.p; c < s.end; c++)
		if (!isdigit((unsigned char)*c))
			return false;
	return true;
}

/* The "CPU0 CPU1 ..." header: the number of columns, or 0 if the line is no header. */
static unsigned header_cpus(const char *line, size_t len)
{
	struct span s = { line, line + len }, t;
	unsigned n = 0;

	for (t = next_token(&s); span_len(t) > 0; t = next_token(&s)) {
		struct span num = { t.p + 3, t.end };
		if (span_len(t) < 4 || memcmp(t.p, "CPU", 3) || !all_digits(num))
			return 0;
		n++;
	}
	return n;
}

/* The per-CPU counts of a row, summed into r->total. ERR and MIS have one global count. */
static int row_counts(struct span *s, unsigned ncpus, unsigned lineno, struct lp_irq_row *r,
		      struct error *err)
{
	bool global = !strcmp(r->irq, "ERR") || !strcmp(r->irq, "MIS");

	r->total = 0;
	for (unsigned c = 0; c < ncpus; c++) {
		struct span t = next_token(s);
		char num[24];
		uint64_t v;

		if (span_len(t) == 0 && global && c == 1)
			return 0;
		if (span_len(t) == 0)
			return error_set(err, -EINVAL,
					 "/proc/interrupts line %u (irq %s): only %u of %u CPU counts"
					 " (truncated?)", lineno, r->irq, c, ncpus);
		if (!all_digits(t) || span_len(t) >= sizeof(num))
			return error_set(err, -EINVAL,
					 "/proc/interrupts line %u (irq %s): count for CPU%u is not a"
					 " number: '%.*s'", lineno, r->irq, c,
					 (int)(span_len(t) > 40 ? 40 : span_len(t)), t.p);
		copy_span(num, sizeof(num), t);
		errno = 0;
		v = strtoull(num, NULL, 10);
		if (errno || __builtin_add_overflow(r->total, v, &r->total))
			return error_set(err, -EINVAL,
					 "/proc/interrupts line %u (irq %s): count out of range", lineno,
					 r->irq);
	}
	return 0;
}

/* After the counts of a numbered row: chip (the kernel always prints one), "HWIRQ-type" (if
 * the token is one) and names. */
static int row_chip(struct span s, unsigned lineno, struct lp_irq_row *r, struct error *err)
{
	struct span chip = next_token(&s), rest = s, hw = next_token(&rest);

	if (span_len(chip) == 0)
		return error_set(err, -EINVAL, "/proc/interrupts line %u (irq %s): no chip (truncated?)",
				 lineno, r->irq);
	copy_span(r->chip, sizeof(r->chip), chip);
	if (span_len(hw) > 0 && (isdigit((unsigned char)*hw.p) || *hw.p == '-')) {
		const char *dash = NULL;
		for (const char *c = hw.p; c < hw.end; c++)
			if (*c == '-')
				dash = c;
		copy_span(r->hwirq_type, sizeof(r->hwirq_type), hw);
		if (dash)
			copy_span(r->type, sizeof(r->type), (struct span){ dash + 1, hw.end });
		s = rest;
	}
	skip_blanks(&s);
	copy_span(r->names, sizeof(r->names), s);
	return 0;
}

/* An irq id: 1 to size-1 letters and digits ("25", "LOC"). */
static bool valid_id(struct span id, size_t size)
{
	if (span_len(id) == 0 || span_len(id) >= size)
		return false;
	for (const char *c = id.p; c < id.end; c++)
		if (!isalnum((unsigned char)*c))
			return false;
	return true;
}

/* One row: "ID: counts... [chip hwirq-type] names". */
static int parse_row(const char *line, size_t len, unsigned ncpus, unsigned lineno,
		     struct lp_irq_row *r, struct error *err)
{
	struct span s = { line, line + len }, id;
	const char *colon;
	int ret;

	memset(r, 0, sizeof(*r));
	skip_blanks(&s);
	colon = memchr(s.p, ':', span_len(s));
	id = (struct span){ s.p, colon ? colon : s.p };
	if (!valid_id(id, sizeof(r->irq)))
		return error_set(err, -EINVAL,
				 "/proc/interrupts line %u is not an interrupt row: '%.*s'", lineno,
				 (int)(len > 60 ? 60 : len), line);
	copy_span(r->irq, sizeof(r->irq), id);
	s.p = colon + 1;
	if ((ret = row_counts(&s, ncpus, lineno, r, err)))
		return ret;
	if (all_digits(id))
		return row_chip(s, lineno, r, err);
	skip_blanks(&s);
	copy_span(r->names, sizeof(r->names), s);
	return 0;
}

static bool blank(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)line[i]))
			return false;
	return true;
}

int lp_proc_interrupts(const char *text, struct lp_irq_table *t, struct error *err)
{
	const char *cursor = text, *line = NULL;
	size_t len = 0;
	unsigned lineno = 0;
	int ret;

	t->ncpus = t->n = 0;
	while (lp_next_line(&cursor, &line, &len) && (++lineno, blank(line, len)))
		;
	if (!line || blank(line, len))
		return error_set(err, -EINVAL, "/proc/interrupts: empty");
	t->ncpus = header_cpus(line, len);
	if (!t->ncpus)
		return error_set(err, -EINVAL,
				 "/proc/interrupts: no 'CPU0 ...' header (line %u: '%.*s')", lineno,
				 (int)(len > 60 ? 60 : len), line);
	while (lp_next_line(&cursor, &line, &len)) {
		lineno++;
		if (blank(line, len))
			continue;
		if (t->n == LP_IRQ_MAX)
			return error_set(err, -E2BIG, "/proc/interrupts: more than %d rows (line %u)",
					 LP_IRQ_MAX, lineno);
		if ((ret = parse_row(line, len, t->ncpus, lineno, &t->rows[t->n], err)))
			return ret;
		t->n++;
	}
	return 0;
}

bool lp_irq_is_level(const struct lp_irq_row *r)
{
	return !strcasecmp(r->type, "fasteoi") || !strcasecmp(r->type, "level");
}

bool lp_irq_is_msi(const struct lp_irq_row *r)
{
	return strstr(r->chip, "MSI") != NULL;
}

int lp_irq_delta(const struct lp_irq_table *before, const struct lp_irq_table *after,
		 const char *name_prefix, struct lp_irq_table *out, struct error *err)
{
	unsigned n = 0;

	for (unsigned i = 0; i < after->n; i++) {
		struct lp_irq_row row = after->rows[i];
		uint64_t base = 0;

		if (name_prefix && !strstr(row.names, name_prefix))
			continue;
		for (unsigned j = 0; j < before->n; j++)
			if (!strcmp(before->rows[j].irq, row.irq)) {
				base = before->rows[j].total;
				break;
			}
		if (row.total < base)
			return error_set(err, -ERANGE,
					 "irq %s (%s): count went down from %" PRIu64 " to %" PRIu64,
					 row.irq, row.names, base, row.total);
		row.total -= base;
		out->rows[n++] = row;
	}
	out->ncpus = after->ncpus;
	out->n = n;
	return 0;
}
