/* Token bucket: refill by elapsed time, take or report the wait. */
#include "util/token_bucket.h"

#define NS_PER_S 1000000000ULL

void tb_init(struct token_bucket *tb, uint64_t rate, uint64_t size, uint64_t now_ns)
{
	tb->rate = rate;
	tb->size = size ? size : rate;
	tb->tokens = tb->size;
	tb->last_ns = now_ns;
	tb->frac = 0;
}

static void refill(struct token_bucket *tb, uint64_t now_ns)
{
	if (now_ns <= tb->last_ns)
		return;
	uint64_t dt = now_ns - tb->last_ns;
	tb->last_ns = now_ns;
	if (tb->tokens >= tb->size) {
		tb->frac = 0;
		return;
	}
	/* rate * dt can exceed 64 bits after a long idle: the bucket is full then. */
	unsigned __int128 t = (unsigned __int128)tb->rate * dt + tb->frac;
	unsigned __int128 add = t / NS_PER_S;
	tb->frac = (uint64_t)(t % NS_PER_S);
	if (add >= tb->size - tb->tokens) {
		tb->tokens = tb->size;
		tb->frac = 0;
	} else {
		tb->tokens += (uint64_t)add;
	}
}

/* What a request of n costs against this bucket (at most a full bucket). */
static uint64_t cost(const struct token_bucket *tb, uint64_t n)
{
	return n < tb->size ? n : tb->size;
}

bool tb_take(struct token_bucket *tb, uint64_t n, uint64_t now_ns)
{
	if (!tb->rate)
		return true;
	refill(tb, now_ns);
	uint64_t c = cost(tb, n);
	if (tb->tokens < c)
		return false;
	tb->tokens -= c;
	return true;
}

uint64_t tb_wait_ns(struct token_bucket *tb, uint64_t n, uint64_t now_ns)
{
	if (!tb->rate)
		return 0;
	refill(tb, now_ns);
	uint64_t c = cost(tb, n);
	if (tb->tokens >= c)
		return 0;
	unsigned __int128 need = (unsigned __int128)(c - tb->tokens) * NS_PER_S;
	need = need > tb->frac ? need - tb->frac : 0;
	return (uint64_t)((need + tb->rate - 1) / tb->rate);
}
