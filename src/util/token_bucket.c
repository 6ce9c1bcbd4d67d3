/* Token bucket: refill by elapsed time (the debt first), take from the one-time burst then the bucket, or report the wait. */
#include "util/token_bucket.h"

void tb_init(struct token_bucket *tb, uint64_t size, uint64_t refill_ns, uint64_t one_time_burst,
	     uint64_t now_ns)
{
	bool on = size && refill_ns;
	*tb = (struct token_bucket){ .size = on ? size : 0, .refill_ns = on ? refill_ns : 0,
				     .burst = on ? one_time_burst : 0, .tokens = on ? size : 0,
				     .last_ns = now_ns };
}

bool tb_limited(const struct token_bucket *tb)
{
	return tb->size != 0;
}

static void refill(struct token_bucket *tb, uint64_t now_ns)
{
	if (now_ns <= tb->last_ns)
		return;
	uint64_t dt = now_ns - tb->last_ns;
	tb->last_ns = now_ns;
	if (tb->tokens >= tb->size && !tb->debt) {
		tb->frac = 0;
		return;
	}
	/* size * dt can exceed 64 bits after a long idle: the bucket is full then. */
	unsigned __int128 t = (unsigned __int128)tb->size * dt + tb->frac;
	unsigned __int128 add = t / tb->refill_ns;
	tb->frac = (uint64_t)(t % tb->refill_ns);
	if (add <= tb->debt) {
		tb->debt -= (uint64_t)add;
		return;
	}
	add -= tb->debt;
	tb->debt = 0;
	if (add >= tb->size - tb->tokens) {
		tb->tokens = tb->size;
		tb->frac = 0;
	} else {
		tb->tokens += (uint64_t)add;
	}
}

/* What is left of n after the one-time burst (which is not spent here). */
static uint64_t after_burst(const struct token_bucket *tb, uint64_t n)
{
	return n > tb->burst ? n - tb->burst : 0;
}

uint64_t tb_wait_ns(struct token_bucket *tb, uint64_t n, uint64_t now_ns)
{
	if (!tb->size)
		return 0;
	refill(tb, now_ns);
	uint64_t c = after_burst(tb, n);
	if (!tb->debt && (c <= tb->tokens || c > tb->size)) /* passes, or over-consumes */
		return 0;
	/* Tokens to come: the debt, then what c lacks (nothing when c over-consumes again). */
	uint64_t lack = c > tb->size ? 0 : c > tb->tokens ? c - tb->tokens : 0;
	unsigned __int128 need = ((unsigned __int128)tb->debt + lack) * tb->refill_ns;
	need = need > tb->frac ? need - tb->frac : 0;
	return (uint64_t)((need + tb->size - 1) / tb->size);
}

bool tb_take(struct token_bucket *tb, uint64_t n, uint64_t now_ns)
{
	if (!tb->size)
		return true;
	if (tb_wait_ns(tb, n, now_ns))
		return false;
	uint64_t c = after_burst(tb, n);
	tb->burst -= n - c;
	if (c <= tb->tokens) {
		tb->tokens -= c;
	} else { /* over-consumption: empty the bucket, owe the rest */
		tb->debt = c - tb->tokens;
		tb->tokens = 0;
	}
	return true;
}
