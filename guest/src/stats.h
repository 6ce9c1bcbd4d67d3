/* guest/src/stats.h - latency samples: min/avg/p99/max and a log2 histogram, printed in the probe's result format. */
#ifndef PROBE_STATS_H
#define PROBE_STATS_H

#include <stddef.h>
#include <stdint.h>

#define STATS_HIST_BUCKETS  12

/* Samples (TSC cycles) in caller-provided storage; min/sum/max over all
 * samples added, p99 and the histogram over the first `cap` kept. */
struct stats {
    uint64_t *v;
    uint32_t cap, n;
    uint64_t sum, min, max;
};

void stats_reset(struct stats *s, uint64_t *buf, uint32_t cap);

static inline void stats_add(struct stats *s, uint64_t x)
{
    if (s->n < s->cap)
        s->v[s->n] = x;
    s->n++;
    s->sum += x;
    if (x < s->min)
        s->min = x;
    if (x > s->max)
        s->max = x;
}

/* k-th smallest of a[0..n) (n >= 1, k < n); reorders a. Quickselect. */
uint64_t stats_select_kth(uint64_t *a, long n, long k);

/*
 * "lat_min=A lat_avg=B lat_p99=C lat_max=D" into buf (all 0 without
 * samples); p99 by nearest rank, ceil(0.99 n)-th smallest of the kept
 * samples. Reorders the kept samples. Returns buf.
 */
const char *stats_format(struct stats *s, char *buf, size_t size);

/*
 * "probe: <name> hist U1:C1 U2:C2 ... U12:C12": 12 power-of-two buckets,
 * bucket i counting the samples in [U(i-1), U(i)) (U(0) = 0), U(i) = 2 *
 * U(i-1). U1 is the power of two just above the minimum, raised if needed
 * so that U12 > max (every sample is counted; the first bucket then holds
 * everything below U1). Nothing is printed without samples. The order of
 * the samples does not matter (call before or after stats_format).
 */
void stats_print_hist(const struct stats *s, const char *name);

#endif
