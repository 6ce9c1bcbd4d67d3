/* Unit tests for the CPU policy: --cpu-pin parsing and where the I/O thread goes without io=. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "vmm/cpu_policy.h"

/* A set of the CPUs listed (ending with -1). */
static cpu_set_t cpus(int first, ...)
{
	cpu_set_t s;
	CPU_ZERO(&s);
	va_list ap;
	va_start(ap, first);
	for (int c = first; c >= 0; c = va_arg(ap, int))
		CPU_SET(c, &s);
	va_end(ap);
	return s;
}

static void test_io_unpinned_without_pinned_vcpus(void **state)
{
	struct cpu_policy p;
	cpu_policy_init(&p);
	cpu_set_t allowed = cpus(0, 1, 2, 3, -1), out = cpus(7, -1);
	assert_int_equal(cpu_policy_io_cpus(&p, &allowed, &out), 0);
	p.dedicated = true; /* cpu_policy_check refuses this; io placement still leaves it alone */
	p.rt_prio = 5;
	assert_int_equal(cpu_policy_io_cpus(&p, &allowed, &out), 0);
}

static void test_io_beside_pinned_vcpus(void **state)
{
	struct cpu_policy p;
	cpu_policy_init(&p);
	p.vcpu_cpu[0] = 1;
	p.vcpu_cpu[1] = 3;
	cpu_set_t allowed = cpus(0, 1, 2, 3, -1), out, want = cpus(1, 3, -1);
	assert_int_equal(cpu_policy_io_cpus(&p, &allowed, &out), 1);
	assert_true(CPU_EQUAL(&out, &want));
	/* Only CPUs msivm may use: a vCPU CPU outside the allowed set is left out. */
	allowed = cpus(0, 1, 2, -1);
	want = cpus(1, -1);
	assert_int_equal(cpu_policy_io_cpus(&p, &allowed, &out), 1);
	assert_true(CPU_EQUAL(&out, &want));
	allowed = cpus(0, 2, -1);
	assert_int_equal(cpu_policy_io_cpus(&p, &allowed, &out), 0);
}

static void test_io_off_dedicated_or_fifo_vcpus(void **state)
{
	struct cpu_policy p;
	cpu_policy_init(&p);
	p.vcpu_cpu[0] = 1;
	p.dedicated = true;
	cpu_set_t allowed = cpus(0, 1, 2, -1), out, want = cpus(0, 2, -1);
	assert_int_equal(cpu_policy_io_cpus(&p, &allowed, &out), 1);
	assert_true(CPU_EQUAL(&out, &want));
	p.dedicated = false;
	p.rt_prio = 10;
	assert_int_equal(cpu_policy_io_cpus(&p, &allowed, &out), 1);
	assert_true(CPU_EQUAL(&out, &want));
	/* Every allowed CPU runs a vCPU: nowhere left, the caller leaves the thread unpinned. */
	p.vcpu_cpu[1] = 0;
	p.vcpu_cpu[2] = 2;
	assert_int_equal(cpu_policy_io_cpus(&p, &allowed, &out), -1);
}

static void test_parse_pins(void **state)
{
	struct cpu_policy p;
	struct error err;
	cpu_policy_init(&p);
	assert_int_equal(cpu_policy_parse_pins(&p, "vcpu0=0,io=0", 1, &err), 0);
	assert_int_equal(p.vcpu_cpu[0], 0);
	assert_int_equal(p.io_cpu, 0);
	assert_int_equal(cpu_policy_parse_pins(&p, "vcpu1=0", 1, &err), -EINVAL);
	assert_int_equal(cpu_policy_parse_pins(&p, "cpu0=0", 1, &err), -EINVAL);
	assert_int_equal(cpu_policy_parse_pins(&p, "vcpu0=100000", 1, &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_io_unpinned_without_pinned_vcpus),
		cmocka_unit_test(test_io_beside_pinned_vcpus),
		cmocka_unit_test(test_io_off_dedicated_or_fifo_vcpus),
		cmocka_unit_test(test_parse_pins),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
