/* Unit tests for the token bucket: refill by time, burst size, oversized requests, waits. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "util/token_bucket.h"

#define S 1000000000ULL

static void test_unlimited_always_passes(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 0, 0, 0);
	for (int i = 0; i < 1000; i++)
		assert_true(tb_take(&tb, UINT64_MAX, 0));
	assert_int_equal(tb_wait_ns(&tb, UINT64_MAX, 0), 0);
}

static void test_burst_then_rate(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 1000, 0, 5 * S);      /* 1000/s, one second's burst */
	assert_true(tb_take(&tb, 600, 5 * S));
	assert_true(tb_take(&tb, 400, 5 * S));
	assert_false(tb_take(&tb, 1, 5 * S));
	assert_int_equal(tb_wait_ns(&tb, 1, 5 * S), 1000000); /* 1 ms per token */
	assert_int_equal(tb_wait_ns(&tb, 250, 5 * S), 250000000);
	assert_false(tb_take(&tb, 250, 5 * S + 249999999));
	assert_true(tb_take(&tb, 250, 5 * S + 250000000));
	/* Fractions of a token are not lost across small steps. */
	assert_true(tb_take(&tb, 750, 6 * S));                   /* empty again */
	for (int i = 1; i < 1000; i++)
		assert_false(tb_take(&tb, 1, 6 * S + (uint64_t)i * 1000)); /* 1 us steps */
	assert_true(tb_take(&tb, 1, 6 * S + 1000 * 1000));
	assert_false(tb_take(&tb, 1, 6 * S + 1000 * 1000));
}

static void test_never_above_size(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 100, 50, 0);
	assert_true(tb_take(&tb, 50, 0));
	/* A long idle (and a huge rate * time product) refills to the size only. */
	assert_true(tb_take(&tb, 50, 1000000 * S));
	assert_false(tb_take(&tb, 1, 1000000 * S));
	struct token_bucket big;
	tb_init(&big, UINT64_MAX / 2, 10, 0);
	assert_true(tb_take(&big, 10, 0));
	assert_true(tb_take(&big, 10, UINT64_MAX / 4));
}

static void test_oversized_request_needs_a_full_bucket(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 100, 100, 0);
	assert_true(tb_take(&tb, 10, 0));
	assert_false(tb_take(&tb, 1000, 0));     /* costs a full bucket: 100 */
	assert_int_equal(tb_wait_ns(&tb, 1000, 0), S / 10);
	assert_true(tb_take(&tb, 1000, S / 10));
	assert_false(tb_take(&tb, 1, S / 10));
}

static void test_time_going_backwards_is_ignored(void **state)
{
	struct token_bucket tb;
	tb_init(&tb, 10, 10, 10 * S);
	assert_true(tb_take(&tb, 10, 10 * S));
	assert_false(tb_take(&tb, 1, 5 * S));
	assert_true(tb_take(&tb, 1, 10 * S + S / 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unlimited_always_passes),
		cmocka_unit_test(test_burst_then_rate),
		cmocka_unit_test(test_never_above_size),
		cmocka_unit_test(test_oversized_request_needs_a_full_bucket),
		cmocka_unit_test(test_time_going_backwards_is_ignored),
	};
	return cmocka_run_group_tests_name("token_bucket", tests, NULL, NULL);
}
