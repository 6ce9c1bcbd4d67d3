/* Token bucket: a rate (per second) and a burst size -> may this much pass now, and when. */
#ifndef MSIVM_UTIL_TOKEN_BUCKET_H
#define MSIVM_UTIL_TOKEN_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

/* Tokens refill continuously at `rate` per second up to `size`. A rate of 0
 * means no limit. Time is given by the caller (CLOCK_MONOTONIC ns), so the
 * bucket is pure arithmetic and testable. */
struct token_bucket {
	uint64_t rate;      /* tokens per second, 0: unlimited */
	uint64_t size;      /* burst: the most tokens held */
	uint64_t tokens;
	uint64_t last_ns;   /* time of the last refill */
	uint64_t frac;      /* sub-token remainder of the last refill, in token-nanoseconds */
};

/* A full bucket at `now_ns`; size 0 means one second's worth (`rate`). */
void tb_init(struct token_bucket *tb, uint64_t rate, uint64_t size, uint64_t now_ns);

/* Takes `n` tokens if the bucket holds them (after refilling to `now_ns`)
 * and returns true; otherwise takes nothing and returns false. A request
 * larger than the bucket passes once the bucket is full, which it empties.
 * Always true for an unlimited bucket. */
bool tb_take(struct token_bucket *tb, uint64_t n, uint64_t now_ns);

/* Nanoseconds from `now_ns` until tb_take(n) would succeed (0: now). */
uint64_t tb_wait_ns(struct token_bucket *tb, uint64_t n, uint64_t now_ns);

#endif
