/* guest/src/stats.c - latency statistics (quickselect p99, log2 histogram). */
#include "stats.h"
#include "console.h"
#include "fmt.h"

void stats_reset(struct stats *s, uint64_t *buf, uint32_t cap)
{
    s->v = buf;
    s->cap = cap;
    s->n = 0;
    s->sum = 0;
    s->min = ~0ull;
    s->max = 0;
}

/* Median-of-3 quickselect: O(n) on average, which matters at ~1.7 us per
 * emulated instruction. */
uint64_t stats_select_kth(uint64_t *a, long n, long k)
{
    long lo = 0, hi = n - 1;

    while (lo < hi) {
        uint64_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi], pivot, t;
        long i = lo, j = hi;

        pivot = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return a[k];
    }
    return a[k];
}

const char *stats_format(struct stats *s, char *buf, size_t size)
{
    uint64_t m = s->n < s->cap ? s->n : s->cap, p99 = 0;

    if (m) {
        uint64_t rank = (99 * m + 99) / 100;    /* nearest rank: ceil(0.99 m) */

        p99 = stats_select_kth(s->v, (long)m, (long)rank - 1);
    }
    snprintf(buf, size, "lat_min=%lu lat_avg=%lu lat_p99=%lu lat_max=%lu",
             (unsigned long)(s->n ? s->min : 0), (unsigned long)(s->n ? s->sum / s->n : 0),
             (unsigned long)p99, (unsigned long)s->max);
    return buf;
}

void stats_print_hist(const struct stats *s, const char *name)
{
    uint32_t count[STATS_HIST_BUCKETS] = { 0 }, i, m = s->n < s->cap ? s->n : s->cap;
    unsigned int shift = 0, b;
    char line[STATS_HIST_BUCKETS * 24 + 64];
    size_t len;

    if (!m)
        return;
    /* 2^shift > min, and 2^(shift + 11) > max if that needs a larger shift
     * (then the first bucket starts at 0 and holds more than the minimum). */
    shift = s->min ? 64u - (unsigned int)__builtin_clzll(s->min) : 0;
    b = s->max ? 64u - (unsigned int)__builtin_clzll(s->max) : 0;
    if (b > STATS_HIST_BUCKETS - 1 && b - (STATS_HIST_BUCKETS - 1) > shift)
        shift = b - (STATS_HIST_BUCKETS - 1);
    if (shift > 64 - STATS_HIST_BUCKETS)
        shift = 64 - STATS_HIST_BUCKETS;
    for (i = 0; i < m; i++) {
        uint64_t x = s->v[i] >> shift;

        b = x ? 64u - (unsigned int)__builtin_clzll(x) : 0;     /* one bsr */
        count[b < STATS_HIST_BUCKETS ? b : STATS_HIST_BUCKETS - 1]++;
    }
    len = (size_t)snprintf(line, sizeof(line), "probe: %s hist", name);
    for (b = 0; b < STATS_HIST_BUCKETS && len < sizeof(line); b++)
        len += (size_t)snprintf(line + len, sizeof(line) - len, " %lu:%u",
                                (unsigned long)(1ull << (shift + b)), count[b]);
    cprintf("%s\n", line);
}
