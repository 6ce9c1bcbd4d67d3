/* Unit tests for the token bucket (Firecracker's): refill over a period, size, one-time burst, over-consumption, waits. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/token_bucket.h"

#define S 1000000000ULL
#define MS 1000000ULL

static void test_unlimited_always_passes(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 0, S, 0, 0);          /* size 0: no limit */
	for (int i = 0; i < 1000; i++)
		assert_true(tb_take(&tb, UINT64_MAX, 0));
	assert_int_equal(tb_wait_ns(&tb, UINT64_MAX, 0), 0);
	assert_false(tb_limited(&tb));
	tb_init(&tb, 100, 0, 0, 0);        /* refill time 0: no limit either, as Firecracker */
	assert_false(tb_limited(&tb));
	assert_true(tb_take(&tb, 1000, 0));
}

static void test_full_bucket_then_rate(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 1000, S, 0, 5 * S);   /* 1000 per second, starts full */
	assert_true(tb_limited(&tb));
	assert_true(tb_take(&tb, 600, 5 * S));
	assert_true(tb_take(&tb, 400, 5 * S));
	assert_false(tb_take(&tb, 1, 5 * S));
	assert_int_equal(tb_wait_ns(&tb, 1, 5 * S), 1000000); /* 1 ms per token */
	assert_int_equal(tb_wait_ns(&tb, 250, 5 * S), 250000000);
	assert_false(tb_take(&tb, 250, 5 * S + 249999999));
	assert_true(tb_take(&tb, 250, 5 * S + 250000000));
	assert_true(tb_take(&tb, 750, 6 * S));                   /* empty again */
	for (int i = 1; i < 1000; i++)
		assert_false(tb_take(&tb, 1, 6 * S + (uint64_t)i * 1000)); /* 1 us steps */
	assert_true(tb_take(&tb, 1, 6 * S + 1000 * 1000));
	assert_false(tb_take(&tb, 1, 6 * S + 1000 * 1000));
}

/* refill_time in ms as Firecracker's: 100 tokens over 250 ms is 400 per second, never more
 * than 100 held; the fraction of a token carries over. */
static void test_refill_time_and_size(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 100, 250 * MS, 0, 0);
	assert_true(tb_take(&tb, 100, 0));
	assert_int_equal(tb_wait_ns(&tb, 1, 0), 2500000);       /* 2.5 ms per token */
	assert_false(tb_take(&tb, 1, 2499999));
	assert_true(tb_take(&tb, 1, 2500000));
	assert_true(tb_take(&tb, 100, S));                        /* full: 100, no more */
	assert_false(tb_take(&tb, 1, S));
	struct token_bucket odd;                                  /* 3 tokens per 7 ms */
	tb_init(&odd, 3, 7 * MS, 0, 0);
	assert_true(tb_take(&odd, 3, 0));
	uint64_t passed = 0;
	for (uint64_t t = MS; t <= 700 * MS; t += MS)
		passed += tb_take(&odd, 1, t);
	assert_int_equal(passed, 300);                            /* exactly 3 per 7 ms */
}

static void test_one_time_burst_first_and_once(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 100, S, 1000, 0);
	assert_true(tb_take(&tb, 1000, 0));      /* all of it from the burst */
	assert_true(tb_take(&tb, 100, 0));       /* then the bucket */
	assert_false(tb_take(&tb, 1, 0));
	assert_true(tb_take(&tb, 100, 10 * S));  /* the bucket refills, the burst does not */
	assert_false(tb_take(&tb, 1, 10 * S));
	tb_init(&tb, 100, S, 50, 0);             /* a request larger than what is left of it */
	assert_true(tb_take(&tb, 120, 0));       /* 50 from the burst, 70 from the bucket */
	assert_true(tb_take(&tb, 30, 0));
	assert_false(tb_take(&tb, 1, 0));
}

/* Firecracker's over-consumption: a request larger than the bucket passes at once and the
 * bucket owes the excess: nothing passes until it is paid. */
static void test_oversized_request_passes_and_owes(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 100, S, 0, 0);
	assert_true(tb_take(&tb, 10, 0));
	assert_int_equal(tb_wait_ns(&tb, 1000, 0), 0);
	assert_true(tb_take(&tb, 1000, 0));      /* 90 from the bucket, 910 owed */
	assert_int_equal(tb_wait_ns(&tb, 1, 0), S * 911 / 100);
	assert_false(tb_take(&tb, 1000, S * 9)); /* still owing: not even another oversized one */
	assert_false(tb_take(&tb, 1, S * 911 / 100 - 1));
	assert_true(tb_take(&tb, 1, S * 911 / 100));
	assert_false(tb_take(&tb, 1, S * 911 / 100));
}

static void test_never_above_size_and_no_overflow(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 50, S / 2, 0, 0);
	assert_true(tb_take(&tb, 50, 0));
	assert_true(tb_take(&tb, 50, 1000000 * S));
	assert_false(tb_take(&tb, 1, 1000000 * S));
	struct token_bucket big;
	tb_init(&big, UINT64_MAX / 2, 1, 0, 0);
	assert_true(tb_take(&big, 10, 0));
	assert_true(tb_take(&big, 10, UINT64_MAX / 4));
}

static void test_time_going_backwards_is_ignored(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 10, S, 0, 10 * S);
	assert_true(tb_take(&tb, 10, 10 * S));
	assert_false(tb_take(&tb, 1, 5 * S));
	assert_true(tb_take(&tb, 1, 10 * S + S / 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unlimited_always_passes),
		cmocka_unit_test(test_full_bucket_then_rate),
		cmocka_unit_test(test_refill_time_and_size),
		cmocka_unit_test(test_one_time_burst_first_and_once),
		cmocka_unit_test(test_oversized_request_passes_and_owes),
		cmocka_unit_test(test_never_above_size_and_no_overflow),
		cmocka_unit_test(test_time_going_backwards_is_ignored),
	};
	return cmocka_run_group_tests_name("token_bucket", tests, NULL, NULL);
}
