/* Lab statistics: median, quartiles and range of a configuration's runs, and msivm/QEMU ratios paired by batch. */
#include "lab/lab.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Quantile p of sorted v[0..n-1], linear between the closest ranks. */
static double quantile(const double *v, unsigned n, double p)
{
	double h = (double)(n - 1) * p;
	unsigned lo = (unsigned)h;
	return lo + 1 < n ? v[lo] + (h - lo) * (v[lo + 1] - v[lo]) : v[lo];
}

struct lab_summary lab_summary_of(const double *vals, unsigned n)
{
	double v[LAB_MAX_RUNS];
	struct lab_summary s = { 0 };
	for (unsigned i = 0; i < n && s.n < LAB_MAX_RUNS; i++)
		if (!isnan(vals[i]))
			v[s.n++] = vals[i];
	if (!s.n)
		return s;
	qsort(v, s.n, sizeof(double), cmp_double);
	double sum = 0;
	for (unsigned i = 0; i < s.n; i++)
		sum += v[i];
	s.mean = sum / s.n;
	s.median = quantile(v, s.n, 0.5);
	s.q1 = quantile(v, s.n, 0.25);
	s.q3 = quantile(v, s.n, 0.75);
	s.min = v[0];
	s.max = v[s.n - 1];
	return s;
}

struct lab_summary lab_summarize(const struct lab_cell *c, unsigned metric)
{
	double v[LAB_MAX_RUNS];
	for (unsigned r = 0; r < c->nruns; r++)
		v[r] = c->runs[r].v[metric];
	return lab_summary_of(v, c->nruns);
}

struct lab_summary lab_paired_ratio(const struct lab_cell *a, const struct lab_cell *b, unsigned metric)
{
	double v[LAB_MAX_RUNS];
	unsigned n = a->nruns < b->nruns ? a->nruns : b->nruns;
	for (unsigned r = 0; r < n; r++) {
		double x = a->runs[r].v[metric], y = b->runs[r].v[metric];
		v[r] = y != 0 && !isnan(y) ? x / y : NAN;
	}
	return lab_summary_of(v, n);
}
