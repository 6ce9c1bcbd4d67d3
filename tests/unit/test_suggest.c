/* Unit tests for "did you mean": the edit distance and when a name counts as close. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "util/suggest.h"

static void test_distance(void **state)
{
	assert_int_equal(suggest_distance("disk", "disk"), 0);
	assert_int_equal(suggest_distance("dsik", "disk"), 1);   /* a swap costs 1 */
	assert_int_equal(suggest_distance("dik", "disk"), 1);
	assert_int_equal(suggest_distance("", "abc"), 3);
	assert_int_equal(suggest_distance("kitten", "sitting"), 3);
}

static void test_nearest_only_when_close(void **state)
{
	static const char *const names[] = { "disk", "user", "off", "on", NULL };
	assert_string_equal(suggest_nearest("dsik", names, 5), "disk");
	assert_string_equal(suggest_nearest("of", names, 5), "off");
	assert_null(suggest_nearest("bogus", names, 5));
	assert_null(suggest_nearest("dxxk", names, 5));
}

static void test_long_words(void **state)
{
	static const char *const names[] = { "shutdown-timeout" };
	char long_word[100];
	memset(long_word, 'x', sizeof(long_word) - 1);
	long_word[sizeof(long_word) - 1] = 0;
	assert_true(suggest_distance(long_word, "x") >= 64);
	assert_null(suggest_nearest(long_word, names, 1));
	assert_string_equal(suggest_nearest("shutdown-timout", names, 1), "shutdown-timeout");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_nearest_only_when_close),
		cmocka_unit_test(test_long_words),
	};
	return cmocka_run_group_tests_name("suggest", tests, NULL, NULL);
}
