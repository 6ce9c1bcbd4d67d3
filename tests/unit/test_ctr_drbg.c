/* Unit tests for the CTR_DRBG (AES-256, no df): known answers, the request cap, reseeding. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "util/ctr_drbg.h"
#include "util/hex.h"

static void seed_0_to_47(uint8_t seed[CTR_DRBG_SEED_BYTES])
{
	for (int i = 0; i < CTR_DRBG_SEED_BYTES; i++)
		seed[i] = (uint8_t)i;
}

static void expect_hex(const uint8_t *got, size_t n, const char *want_hex)
{
	uint8_t want[64];
	assert_true(n <= sizeof(want) && strlen(want_hex) == 2 * n);
	assert_int_equal(hex_decode(want_hex, 2 * n, want, n), 0);
	assert_memory_equal(got, want, n);
}

/* The known answers of NIST's AES256_CTR_DRBG as the post-quantum KAT generators use it
 * (entropy 00 01 .. 2f, no personalization): two generate calls of 48 bytes. */
static void test_known_answers(void **state)
{
	uint8_t seed[CTR_DRBG_SEED_BYTES], out[48];
	struct ctr_drbg d;
	seed_0_to_47(seed);
	ctr_drbg_instantiate(&d, seed);
	assert_int_equal(ctr_drbg_generate(&d, out, sizeof(out)), sizeof(out));
	expect_hex(out, 48, "061550234d158c5ec95595fe04ef7a25767f2e24cc2bc479"
			    "d09d86dc9abcfde7056a8c266f9ef97ed08541dbd2e1ffa1");
	assert_int_equal(ctr_drbg_generate(&d, out, sizeof(out)), sizeof(out));
	expect_hex(out, 48, "d81c4d8d734fcbfbeade3d3f8a039faa2a2c9957e835ad55"
			    "b22e75bf57bb556ac81adde6aeeb4a5a875c3bfcadfa958f");
	ctr_drbg_wipe(&d);
}

/* A partial last block takes the block's first bytes: 40 bytes are the first 40 of 48. */
static void test_partial_block(void **state)
{
	uint8_t seed[CTR_DRBG_SEED_BYTES], out[40];
	struct ctr_drbg d;
	seed_0_to_47(seed);
	ctr_drbg_instantiate(&d, seed);
	assert_int_equal(ctr_drbg_generate(&d, out, sizeof(out)), sizeof(out));
	expect_hex(out, 40, "061550234d158c5ec95595fe04ef7a25767f2e24cc2bc479"
			    "d09d86dc9abcfde7056a8c266f9ef97e");
}

/* One call gives at most CTR_DRBG_MAX_REQUEST bytes and writes no further. */
static void test_request_cap(void **state)
{
	static uint8_t buf[CTR_DRBG_MAX_REQUEST + 64];
	uint8_t seed[CTR_DRBG_SEED_BYTES];
	struct ctr_drbg d;
	seed_0_to_47(seed);
	ctr_drbg_instantiate(&d, seed);
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(ctr_drbg_generate(&d, buf, sizeof(buf)), CTR_DRBG_MAX_REQUEST);
	for (size_t i = CTR_DRBG_MAX_REQUEST; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0xa5);
}

/* Reseeding changes the stream; the same seed and reseed give the same stream again. */
static void test_reseed(void **state)
{
	uint8_t seed[CTR_DRBG_SEED_BYTES], e[CTR_DRBG_SEED_BYTES], a[32], b[32], c[32];
	struct ctr_drbg d;
	seed_0_to_47(seed);
	memset(e, 0x5c, sizeof(e));
	ctr_drbg_instantiate(&d, seed);
	ctr_drbg_generate(&d, a, sizeof(a));
	ctr_drbg_reseed(&d, e);
	ctr_drbg_generate(&d, b, sizeof(b));
	ctr_drbg_instantiate(&d, seed);
	ctr_drbg_generate(&d, c, sizeof(c));
	assert_memory_equal(a, c, sizeof(a));
	ctr_drbg_generate(&d, c, sizeof(c)); /* the next block without the reseed */
	assert_memory_not_equal(b, c, sizeof(b));
	ctr_drbg_instantiate(&d, seed);
	ctr_drbg_generate(&d, c, sizeof(c));
	ctr_drbg_reseed(&d, e);
	ctr_drbg_generate(&d, c, sizeof(c));
	assert_memory_equal(b, c, sizeof(b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_answers),
		cmocka_unit_test(test_partial_block),
		cmocka_unit_test(test_request_cap),
		cmocka_unit_test(test_reseed),
	};
	return cmocka_run_group_tests_name("ctr_drbg", tests, NULL, NULL);
}
