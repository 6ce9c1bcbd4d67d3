/* Unit tests for the Linux lab's console interpretation and merge: recorded tool output framed as the guest prints it -> figures -> report.json -> merged report. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab/linux_lab.h"

#define DATA "tests/unit/data/linux/"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return strdup(buf);
}

/* A framed block ("lab: begin NAME", "lab| " lines, "lab: end NAME") with \r\n line ends. */
static void block(FILE *f, const char *name, const char *text)
{
	fprintf(f, "lab: begin %s\r\n", name);
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		fprintf(f, "lab| %.*s\r\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	fprintf(f, "lab: end %s\r\n", name);
}

/* /proc/interrupts of a 6.1 guest with msivm's devices under MSI-X: req.0 at `blk`, input at `net`. */
static char *interrupts(unsigned blk, unsigned net)
{
	char *s = NULL;
	if (asprintf(&s,
		     "           CPU0       CPU1       \n"
		     "  0:         43          0   IO-APIC   2-edge      timer\n"
		     "  4:        512          0   IO-APIC   4-edge      ttyS0\n"
		     " 24:          0          0   PCI-MSI 16384-edge      virtio0-config\n"
		     " 25:       %u          3   PCI-MSI 16385-edge      virtio0-req.0\n"
		     " 26:          0          0   PCI-MSI 32768-edge      virtio1-config\n"
		     " 27:       %u          0   PCI-MSI 32769-edge      virtio1-input.0\n"
		     " 28:          2          0   PCI-MSI 32770-edge      virtio1-output.0\n"
		     "NMI:          0          0   Non-maskable interrupts\n"
		     "LOC:       1234       5678   Local timer interrupts\n",
		     blk, net) < 0)
		return NULL;
	return s;
}

/* A console as guest/linux/lab-init prints it, from the recorded fio and iperf3 samples; a kernel
 * line lands inside the fio-rw block. */
static char *console(void)
{
	char *con = NULL, *fio = slurp(DATA "fio-rw.json"), *qd = slurp(DATA "fio-randread.json"),
	     *tx = slurp(DATA "iperf3-tcp.json"), *rx = slurp(DATA "iperf3-tcp-reverse.json");
	size_t len = 0;
	const char *data[LL_NWORK] = { fio, qd, qd, qd, qd, tx, rx,
		"rr count=2000 size=64 min_us=80.0 p50_us=120.5 p99_us=400.0 max_us=900.0 mean_us=130.0",
		"bulk bytes=16777216 secs=2.000 mib_s=8.00" };
	FILE *f = open_memstream(&con, &len);
	assert_non_null(f);
	fprintf(f, "[    0.000000] Linux version 6.1.0-57-cloud-amd64\r\n");
	fprintf(f, "lab: ready uptime=3.21\r\n");
	block(f, "dmesg", "[    1.875000] Run /lab-init as init process");
	char *t = interrupts(10, 20);
	block(f, "irq-ready", t);
	free(t);
	for (unsigned w = 0; w < LL_NWORK; w++) {
		char name[64];
		snprintf(name, sizeof(name), "irq-before-%s", ll_work_name((enum ll_work)w));
		t = interrupts(100 * w + 10, 50 * w + 20);
		block(f, name, t);
		free(t);
		block(f, ll_work_name((enum ll_work)w), data[w]);
		snprintf(name, sizeof(name), "irq-after-%s", ll_work_name((enum ll_work)w));
		t = interrupts(100 * w + 10 + 1000, 50 * w + 20 + 7);
		block(f, name, t);
		free(t);
	}
	fprintf(f, "lab: poweroff\r\n");
	fclose(f);
	free(fio), free(qd), free(tx), free(rx);
	/* a kernel message in the middle of a block is not part of it */
	char *p = strstr(con, "lab|   \"fio version\"");
	assert_non_null(p);
	char *with = NULL;
	assert_true(asprintf(&with, "%.*s[   12.5] virtio_net virtio1 eth0: a kernel line\r\n%s",
			     (int)(p - con), con, p) > 0);
	free(con);
	return with;
}

static const struct ll_config *msix(void)
{
	return &ll_configs[0];
}

static void test_console_figures_match_the_tools(void **state)
{
	(void)state;
	char *con = console();
	struct ll_run r = { .run_init_s = NAN, .ready_s = NAN };
	ll_parse_console(con, msix(), true, &r);
	assert_false(r.failed);
	assert_true(fabs(r.run_init_s - 1.875) < 1e-9);
	assert_true(fabs(r.ready_s - 3.21) < 1e-9);
	/* the figures the sample files hold, read by hand (see test_linux_parse.c) */
	assert_true(r.work[LL_FIO_RW].ran);
	assert_string_equal(r.work[LL_FIO_RW].error, "");
	assert_int_equal(r.work[LL_FIO_RW].fio.read_ios, 843784);
	assert_true(fabs(r.work[LL_FIO_RW].ios - (843784.0 + 844472.0)) < 0.5);
	assert_int_equal(r.work[LL_FIO_QD32].fio.read_ios, 459449);
	assert_true(fabs(r.work[LL_IPERF_TX].iperf.sent_mbit_s - 22889.29) < 0.01);
	assert_true(r.work[LL_IPERF_RX].iperf.reverse);
	/* no vsock device in this run: its blocks are not looked at */
	assert_false(r.work[LL_VSOCK_RR].ran);
	/* interrupts during fio-rw: virtio rows only, after - before per line */
	const struct lp_irq_table *irq = r.work[LL_FIO_RW].irqs;
	assert_non_null(irq);
	unsigned req = 0, in = 0;
	for (unsigned i = 0; i < irq->n; i++) {
		assert_non_null(strstr(irq->rows[i].names, "virtio"));
		if (!strcmp(irq->rows[i].names, "virtio0-req.0"))
			req = (unsigned)irq->rows[i].total;
		if (!strcmp(irq->rows[i].names, "virtio1-input.0"))
			in = (unsigned)irq->rows[i].total;
	}
	assert_int_equal(req, 1000);
	assert_int_equal(in, 7);
	assert_string_equal(r.level_with_msi, "");
	ll_run_free(&r);
	free(con);
}

static void test_level_line_under_msix_is_flagged(void **state)
{
	(void)state;
	char *con = console();
	/* Linux fell back to INTx for virtio0 although MSI-X was on */
	char *p = strstr(con, "PCI-MSI 16385-edge");
	assert_non_null(p);
	memcpy(p - 1, " IO-APIC  11-fasteoi", 20);
	struct ll_run r = { .run_init_s = NAN, .ready_s = NAN };
	ll_parse_console(con, msix(), true, &r);
	assert_non_null(strstr(r.level_with_msi, "virtio0-req.0"));
	ll_run_free(&r);
	free(con);
}

static void test_truncated_console_fails_the_run(void **state)
{
	(void)state;
	char *con = console();
	char *p = strstr(con, "lab: begin iperf-rx");
	assert_non_null(p);
	*p = 0; /* the guest died during iperf-rx */
	struct ll_run r = { .run_init_s = NAN, .ready_s = NAN };
	ll_parse_console(con, msix(), true, &r);
	assert_true(r.failed);
	assert_non_null(strstr(r.error, "did not reach its poweroff"));
	assert_true(r.work[LL_FIO_RW].ran);
	assert_false(r.work[LL_IPERF_RX].ran);
	assert_non_null(strstr(r.work[LL_IPERF_RX].error, "no output"));
	ll_run_free(&r);
	free(con);
}

/* A guest that powers off cleanly without one of its workloads (exit status 0) did not do the
 * run's work: the run fails, naming the workload. */
static void test_missing_workload_fails_the_run(void **state)
{
	(void)state;
	char *con = console();
	char *p = strstr(con, "lab: begin fio-qd32");
	assert_non_null(p);
	memcpy(p + strlen("lab: begin "), "skipped!", 8); /* the block is no longer fio-qd32's */
	struct ll_run r = { .run_init_s = NAN, .ready_s = NAN };
	ll_parse_console(con, msix(), true, &r);
	assert_true(r.failed);
	assert_string_equal(r.error, "the guest powered off without its fio-qd32 workload (no output from fio-qd32)");
	assert_true(r.work[LL_FIO_QD1].ran);
	ll_run_free(&r);
	/* without work asked for, the same console is a good boot-only run */
	struct ll_run b = { .run_init_s = NAN, .ready_s = NAN };
	ll_parse_console(con, msix(), false, &b);
	assert_false(b.failed);
	ll_run_free(&b);
	free(con);
}

/* A run with a vsock device reads its two vsock blocks, and fails without one of them; a run
 * without the device does not look for them. */
static void test_vsock_workloads(void **state)
{
	(void)state;
	char *con = console();
	struct ll_run r = { .run_init_s = NAN, .ready_s = NAN, .vsock = LL_VSOCK_UNIX };
	ll_parse_console(con, msix(), true, &r);
	assert_false(r.failed);
	const struct ll_work_result *rr = &r.work[LL_VSOCK_RR], *bulk = &r.work[LL_VSOCK_BULK];
	assert_true(rr->ran && bulk->ran);
	assert_true(rr->vsock.rr && !bulk->vsock.rr);
	assert_true(fabs(rr->vsock.p50_us - 120.5) < 1e-9 && fabs(rr->vsock.p99_us - 400.0) < 1e-9);
	assert_true(fabs(rr->ios - 2000) < 1e-9);            /* per round trip */
	assert_true(fabs(bulk->mib - 16.0) < 1e-9);          /* per MiB */
	assert_true(fabs(bulk->vsock.mib_s - 8.0) < 1e-9);
	assert_non_null(rr->irqs);
	ll_run_free(&r);
	/* the bulk block missing: the run fails, naming it */
	char *p = strstr(con, "lab: begin vsock-bulk");
	assert_non_null(p);
	memcpy(p + strlen("lab: begin "), "skipped!!!", 10);
	struct ll_run m = { .run_init_s = NAN, .ready_s = NAN, .vsock = LL_VSOCK_VHOST };
	ll_parse_console(con, msix(), true, &m);
	assert_true(m.failed);
	assert_string_equal(m.error, "the guest powered off without its vsock-bulk workload (no output from vsock-bulk)");
	ll_run_free(&m);
	/* the same console, no vsock device: a good run */
	struct ll_run n = { .run_init_s = NAN, .ready_s = NAN };
	ll_parse_console(con, msix(), true, &n);
	assert_false(n.failed);
	ll_run_free(&n);
	/* a bulk line in the round-trip block is refused */
	char *q = strstr(con, "lab| rr count=");
	assert_non_null(q);
	char *swapped = NULL;
	assert_true(asprintf(&swapped, "%.*slab| bulk bytes=5 secs=1 mib_s=1%s", (int)(q - con), con,
			     strchr(q, '\r')) > 0);
	struct ll_run w = { .run_init_s = NAN, .ready_s = NAN, .vsock = LL_VSOCK_UNIX };
	ll_parse_console(swapped, msix(), true, &w);
	assert_non_null(strstr(w.work[LL_VSOCK_RR].error, "a bulk line in the vsock-rr block"));
	ll_run_free(&w);
	free(swapped);
	free(con);
}

/* report.json written by ll_report, merged twice over by --merge: every run comes back with the
 * figures its console gives and the CPU and window the watcher recorded. */
static void test_merge_reinterprets_recorded_runs(void **state)
{
	(void)state;
	char dir[] = "/tmp/msivm-merge-XXXXXX", out[64], json[80], merged[96];
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof(out), "%s/m", dir);
	snprintf(json, sizeof(json), "%s/report.json", dir);
	struct ll_cell *cell = calloc(1, sizeof(*cell));
	cell->cfg = msix();
	cell->vmm = LAB_MSIVM;
	cell->nruns = 1;
	struct ll_run *r = &cell->runs[0];
	r->run_init_s = r->ready_s = NAN;
	r->console = console();
	r->worked = true;
	ll_parse_console(r->console, cell->cfg, true, r);
	r->wall_s = 42;
	r->work[LL_FIO_RW].window_s = 10.5;
	r->work[LL_FIO_RW].cpu = (struct ll_cpu){ 2.25, 0.75 };
	for (unsigned e = 0; e < LL_NEXIT; e++)
		r->work[LL_FIO_RW].exits[e] = e == LL_EXIT_MMIO ? 1234 : NAN;
	char *argv0[] = { "msivm", "lab", "--guest", "linux" };
	struct ll_options o = { .out_dir = dir, .runs = 1, .io_runs = 1, .fio_s = 10, .iperf_s = 5,
				.cpus = 2, .mem_mib = 2048, .kernel = "k", .initrd = "i",
				.argc = 4, .argv = argv0, .runs_planned = 1, .runs_done = 1 };
	struct error err = { "" };
	assert_int_equal(ll_report(&o, cell, 1, &err), 0);
	char *argv[] = { "lab", "--guest", "linux", "--merge", "--out", out, json, json, NULL };
	assert_int_equal(ll_merge_main(8, argv), 0);
	snprintf(merged, sizeof(merged), "%s/report.json", out);
	json_error_t je;
	json_t *root = json_load_file(merged, 0, &je);
	assert_non_null(root);
	json_t *runs = json_object_get(root, "runs");
	assert_int_equal(json_array_size(runs), 2);
	for (size_t i = 0; i < 2; i++) {
		json_t *run = json_array_get(runs, i), *rw = json_object_get(json_object_get(run, "work"), "fio-rw");
		assert_int_equal(json_integer_value(json_object_get(json_object_get(rw, "fio"), "read_ios")),
				 843784);
		assert_true(fabs(json_real_value(json_object_get(rw, "window_s")) - 10.5) < 1e-9);
		assert_true(fabs(json_real_value(json_object_get(json_object_get(rw, "cpu"), "vcpu_s")) - 2.25) < 1e-9);
		assert_true(fabs(json_real_value(json_object_get(json_object_get(rw, "exits"), "mmio_exits")) - 1234) < 1e-9);
		assert_true(json_is_null(json_object_get(json_object_get(rw, "exits"), "io_exits")));
		assert_true(fabs(json_real_value(json_object_get(run, "run_init_s")) - 1.875) < 1e-9);
	}
	/* not a lab report: refused, named */
	char *bad[] = { "lab", "--guest", "linux", "--merge", "--out", out, "--force", DATA "fio-rw.json", NULL };
	assert_int_equal(ll_merge_main(8, bad), 125);
	json_decref(root);
	ll_run_free(r);
	free(cell);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* A console recorded from a real lab run (msivm, msix, nested rig, 2026-12-02): the figures
 * agree with the raw guest output, read by hand from the file (grep the blocks). */
static void test_recorded_console(void **state)
{
	(void)state;
	char *con = slurp(DATA "console-msivm-msix.txt");
	/* it ran what the guest ran then: no fio-qd4, fio-qd128 or vsock blocks */
	struct ll_run r = { .run_init_s = NAN, .ready_s = NAN, .asked = LL_WORKS_BEFORE_DEPTH };
	ll_parse_console(con, msix(), true, &r);
	assert_false(r.failed);
	assert_true(fabs(r.run_init_s - 6.298704) < 1e-9);   /* "[    6.298704] Run /lab-init ..." */
	assert_true(fabs(r.ready_s - 7.51) < 1e-9);          /* "lab: ready uptime=7.51" */
	const struct ll_work_result *rw = &r.work[LL_FIO_RW];
	assert_int_equal(rw->fio.read_ios, 1258);            /* read "total_ios" : 1258 */
	assert_true(fabs(rw->fio.read_iops - 125.7497) < 1e-6);
	assert_true(fabs(rw->fio.runtime_s - 10.004) < 1e-9); /* "runtime" : 10004 (ms) */
	unsigned req = 0;
	for (unsigned i = 0; rw->irqs && i < rw->irqs->n; i++)
		if (!strcmp(rw->irqs->rows[i].names, "virtio0-req.0"))
			req = (unsigned)rw->irqs->rows[i].total;
	assert_int_equal(req, 1733);                         /* 0+1 before, 0+1734 after */
	/* sum_received bits_per_second 2259089.206 */
	assert_true(fabs(r.work[LL_IPERF_TX].iperf.received_mbit_s - 2.259089206) < 1e-6);
	assert_string_equal(r.level_with_msi, "");
	ll_run_free(&r);
	free(con);
}

/* The watcher's reading of the guest's marks, \r\n line ends included. */
static void test_marks(void **state)
{
	(void)state;
	bool begin = false;
	const char *l = "lab: mark begin fio-qd32\r";
	assert_int_equal(ll_mark(l, strlen(l), &begin), LL_FIO_QD32);
	assert_true(begin);
	l = "lab: mark end iperf-rx";
	assert_int_equal(ll_mark(l, strlen(l), &begin), LL_IPERF_RX);
	assert_false(begin);
	l = "lab: mark end iperf-rxx\r";
	assert_int_equal(ll_mark(l, strlen(l), &begin), -1);
	l = "lab: poweroff\r";
	assert_int_equal(ll_mark(l, strlen(l), &begin), LL_MARK_POWEROFF);
	l = "lab| lab: mark of nothing";
	assert_int_equal(ll_mark(l, strlen(l), &begin), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_console_figures_match_the_tools),
		cmocka_unit_test(test_level_line_under_msix_is_flagged),
		cmocka_unit_test(test_truncated_console_fails_the_run),
		cmocka_unit_test(test_missing_workload_fails_the_run),
		cmocka_unit_test(test_vsock_workloads),
		cmocka_unit_test(test_merge_reinterprets_recorded_runs),
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_recorded_console),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
