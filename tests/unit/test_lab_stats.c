/* Unit tests for the lab's statistics (median, quartiles, range, paired ratios), run order and work-window figures. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab/lab.h"
#include "lab/lab_metrics.h"
#include "virtio/virtio_pci.h"

#define assert_double_equal(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9)

static void test_summary(void **state)
{
	(void)state;
	const double four[] = { 4, NAN, 1, 3, 2 };
	struct lab_summary s = lab_summary_of(four, 5);
	assert_int_equal(s.n, 4);
	assert_double_equal(s.median, 2.5);
	assert_double_equal(s.q1, 1.75);
	assert_double_equal(s.q3, 3.25);
	assert_double_equal(s.min, 1);
	assert_double_equal(s.max, 4);
	assert_double_equal(s.mean, 2.5);
	const double odd[] = { 10, 30, 20 };
	s = lab_summary_of(odd, 3);
	assert_double_equal(s.median, 20);
	assert_double_equal(s.q1, 15);
	assert_double_equal(s.q3, 25);
	const double one[] = { 7 };
	s = lab_summary_of(one, 1);
	assert_int_equal(s.n, 1);
	assert_double_equal(s.median, 7);
	assert_double_equal(s.q1, 7);
	assert_double_equal(s.q3, 7);
	const double none[] = { NAN, NAN };
	assert_int_equal(lab_summary_of(none, 2).n, 0);
	assert_int_equal(lab_summary_of(none, 0).n, 0);
}

static void test_summarize_and_paired_ratio(void **state)
{
	(void)state;
	struct lab_cell *a = calloc(2, sizeof(*a)), *b = a + 1;
	const double av[] = { 2, 4, NAN, 8, 3 }, bv[] = { 1, 2, 2, 0, 1 };
	for (unsigned r = 0; r < 5; r++) {
		a->runs[r].v[3] = av[r];
		b->runs[r].v[3] = bv[r];
	}
	a->nruns = 5;
	b->nruns = 4; /* the fifth batch's QEMU run did not happen */
	struct lab_summary s = lab_summarize(a, 3);
	assert_int_equal(s.n, 4);
	assert_double_equal(s.median, 3.5);
	/* batch by batch: 2/1, 4/2, NaN, 8/0 left out, no fifth pair */
	s = lab_paired_ratio(a, b, 3);
	assert_int_equal(s.n, 2);
	assert_double_equal(s.median, 2);
	assert_double_equal(s.min, 2);
	assert_double_equal(s.max, 2);
	free(a);
}

static const struct lab_experiment *exp_named(const char *name)
{
	for (unsigned i = 0; i < lab_nexperiments; i++)
		if (!strcmp(lab_experiments[i].name, name))
			return &lab_experiments[i];
	fail_msg("no experiment %s", name);
	return NULL;
}

/* --vs qemu: per experiment, batch after batch, each mode msivm then QEMU. */
static void test_plan_interleaves(void **state)
{
	(void)state;
	struct lab_options o = { .runs = 3, .vs_qemu = true, .host_cpus = 2,
				 .modes = 1u << IRQ_MODE_MSIX | 1u << IRQ_MODE_MSI | 1u << IRQ_MODE_INTX };
	o.exps[o.nexps++] = exp_named("rng");
	o.exps[o.nexps++] = exp_named("net-rx"); /* msivm only */
	struct lab_step steps[64];
	unsigned n = lab_plan(&o, steps, 64);
	/* rng: 3 batches x (msix A B, msi A, intx A B); net-rx: 3 x 3 msivm runs */
	assert_int_equal(n, 3 * 5 + 3 * 3);
	assert_int_equal(lab_plan(&o, NULL, 0), n);
	static const struct { unsigned mode; enum lab_vmm vmm; } batch[] = {
		{ IRQ_MODE_MSIX, LAB_MSIVM }, { IRQ_MODE_MSIX, LAB_QEMU }, { IRQ_MODE_MSI, LAB_MSIVM },
		{ IRQ_MODE_INTX, LAB_MSIVM }, { IRQ_MODE_INTX, LAB_QEMU },
	};
	for (unsigned i = 0; i < 15; i++) {
		assert_int_equal(steps[i].exp, 0);
		assert_int_equal(steps[i].run, i / 5);
		assert_int_equal(steps[i].mode, batch[i % 5].mode);
		assert_int_equal(steps[i].vmm, batch[i % 5].vmm);
	}
	for (unsigned i = 15; i < n; i++) {
		assert_int_equal(steps[i].exp, 1);
		assert_int_equal(steps[i].vmm, LAB_MSIVM);
		assert_int_equal(steps[i].run, (i - 15) / 3);
	}
	/* the VMMs alternate per (experiment, mode): A B A B ... */
	for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
		int last = -1;
		for (unsigned i = 0; i < 15; i++)
			if (steps[i].mode == m && m != IRQ_MODE_MSI) {
				assert_int_not_equal((int)steps[i].vmm, last);
				last = (int)steps[i].vmm;
			}
	}
	/* a short buffer: filled up to max, the count still whole */
	struct lab_step few[4];
	assert_int_equal(lab_plan(&o, few, 4), n);
	assert_int_equal(few[3].mode, IRQ_MODE_INTX);
}

static void test_plan_msivm_only(void **state)
{
	(void)state;
	struct lab_options o = { .runs = 2, .host_cpus = 1, .modes = 0xf };
	o.exps[o.nexps++] = exp_named("blk-randread");
	o.exps[o.nexps++] = exp_named("lat-irqfd-pin"); /* needs 2 CPUs: skipped, no step */
	struct lab_step steps[16];
	assert_int_equal(lab_plan(&o, steps, 16), 2 * 4);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(steps[i].vmm, LAB_MSIVM);
		assert_int_equal(steps[i].mode, i % 4);
	}
}

/* The work window's figures per request. */
static void test_window_metrics(void **state)
{
	(void)state;
	const struct lab_experiment *x = exp_named("rng");
	static const char console[] =
		"probe: work begin\n"
		"probe: ready\n"
		"probe: work end irqs=25 kicks=64 halts=10\n"
		"probe: rng read 262144 bytes, distinct=256, requests=64\n"
		"probe: result rng requests=64 bytes=262144 cycles=191079984\n"
		"probe: irq mode=msix total=30 level=0\n";
	struct lab_cpu_window w = { .vmm_ns = 1.6e6, .vcpu_ns = 3.2e7 };
	struct lab_raw raw = { .vmm = LAB_QEMU, .tsc_hz = 2e9, .cpu_ns = 6.4e9, .console = console,
			       .work_cpu = &w, .ok = true };
	double v[LAB_MAX_METRICS];
	lab_compute_metrics(x, &raw, v);
	assert_double_equal(v[lab_metric_index(x, LAB_VMM_CPU_KEY)], 25);
	assert_double_equal(v[lab_metric_index(x, "vcpu_cpu_us_per_req")], 500);
	assert_double_equal(v[lab_metric_index(x, "irqs_per_req")], 25.0 / 64);
	assert_double_equal(v[lab_metric_index(x, "kicks_per_req")], 1);
	assert_double_equal(v[lab_metric_index(x, "halts_per_req")], 10.0 / 64);
	assert_double_equal(v[lab_metric_index(x, "level_irqs")], 0);
	assert_double_equal(v[lab_metric_index(x, "cpu_us_per_req")], 1e5);
	assert_true(isnan(v[lab_metric_index(x, "uexits_per_req")])); /* no msivm stats */
	assert_true(x->metrics[lab_metric_index(x, "cpu_us_per_req")].json_only);
	assert_true(x->metrics[lab_metric_index(x, "exits_per_req")].json_only);
	assert_false(x->metrics[lab_metric_index(x, LAB_VMM_CPU_KEY)].json_only);
	/* no window seen: no CPU figure; the guest's counts still come from its line */
	raw.work_cpu = NULL;
	lab_compute_metrics(x, &raw, v);
	assert_true(isnan(v[lab_metric_index(x, LAB_VMM_CPU_KEY)]));
	assert_double_equal(v[lab_metric_index(x, "kicks_per_req")], 1);
	assert_int_equal(lab_metric_index(x, "nosuch"), -1);
	assert_int_equal(lab_metric_index(exp_named("boot"), LAB_VMM_CPU_KEY), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_summarize_and_paired_ratio),
		cmocka_unit_test(test_plan_interleaves),
		cmocka_unit_test(test_plan_msivm_only),
		cmocka_unit_test(test_window_metrics),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
