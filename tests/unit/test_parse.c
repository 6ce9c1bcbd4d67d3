/* Unit tests for option value parsing: sizes and bounded integers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "util/parse.h"

#define SENTINEL 0x5a5a5a5a5a5a5a5aULL

static void expect_size(const char *s, uint64_t want)
{
	uint64_t v = SENTINEL;
	int ret = parse_size(s, &v);
	if (ret != 0 || v != want)
		fail_msg("parse_size(\"%s\") = %d, %llu; want 0, %llu", s, ret,
			 (unsigned long long)v, (unsigned long long)want);
}

/* Fails with `code` and leaves the output alone. */
static void expect_size_error(const char *s, int code)
{
	uint64_t v = SENTINEL;
	int ret = parse_size(s, &v);
	if (ret != code)
		fail_msg("parse_size(\"%s\") = %d, want %d", s, ret, code);
	if (v != SENTINEL)
		fail_msg("parse_size(\"%s\") wrote %llu on error", s, (unsigned long long)v);
}

static void test_parse_size_plain_bytes(void **state)
{
	expect_size("4096", 4096);
	expect_size("0", 0);
	expect_size("18446744073709551615", UINT64_MAX);
}

static void test_parse_size_binary_suffixes(void **state)
{
	expect_size("512K", 512ULL << 10);
	expect_size("256M", 256ULL << 20);
	expect_size("1G", 1ULL << 30);
	expect_size("1T", 1ULL << 40);
}

static void test_parse_size_suffix_case_insensitive(void **state)
{
	expect_size("1g", 1ULL << 30);
	expect_size("3m", 3ULL << 20);
	expect_size("2k", 2ULL << 10);
	expect_size("1t", 1ULL << 40);
}

static void test_parse_size_optional_ib_and_b(void **state)
{
	expect_size("2MiB", 2ULL << 20);
	expect_size("2mib", 2ULL << 20);
	expect_size("2MB", 2ULL << 20);
	expect_size("4GiB", 4ULL << 30);
	expect_size("8Kb", 8ULL << 10);
}

static void test_parse_size_largest_values(void **state)
{
	/* 2^24 - 1 T is the largest T value that fits in 64 bits. */
	expect_size("16777215T", ((1ULL << 24) - 1) << 40);
	expect_size("17179869183G", ((1ULL << 34) - 1) << 30);
}

static void test_parse_size_rejects_malformed(void **state)
{
	expect_size_error("", -EINVAL);
	expect_size_error("M", -EINVAL);
	expect_size_error("12X", -EINVAL);
	expect_size_error("1.5G", -EINVAL);
	expect_size_error("-1", -EINVAL);
	expect_size_error("+1", -EINVAL);
	expect_size_error(" 1G", -EINVAL);
	expect_size_error("1G ", -EINVAL);
	expect_size_error("12MM", -EINVAL);
	expect_size_error("1GiBs", -EINVAL);
	expect_size_error("1Gi", -EINVAL);
	expect_size_error("0x10", -EINVAL);
}

static void test_parse_size_rejects_overflow(void **state)
{
	expect_size_error("99999999999999999999", -ERANGE);
	expect_size_error("18446744073709551616", -ERANGE); /* UINT64_MAX + 1 */
	expect_size_error("17179869184G", -ERANGE);         /* exactly 2^64 */
	expect_size_error("16777216T", -ERANGE);
	expect_size_error("18446744073709551615K", -ERANGE);
}

static void test_parse_uint_in_bounds(void **state)
{
	uint64_t v = SENTINEL;
	assert_int_equal(parse_uint("1", 1, 64, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(parse_uint("64", 1, 64, &v), 0);
	assert_int_equal(v, 64);
	assert_int_equal(parse_uint("0", 0, 0, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_uint("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
}

static void test_parse_uint_out_of_bounds_is_erange(void **state)
{
	uint64_t v = SENTINEL;
	assert_int_equal(parse_uint("0", 1, 64, &v), -ERANGE);
	assert_int_equal(parse_uint("65", 1, 64, &v), -ERANGE);
	assert_int_equal(parse_uint("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	assert_true(v == SENTINEL);
}

static void test_parse_uint_malformed_is_einval(void **state)
{
	uint64_t v = SENTINEL;
	assert_int_equal(parse_uint("", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_uint("-1", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_uint("12a", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_uint("4K", 0, 1 << 20, &v), -EINVAL); /* no suffixes */
	assert_int_equal(parse_uint(" 5", 0, 100, &v), -EINVAL);
	assert_int_equal(parse_uint("5 ", 0, 100, &v), -EINVAL);
	assert_true(v == SENTINEL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size_plain_bytes),
		cmocka_unit_test(test_parse_size_binary_suffixes),
		cmocka_unit_test(test_parse_size_suffix_case_insensitive),
		cmocka_unit_test(test_parse_size_optional_ib_and_b),
		cmocka_unit_test(test_parse_size_largest_values),
		cmocka_unit_test(test_parse_size_rejects_malformed),
		cmocka_unit_test(test_parse_size_rejects_overflow),
		cmocka_unit_test(test_parse_uint_in_bounds),
		cmocka_unit_test(test_parse_uint_out_of_bounds_is_erange),
		cmocka_unit_test(test_parse_uint_malformed_is_einval),
	};
	return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
