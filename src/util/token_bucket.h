/* Token bucket: Firecracker's (a size refilled over a period, a one-time burst) -> may this much pass now, and when. */
#ifndef MSIVM_UTIL_TOKEN_BUCKET_H
#define MSIVM_UTIL_TOKEN_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

/* A bucket of `size` tokens that refills continuously from empty to full in `refill_ns`
 * (size tokens per refill_ns), never above size, plus `one_time_burst` extra tokens that are
 * spent first and never come back. It starts full. A size or refill_ns of 0 means no limit.
 * A request larger than what the bucket holds and larger than its size passes at once
 * (Firecracker's over-consumption): it empties the bucket and leaves a debt that the refill
 * pays before anything else passes. Time is given by the caller (CLOCK_MONOTONIC ns), so the
 * bucket is pure arithmetic and testable. */
struct token_bucket {
	uint64_t size;            /* capacity and tokens per refill_ns; 0: unlimited */
	uint64_t refill_ns;
	uint64_t burst;           /* what is left of the one-time burst */
	uint64_t tokens;
	uint64_t debt;            /* tokens owed by an over-consumption */
	uint64_t last_ns;         /* time of the last refill */
	uint64_t frac;            /* sub-token remainder of the last refill, in token-ns */
};

/* A full bucket at `now_ns` (see above). */
void tb_init(struct token_bucket *tb, uint64_t size, uint64_t refill_ns, uint64_t one_time_burst,
	     uint64_t now_ns);

/* True when the bucket limits anything. */
bool tb_limited(const struct token_bucket *tb);

/* Nanoseconds from `now_ns` until tb_take(n) would succeed (0: now). */
uint64_t tb_wait_ns(struct token_bucket *tb, uint64_t n, uint64_t now_ns);

/* Takes `n` tokens if tb_wait_ns says 0 (after refilling to `now_ns`) and returns true;
 * otherwise takes nothing and returns false. Always true for an unlimited bucket. */
bool tb_take(struct token_bucket *tb, uint64_t n, uint64_t now_ns);

#endif
