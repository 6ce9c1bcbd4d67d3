/* Unit tests for the lab's VMM thread sampling: stat/schedstat parsing, thread kinds, windows over recorded /proc samples. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lab/lab_threads.h"

/* Recorded /proc/PID/task trees (see tests/unit/data/lab-proc/README). */
#define DATA "tests/unit/data/lab-proc/"

/* |a - b| <= eps (cmocka 1.1 has no double comparison). */
#define assert_double_equal(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

static double tick_ns(void)
{
	return 1e9 / (double)sysconf(_SC_CLK_TCK);
}

static void test_kinds(void **state)
{
	(void)state;
	static const char *const vcpu[] = { "msivm-vcpu0", "msivm-vcpu15", "CPU 0/KVM", "CPU 12/KVM" };
	static const char *const vmm[] = { "msivm", "msivm-io", "msivm-ctl", "msivm-api", "msivm-vcpu",
					   "iou-wrk-11776", "iou-sqp-42", "qemu-system-x86", "call_rcu",
					   "worker", "IO mon_iothread", "vhost-8052", "CPU", "CPU 0/TCG" };
	for (unsigned i = 0; i < sizeof(vcpu) / sizeof(vcpu[0]); i++)
		assert_int_equal(lab_thread_kind(vcpu[i]), LAB_THREAD_VCPU);
	for (unsigned i = 0; i < sizeof(vmm) / sizeof(vmm[0]); i++)
		assert_int_equal(lab_thread_kind(vmm[i]), LAB_THREAD_VMM);
	assert_int_equal(lab_thread_kind("kvm-nx-lpage-re"), LAB_THREAD_KVM);
}

static void test_parse_stat(void **state)
{
	(void)state;
	struct lab_task t;
	/* QEMU's vCPU thread, as recorded: a space in the comm, guest_time 0 under PVM */
	assert_int_equal(lab_parse_stat("8062 (CPU 0/KVM) R 8047 8047 31011 0 -1 138412224 571 0 0 0 1 519 0 0 "
					"20 0 4 0 276684 559955968 11069 18446744073709551615 1 2 3 0 0 0 "
					"2147219511 4100 148035 0 0 0 -1 1 0 0 0 0 0 1 2 3 4 5 6 7 0\n", &t), 0);
	assert_string_equal(t.comm, "CPU 0/KVM");
	assert_int_equal(t.utime, 1);
	assert_int_equal(t.stime, 519);
	assert_int_equal(t.guest, 0);
	/* parentheses in the comm: the last ')' ends it; guest_time 290 */
	assert_int_equal(lab_parse_stat("7 (a) (b) S 1 1 1 0 -1 0 0 0 0 0 320 15 0 0 20 0 4 0 1 2 3 4 5 6 7 0 0 0 "
					"0 0 0 0 0 0 -1 1 0 0 0 290 0\n", &t), 0);
	assert_string_equal(t.comm, "a) (b");
	assert_int_equal(t.utime, 320);
	assert_int_equal(t.stime, 15);
	assert_int_equal(t.guest, 290);
	/* an old kernel's shorter line: no guest_time */
	assert_int_equal(lab_parse_stat("7 (x) S 1 1 1 0 -1 0 0 0 0 0 3 4", &t), 0);
	assert_int_equal(t.utime, 3);
	assert_int_equal(t.guest, 0);
	/* malformed */
	assert_int_equal(lab_parse_stat("", &t), -1);
	assert_int_equal(lab_parse_stat("7 x S 1 1 1 0 -1 0 0 0 0 0 3 4", &t), -1);
	assert_int_equal(lab_parse_stat("7 (x) S 1 1 1 0 -1 0 0 0 0 0 3", &t), -1);
	assert_int_equal(lab_parse_stat("7 (x)", &t), -1);
	assert_int_equal(lab_parse_stat("7 (x) S", &t), -1);
}

static void test_parse_schedstat(void **state)
{
	(void)state;
	uint64_t ns = 0;
	assert_int_equal(lab_parse_schedstat("5218188301 4422877746 2385\n", &ns), 0);
	assert_int_equal(ns, 5218188301ULL);
	assert_int_equal(lab_parse_schedstat("42", &ns), 0);
	assert_int_equal(ns, 42);
	assert_int_equal(lab_parse_schedstat("", &ns), -1);
	assert_int_equal(lab_parse_schedstat("x 1 2", &ns), -1);
	assert_int_equal(lab_parse_schedstat("12x 1 2", &ns), -1);
}

/* The window between two recorded snapshots. */
static void window(const char *a, const char *b, struct lab_cpu_window *w)
{
	static struct lab_cpu_snap sa, sb;
	assert_int_equal(lab_cpu_snap_read(a, &sa), 0);
	assert_int_equal(lab_cpu_snap_read(b, &sb), 0);
	assert_true(sa.ok && sb.ok && !sa.truncated && !sb.truncated);
	lab_cpu_window(&sa, &sb, w);
}

static double name_ns(const struct lab_cpu_window *w, const char *name)
{
	for (unsigned i = 0; i < w->nnames; i++)
		if (!strcmp(w->names[i].name, name))
			return w->names[i].ns;
	return NAN;
}

static void test_msivm(void **state)
{
	(void)state;
	struct lab_cpu_window w;
	window(DATA "msivm-blk/a", DATA "msivm-blk/b", &w);
	/* msivm-io 2172181 -> 11160223 ns; main, msivm-ctl idle */
	assert_double_equal(w.vmm_ns, 8988042, 0);
	/* msivm-vcpu0 141500857 -> 487465782 ns; stat: system 13 -> 48 ticks, no user, no guest */
	assert_double_equal(w.vcpu_ns, 345964925, 0);
	assert_double_equal(w.vcpu_stime_ns, 35 * tick_ns(), 1);
	assert_double_equal(w.vcpu_utime_ns, 0, 0);
	assert_double_equal(w.vcpu_guest_ns, 0, 0);
	assert_double_equal(w.kvm_ns, 0, 0);
	assert_int_equal(w.started, 0);
	assert_int_equal(w.ended, 0);
	assert_int_equal(w.nnames, 5);
	assert_double_equal(name_ns(&w, "msivm-io"), 8988042, 0);
	assert_double_equal(name_ns(&w, "msivm-vcpu0"), 345964925, 0);
	assert_double_equal(name_ns(&w, "kvm-nx-lpage-re"), 0, 0);
	assert_int_equal(w.names[4].kind, LAB_THREAD_KVM);
}

static void test_msivm_io_uring_worker(void **state)
{
	(void)state;
	struct lab_cpu_window w;
	/* iou-wrk-11776 appeared in the window: all its 5575040 ns count */
	window(DATA "msivm-write/a", DATA "msivm-write/b", &w);
	assert_double_equal(w.vmm_ns, 5820282 + 5575040, 0);
	assert_double_equal(w.vcpu_ns, 470738310, 0);
	assert_int_equal(w.started, 1);
	assert_int_equal(w.ended, 0);
	assert_double_equal(name_ns(&w, "iou-wrk-*"), 5575040, 0);
	/* ... and it ended: counted as such, nothing else moved */
	window(DATA "msivm-write/b", DATA "msivm-write/c", &w);
	assert_double_equal(w.vmm_ns, 0, 0);
	assert_int_equal(w.started, 0);
	assert_int_equal(w.ended, 1);
	/* an empty first snapshot gives the totals */
	struct lab_cpu_snap none = { .ok = true }, *b = malloc(sizeof(*b));
	assert_int_equal(lab_cpu_snap_read(DATA "msivm-write/b", b), 0);
	lab_cpu_window(&none, b, &w);
	assert_int_equal(w.started, 6);
	assert_double_equal(w.vmm_ns, 7239246.0 + 219582 + 6155741 + 5575040, 0);
	free(b);
}

/* A window is a measurement only with a vCPU thread at its end and none of the VMM's own threads
 * ended inside it: an io_uring worker that ends is fine; a VM gone before the end sample is not. */
static void test_window_ok(void **state)
{
	(void)state;
	struct lab_cpu_window w;
	char why[96];
	window(DATA "msivm-blk/a", DATA "msivm-blk/b", &w);
	assert_true(lab_cpu_window_ok(&w, why, sizeof(why)));
	window(DATA "msivm-write/b", DATA "msivm-write/c", &w); /* iou-wrk-* ended */
	assert_int_equal(w.ended, 1);
	assert_true(lab_cpu_window_ok(&w, why, sizeof(why)));
	/* the end sample found the VM gone (the report's threads_ended 2, CPU per ping 0) */
	struct lab_cpu_snap *a = malloc(sizeof(*a)), gone = { .ok = true };
	assert_int_equal(lab_cpu_snap_read(DATA "msivm-blk/a", a), 0);
	lab_cpu_window(a, &gone, &w);
	assert_double_equal(w.vcpu_ns, 0, 0);
	assert_false(lab_cpu_window_ok(&w, why, sizeof(why)));
	assert_non_null(strstr(why, "no vCPU thread at the window's end"));
	/* the vCPU still there, the I/O thread gone: its share is missing */
	struct lab_cpu_snap *b = malloc(sizeof(*b));
	assert_int_equal(lab_cpu_snap_read(DATA "msivm-blk/b", b), 0);
	unsigned k = 0;
	for (unsigned i = 0; i < b->n; i++)
		if (strcmp(b->t[i].comm, "msivm-io"))
			b->t[k++] = b->t[i];
	assert_int_equal(k, b->n - 1);
	b->n = k;
	lab_cpu_window(a, b, &w);
	assert_false(lab_cpu_window_ok(&w, why, sizeof(why)));
	assert_non_null(strstr(why, "1 of the VMM's threads ended inside the window"));
	free(a);
	free(b);
}

static void test_qemu(void **state)
{
	(void)state;
	struct lab_cpu_window w;
	window(DATA "qemu-blk/a", DATA "qemu-blk/b", &w);
	/* the main loop 57720347 -> 77736924 ns; call_rcu idle */
	assert_double_equal(w.vmm_ns, 20016577, 0);
	assert_double_equal(w.vcpu_ns, 454657061, 0);
	assert_double_equal(w.vcpu_stime_ns, 46 * tick_ns(), 1);
	assert_double_equal(w.vcpu_guest_ns, 0, 0);
	assert_double_equal(name_ns(&w, "qemu-system-x86"), 20016577, 0);
	assert_double_equal(name_ns(&w, "CPU 0/KVM"), 454657061, 0);
	assert_double_equal(name_ns(&w, "call_rcu"), 0, 0);
}

static void test_hardware_kvm_guest_time(void **state)
{
	(void)state;
	struct lab_cpu_window w;
	window(DATA "hw-kvm/a", DATA "hw-kvm/b", &w);
	assert_double_equal(w.vcpu_ns, 2.05e9, 0);
	assert_double_equal(w.vcpu_utime_ns, 200 * tick_ns(), 1);
	assert_double_equal(w.vcpu_guest_ns, 190 * tick_ns(), 1);
	assert_double_equal(w.vmm_ns, 11e6, 0);
}

/* Before Linux 6.4 vhost's worker is a kernel thread "vhost-<owner tid>" outside the process:
 * counted as the VMM's when its owner is the process or one of its threads, once. */
static void test_vhost_kernel_threads(void **state)
{
	static struct lab_cpu_snap s;
	assert_int_equal(lab_cpu_snap_read(DATA "vhost-kthread/task", &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(lab_cpu_snap_add_vhost(DATA "vhost-kthread/proc", 100, &s), 2);
	assert_int_equal(s.n, 4);
	int tids[4] = { 100, 101, 555, 557 };
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(s.t[i].tid, tids[i]);
		assert_int_equal(s.t[i].kind, LAB_THREAD_VMM);
	}
	assert_true(s.t[2].run_ns == 700000000ull);
	assert_string_equal(s.t[3].comm, "vhost-101");
	/* Already there: not added twice; another VMM's worker (vhost-999) never. */
	assert_int_equal(lab_cpu_snap_add_vhost(DATA "vhost-kthread/proc", 100, &s), 0);
	assert_int_equal(s.n, 4);
	assert_true(lab_cpu_snap_add_vhost(DATA "nonexistent", 100, &s) < 0);
}

static void test_unreadable(void **state)
{
	(void)state;
	struct lab_cpu_snap *s = malloc(sizeof(*s));
	assert_true(lab_cpu_snap_read(DATA "nonexistent", s) < 0);
	assert_false(s->ok);
	/* this process: one thread, the test's own, a VMM-kind thread. The kernel adds a running
	 * task's time to schedstat only at a tick, a switch or a read of its CPU clock: run 1 ms
	 * of CPU first (reading the clock each time), or a fresh process can still show 0. */
	struct timespec ts;
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	while (ts.tv_sec == 0 && ts.tv_nsec < 1000000);
	assert_int_equal(lab_cpu_snap_take(getpid(), s), 0);
	assert_true(s->ok);
	assert_int_equal(s->n, 1);
	assert_int_equal(s->t[0].tid, getpid());
	assert_true(s->t[0].run_ns > 0);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test(test_parse_schedstat),
		cmocka_unit_test(test_msivm),
		cmocka_unit_test(test_msivm_io_uring_worker),
		cmocka_unit_test(test_window_ok),
		cmocka_unit_test(test_qemu),
		cmocka_unit_test(test_hardware_kvm_guest_time),
		cmocka_unit_test(test_vhost_kernel_threads),
		cmocka_unit_test(test_unreadable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
