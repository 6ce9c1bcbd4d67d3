/* Unit tests for the CPUID filter: APIC IDs and the --cpuid-hide list (parse and hide). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/cpuid.h"

#define NENT 10
#define ALL  0xffffffffu

struct table {
	struct kvm_cpuid2 c;
	struct kvm_cpuid_entry2 e[NENT];
};

/* A supported set with every feature bit on: leaves 1, 7.0, 7.1, 0xD.0, 0xD.1, 0xB. */
static struct table *make_table(void)
{
	struct table *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	struct kvm_cpuid_entry2 init[] = {
		{ .function = 0, .eax = 0xd },
		{ .function = 1, .eax = 0x800f12, .ebx = 0x00010800, .ecx = ALL & ~(1u << 31), .edx = ALL },
		{ .function = 7, .index = 0, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .eax = 1, .ebx = ALL, .ecx = ALL, .edx = ALL },
		{ .function = 7, .index = 1, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .ebx = ALL, .ecx = ALL },
		{ .function = 0xd, .index = 0, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .eax = 7, .ebx = 0x340, .ecx = 0x340 },
		{ .function = 0xd, .index = 1, .flags = KVM_CPUID_FLAG_SIGNIFCANT_INDEX, .eax = 0xf },
		{ .function = 0xb, .index = 0, .eax = 1, .ebx = 1, .ecx = 0x100 },
	};
	t->c.nent = sizeof(init) / sizeof(init[0]);
	memcpy(t->e, init, sizeof(init));
	return t;
}

static struct kvm_cpuid_entry2 *leaf(struct table *t, uint32_t fn, uint32_t idx)
{
	for (uint32_t i = 0; i < t->c.nent; i++)
		if (t->e[i].function == fn && t->e[i].index == idx)
			return &t->e[i];
	fail_msg("no leaf 0x%x.%u", fn, idx);
	return NULL;
}

static cpuid_hide_t parse_ok(const char *list)
{
	cpuid_hide_t h = ~0ULL;
	struct error err;
	int ret = cpuid_hide_parse(list, &h, &err);
	if (ret)
		fail_msg("cpuid_hide_parse(\"%s\") = %d: %s", list, ret, err.msg);
	return h;
}

/* Filters a fresh table hiding `list`; returns it. */
static struct table *filtered(const char *list)
{
	struct table *t = make_table();
	cpuid_filter(&t->c, 3, 4, parse_ok(list));
	return t;
}

static void test_default_hides_nothing(void **state)
{
	assert_int_equal(parse_ok(""), 0);
	assert_int_equal(parse_ok(NULL), 0);
	assert_int_equal(parse_ok(","), 0);
	struct table *t = filtered("");
	assert_int_equal(leaf(t, 1, 0)->ecx, ALL);      /* hypervisor bit added */
	assert_int_equal(leaf(t, 1, 0)->ebx >> 24, 3);   /* APIC ID */
	assert_int_equal((leaf(t, 1, 0)->ebx >> 16) & 0xff, 4);
	assert_int_equal(leaf(t, 7, 0)->ebx, ALL);
	assert_int_equal(leaf(t, 7, 0)->ecx, ALL);
	assert_int_equal(leaf(t, 0xd, 0)->eax, 7);
	assert_int_equal(leaf(t, 0xb, 0)->edx, 3);
	free(t);
}

static void test_each_named_bit(void **state)
{
	static const struct { const char *name; uint32_t fn; int reg; int bit; } cases[] = {
		{ "cmpxchg16b", 1, 2, 13 }, { "movbe", 1, 2, 22 }, { "pcid", 1, 2, 17 },
		{ "osxsave", 1, 2, 27 }, { "x2apic", 1, 2, 21 }, { "rdrand", 1, 2, 30 },
		{ "invpcid", 7, 1, 10 }, { "smap", 7, 1, 20 }, { "smep", 7, 1, 7 },
		{ "fsgsbase", 7, 1, 0 }, { "la57", 7, 2, 16 }, { "umip", 7, 2, 2 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct table *t = filtered(cases[i].name);
		struct kvm_cpuid_entry2 *e = leaf(t, cases[i].fn, 0);
		uint32_t regs[4] = { e->eax, e->ebx, e->ecx, e->edx };
		uint32_t want = ALL & ~(1u << cases[i].bit);
		if (regs[cases[i].reg] != want)
			fail_msg("%s: reg %d = 0x%08x, want 0x%08x", cases[i].name, cases[i].reg,
				 regs[cases[i].reg], want);
		/* Leaf 7 subleaf 1 is never touched. */
		assert_int_equal(leaf(t, 7, 1)->ebx, ALL);
		free(t);
	}
}

static void test_xsave_hides_leaf_d_and_dependants(void **state)
{
	struct table *t = filtered("xsave");
	uint32_t ecx = leaf(t, 1, 0)->ecx;
	assert_false(ecx & (1u << 26)); /* XSAVE */
	assert_false(ecx & (1u << 27)); /* OSXSAVE */
	assert_false(ecx & (1u << 28)); /* AVX */
	assert_true(ecx & (1u << 13));  /* the rest stays */
	assert_false(leaf(t, 7, 0)->ebx & (1u << 5));  /* AVX2 */
	assert_false(leaf(t, 7, 0)->ebx & (1u << 16)); /* AVX-512F */
	for (uint32_t idx = 0; idx < 2; idx++) {
		struct kvm_cpuid_entry2 *d = leaf(t, 0xd, idx);
		assert_int_equal(d->eax | d->ebx | d->ecx | d->edx, 0);
	}
	free(t);
}

static void test_list_combines_and_ignores_case(void **state)
{
	struct table *t = filtered("CMPXCHG16B,,movbe,Invpcid,");
	assert_int_equal(leaf(t, 1, 0)->ecx, ALL & ~(1u << 13) & ~(1u << 22));
	assert_int_equal(leaf(t, 7, 0)->ebx, ALL & ~(1u << 10));
	free(t);
}

static void test_unknown_feature_rejected(void **state)
{
	struct error err;
	cpuid_hide_t h = 42;
	assert_int_equal(cpuid_hide_parse("movbe,sse9", &h, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'sse9'"));
	assert_non_null(strstr(err.msg, "cmpxchg16b"));
	assert_int_equal(h, 42); /* untouched on error */
	assert_int_equal(cpuid_hide_parse("movbee", &h, &err), -EINVAL);
	assert_int_equal(cpuid_hide_parse("movb", &h, &err), -EINVAL);
}

static void test_feature_names_listed(void **state)
{
	unsigned n = 0;
	while (cpuid_feature_name(n))
		n++;
	assert_true(n >= 7);
	assert_true(n <= 64);
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(parse_ok(cpuid_feature_name(i)), 1ULL << i);
}

/* The timing leaf tells the guest its TSC frequency, so it need not calibrate. */
static void test_timing_leaf_added_under_the_kvm_signature(void **state)
{
	struct table *t = make_table();
	uint32_t n = t->c.nent;
	cpuid_add_timing_leaf(&t->c, 2445000);
	assert_int_equal(t->c.nent, n); /* no hypervisor leaf: nothing to extend */
	t->e[t->c.nent++] = (struct kvm_cpuid_entry2){ .function = 0x40000000, .eax = 0x40000001,
							.ebx = 0x4b4d564b };
	cpuid_add_timing_leaf(&t->c, 0);
	assert_int_equal(t->c.nent, n + 1); /* unknown frequency: nothing added */
	cpuid_add_timing_leaf(&t->c, 2445000);
	assert_int_equal(t->c.nent, n + 2);
	assert_int_equal(leaf(t, 0x40000000, 0)->eax, CPUID_TIMING_LEAF);
	assert_int_equal(leaf(t, CPUID_TIMING_LEAF, 0)->eax, 2445000);
	assert_int_equal(leaf(t, CPUID_TIMING_LEAF, 0)->ebx, CPUID_APIC_BUS_KHZ);
	cpuid_add_timing_leaf(&t->c, 2445000);
	assert_int_equal(t->c.nent, n + 2); /* only once */
	free(t);
}

/* KVM_CAP_TSC_DEADLINE_TIMER sets leaf 1 ECX bit 24 (KVM's supported set may lack it); without
 * the capability the bit is left as KVM gave it; --cpuid-hide tsc-deadline still hides it. */
static void test_tsc_deadline_added_with_the_capability(void **state)
{
	(void)state;
	struct table *t = make_table();
	leaf(t, 1, 0)->ecx &= ~(1u << 24);
	cpuid_add_tsc_deadline(&t->c, false);
	assert_false(leaf(t, 1, 0)->ecx & (1u << 24));
	cpuid_add_tsc_deadline(&t->c, true);
	assert_true(leaf(t, 1, 0)->ecx & (1u << 24));
	assert_int_equal(leaf(t, 1, 0)->ecx | (1u << 24), ALL & ~(1u << 31)); /* nothing else */
	cpuid_filter(&t->c, 0, 1, parse_ok("tsc-deadline"));
	assert_false(leaf(t, 1, 0)->ecx & (1u << 24));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_hides_nothing),
		cmocka_unit_test(test_each_named_bit),
		cmocka_unit_test(test_xsave_hides_leaf_d_and_dependants),
		cmocka_unit_test(test_list_combines_and_ignores_case),
		cmocka_unit_test(test_unknown_feature_rejected),
		cmocka_unit_test(test_feature_names_listed),
		cmocka_unit_test(test_timing_leaf_added_under_the_kvm_signature),
		cmocka_unit_test(test_tsc_deadline_added_with_the_capability),
	};
	return cmocka_run_group_tests_name("cpuid", tests, NULL, NULL);
}
