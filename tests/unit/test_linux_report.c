/* Unit tests for the Linux lab report: hand-made cells -> report.txt, report.json and the charts. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab/linux_lab.h"

static const struct ll_config cfg_msix = { .name = "msix", .label = "MSI-X, a vector per queue",
					   .irq = "msix", .qemu_vectors = "", .guest_extra = "",
					   .msi_expected = true };
static const struct ll_config cfg_nomsi = { .name = "nomsi", .label = "guest without MSI (pci=nomsi)",
					    .irq = "msix", .qemu_vectors = "", .guest_extra = "pci=nomsi" };
static const struct ll_config cfg_intx = { .name = "intx", .label = "INTx", .irq = "intx",
					   .qemu_vectors = ",vectors=0", .guest_extra = "" };
static const struct ll_config cfg_msi = { .name = "msi", .label = "plain MSI offered", .irq = "msi",
					  .guest_extra = "" };

/* The figures one hand-made run reports. */
struct fig {
	double run_init, ready, wall;
	double rw_mib;            /* fio-rw read and write MiB/s */
	double qd1_iops, qd32_iops;
	double tx, rx;            /* Mbit/s; NAN: iperf3 failed */
	double irq_per_io;        /* virtio interrupts per fio-rw I/O */
};

#define IOS 10000.0

/* One virtio request line (and a config line with no interrupts). */
static struct lp_irq_table *irq_table(const char *chip, const char *type, uint64_t count)
{
	struct lp_irq_table *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->ncpus = 2;
	t->n = 2;
	snprintf(t->rows[0].irq, sizeof(t->rows[0].irq), "24");
	snprintf(t->rows[0].chip, sizeof(t->rows[0].chip), "%s", chip);
	snprintf(t->rows[0].type, sizeof(t->rows[0].type), "%s", type);
	snprintf(t->rows[0].names, sizeof(t->rows[0].names), "virtio1-config");
	snprintf(t->rows[1].irq, sizeof(t->rows[1].irq), "25");
	snprintf(t->rows[1].chip, sizeof(t->rows[1].chip), "%s", chip);
	snprintf(t->rows[1].type, sizeof(t->rows[1].type), "%s", type);
	snprintf(t->rows[1].names, sizeof(t->rows[1].names), "virtio1-req.0");
	t->rows[1].total = count;
	return t;
}

static void set_work(struct ll_run *r, enum ll_work w, double ios, double mib, bool exits,
		     uint64_t irqs, bool msi)
{
	struct ll_work_result *wr = &r->work[w];
	wr->ran = true;
	wr->ios = ios;
	wr->mib = mib;
	wr->window_s = 10;
	wr->cpu = (struct ll_cpu){ .vcpu_s = 1.0, .other_s = 0.5 };
	for (unsigned e = 0; e < LL_NEXIT; e++)
		wr->exits[e] = NAN;
	if (exits) {
		wr->exits[LL_EXITS] = 3 * ios;
		wr->exits[LL_EXIT_MMIO] = 2 * ios;
		wr->exits[LL_EXIT_HALT] = ios / 2;
	}
	wr->irqs = irq_table(msi ? "PCI-MSIX-0000:00:04.0" : "IO-APIC", msi ? "edge" : "fasteoi",
			     irqs);
}

static void fill_run(struct ll_run *r, const struct fig *f, bool worked, bool msi)
{
	r->status = 0;
	r->wall_s = f->wall;
	r->run_init_s = f->run_init;
	r->ready_s = f->ready;
	r->cpu_total = (struct ll_cpu){ 2.0, 1.0 };
	r->irq_ready = irq_table(msi ? "PCI-MSIX-0000:00:04.0" : "IO-APIC", msi ? "edge" : "fasteoi",
				 40);
	r->console = strdup("lab: ready uptime=1.5\nlab: poweroff\n");
	r->errout = strdup("");
	r->worked = worked;
	for (unsigned w = 0; w < LL_NWORK; w++)
		for (unsigned e = 0; e < LL_NEXIT; e++)
			r->work[w].exits[e] = NAN;
	if (!worked)
		return;
	set_work(r, LL_FIO_RW, IOS, 2 * f->rw_mib * 10, true, (uint64_t)(f->irq_per_io * IOS), msi);
	r->work[LL_FIO_RW].fio = (struct lp_fio){ .has_read = true, .has_write = true,
						  .read_mib_s = f->rw_mib, .write_mib_s = f->rw_mib,
						  .read_ios = IOS / 2, .write_ios = IOS / 2,
						  .runtime_s = 10 };
	set_work(r, LL_FIO_QD1, f->qd1_iops * 10, f->qd1_iops * 10 / 256, false, 900, msi);
	r->work[LL_FIO_QD1].fio = (struct lp_fio){ .has_read = true, .read_iops = f->qd1_iops,
						   .read_lat_mean_us = 1e6 / f->qd1_iops,
						   .read_lat_p99_us = 2e6 / f->qd1_iops };
	set_work(r, LL_FIO_QD32, f->qd32_iops * 10, f->qd32_iops * 10 / 256, false, 700, msi);
	r->work[LL_FIO_QD32].fio = (struct lp_fio){ .has_read = true, .read_iops = f->qd32_iops,
						    .read_lat_mean_us = 32e6 / f->qd32_iops,
						    .read_lat_p99_us = 64e6 / f->qd32_iops };
	set_work(r, LL_IPERF_TX, NAN, isnan(f->tx) ? NAN : f->tx * 5 / 8, false, 3000, msi);
	if (isnan(f->tx))
		snprintf(r->work[LL_IPERF_TX].error, sizeof(r->work[LL_IPERF_TX].error),
			 "iperf3: unable to connect to server");
	else
		r->work[LL_IPERF_TX].iperf = (struct lp_iperf){ f->tx * 1.01, f->tx, 5, 3, false };
	set_work(r, LL_IPERF_RX, NAN, f->rx * 5 / 8, false, 2000, msi);
	r->work[LL_IPERF_RX].iperf = (struct lp_iperf){ f->rx * 1.01, f->rx, 5, 0, true };
}

static void free_cells(struct ll_cell *cells, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		for (unsigned r = 0; r < cells[i].nruns; r++) {
			struct ll_run *run = &cells[i].runs[r];
			for (unsigned w = 0; w < LL_NWORK; w++)
				free(run->work[w].irqs);
			free(run->irq_ready);
			free(run->console);
			free(run->errout);
			free(run->stats_json);
		}
	free(cells);
}

static char *slurp(const char *dir, const char *name)
{
	char path[4200];
	FILE *f;
	char *buf;
	long n;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void remove_dir(const char *dir)
{
	static const char *const files[] = { "report.txt", "report.json", "linux-boot.svg",
					     "linux-storage.svg", "linux-network.svg",
					     "linux-interrupts.svg", "linux-charts.gp" };
	char path[4200];
	for (unsigned i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

static char *argv_full[] = { "msivm", "lab", "--guest", "linux", "--runs", "3", "--io-runs", "2",
			     "--vs", "qemu" };

static void options(struct ll_options *o, const char *dir)
{
	memset(o, 0, sizeof(*o));
	o->out_dir = dir;
	o->kernel = "/boot/vmlinuz-test";
	o->initrd = "/tmp/lab-initrd.cpio.gz";
	o->runs = 3;
	o->io_runs = 2;
	o->fio_s = 10;
	o->iperf_s = 5;
	o->cpus = 2;
	o->mem_mib = 512;
	o->vs_qemu = true;
	o->argc = (int)(sizeof(argv_full) / sizeof(argv_full[0]));
	o->argv = argv_full;
	snprintf(o->date, sizeof(o->date), "2025-01-02T03:04:05Z");
	snprintf(o->host.kernel, sizeof(o->host.kernel), "6.1.0-test");
	snprintf(o->host.cpu, sizeof(o->host.cpu), "QEMU TCG CPU version 2.5+");
	snprintf(o->host.kvm_modules, sizeof(o->host.kvm_modules), "kvm kvm_intel");
	o->host.cpus = 2;
	o->host.kvm_api = 12;
	o->runs_planned = 8;
	o->runs_done = 8;
	o->runs_failed = 1;
}

/* The full lab's outputs, made once for the group. */
struct lab {
	char dir[64];
	int ret;
	char *txt, *json;
	char msg[ERROR_MSG_MAX];
};

/* msivm msix (3 runs, 2 with workloads, run 2 with a level line), msivm nomsi (3 runs, the
 * third failed, iperf-tx failing), QEMU msix (2 runs), QEMU msi skipped. */
static int group_setup(void **state)
{
	static const struct fig msix[] = {
		{ 0.99, 1.5, 3.0, 104.5, 5000, 20000, 1080, 900, 0.5 },
		{ 1.01, 1.6, 3.2, 104.5, 5000, 20000, 1080, 900, 0.5 },
		{ 1.00, NAN, 3.1, 0, 0, 0, 0, 0, 0 },
	};
	static const struct fig nomsi = { 1.21, 1.8, 3.5, 100, 4000, 16000, NAN, 800, 1.0 };
	static const struct fig qemu = { 1.10, 2.0, 4.0, 95, 4500, 18000, 900, 700, 0.6 };
	struct lab *lab = calloc(1, sizeof(*lab));
	struct ll_cell *cells = calloc(4, sizeof(*cells));
	struct ll_options o;
	struct error err = { "" };
	assert_non_null(lab);
	assert_non_null(cells);
	snprintf(lab->dir, sizeof(lab->dir), "/tmp/msivm-lr-XXXXXX");
	assert_non_null(mkdtemp(lab->dir));
	options(&o, lab->dir);

	cells[0] = (struct ll_cell){ .cfg = &cfg_msix, .vmm = LAB_MSIVM, .nruns = 3 };
	for (unsigned r = 0; r < 3; r++)
		fill_run(&cells[0].runs[r], &msix[r], r < 2, true);
	snprintf(cells[0].runs[1].level_with_msi, sizeof(cells[0].runs[1].level_with_msi),
		 "virtio1-req.0 on IO-APIC 11-fasteoi during fio-rw");
	cells[0].runs[0].stats_json = strdup("{\"exits\": 5, \"irqs\": [1, 2]}");
	cells[0].runs[1].stats_json = strdup("not json {");
	free(cells[0].runs[2].console);
	cells[0].runs[2].console = strdup("bad byte \xff here");

	cells[1] = (struct ll_cell){ .cfg = &cfg_nomsi, .vmm = LAB_MSIVM, .nruns = 3 };
	for (unsigned r = 0; r < 3; r++)
		fill_run(&cells[1].runs[r], &nomsi, r < 2, false);
	cells[1].runs[2].failed = true;
	cells[1].runs[2].status = 137;
	cells[1].runs[2].run_init_s = 9.0; /* a failed run's figures count nowhere */
	snprintf(cells[1].runs[2].error, sizeof(cells[1].runs[2].error),
		 "timed out: no \"lab: poweroff\" after 600 s");

	cells[2] = (struct ll_cell){ .cfg = &cfg_msix, .vmm = LAB_QEMU, .nruns = 2 };
	for (unsigned r = 0; r < 2; r++)
		fill_run(&cells[2].runs[r], &qemu, true, true);

	cells[3] = (struct ll_cell){ .cfg = &cfg_msi, .vmm = LAB_QEMU, .skipped = true };
	snprintf(cells[3].skip_reason, sizeof(cells[3].skip_reason), "QEMU has no plain-MSI mode");

	lab->ret = ll_report(&o, cells, 4, &err);
	snprintf(lab->msg, sizeof(lab->msg), "%s", err.msg);
	lab->txt = slurp(lab->dir, "report.txt");
	lab->json = slurp(lab->dir, "report.json");
	free_cells(cells, 4);
	*state = lab;
	return 0;
}

static int group_teardown(void **state)
{
	struct lab *lab = *state;
	free(lab->txt);
	free(lab->json);
	remove_dir(lab->dir);
	free(lab);
	return 0;
}

/* The line of text that contains `needle` (a static copy), or fails. */
static const char *line_with(const char *text, const char *needle)
{
	static char line[2048];
	const char *p = text ? strstr(text, needle) : NULL, *start, *end;
	if (!p)
		fail_msg("report.txt has no \"%s\"", needle);
	for (start = p; start > text && start[-1] != '\n'; start--)
		;
	end = strchr(p, '\n');
	snprintf(line, sizeof(line), "%.*s", (int)(end ? end - start : (long)strlen(start)), start);
	return line;
}

/* The line starting with `start` (or containing it) also contains `part`. */
static void assert_row(const char *text, const char *start, const char *part)
{
	const char *l = line_with(text, start);
	if (!strstr(l, part))
		fail_msg("line \"%s\" has no \"%s\"", l, part);
}

static void assert_has(const char *text, const char *needle)
{
	if (!text || !strstr(text, needle))
		fail_msg("report has no \"%s\"", needle);
}

static void test_report_written(void **state)
{
	struct lab *lab = *state;
	if (lab->ret)
		fail_msg("ll_report = %d: %s", lab->ret, lab->msg);
	assert_non_null(lab->txt);
	assert_non_null(lab->json);
}

static void test_header(void **state)
{
	struct lab *lab = *state;
	assert_has(lab->txt, "command: msivm lab --guest linux --runs 3 --io-runs 2 --vs qemu\n");
	assert_has(lab->txt, "host: Linux 6.1.0-test, QEMU TCG CPU version 2.5+, 2 CPUs");
	assert_has(lab->txt, "NOTE: this host is itself emulated (nested under QEMU TCG)");
	assert_has(lab->txt, "guest: kernel /boot/vmlinuz-test, initrd /tmp/lab-initrd.cpio.gz");
	assert_has(lab->txt, "3 boots per configuration, the first 2 with the workloads (fio 10 s");
	assert_null(strstr(lab->txt, "PARTIAL"));
}

/* Boot: mean ± (max-min)/2 over the runs that did not fail; the failed run's 9.0 s left out. */
static void test_boot_table(void **state)
{
	struct lab *lab = *state;
	assert_row(lab->txt, "  msivm  msix         1.000 ± 0.010", "3/3");
	assert_row(lab->txt, "  msivm  nomsi        1.210 ± 0.000", "2/3");
	assert_row(lab->txt, "  QEMU   msix         1.100 ± 0.000", "2/2");
	assert_has(lab->txt, "  QEMU   msi          skipped: QEMU has no plain-MSI mode\n");
}

static void test_io_tables(void **state)
{
	struct lab *lab = *state;
	assert_row(lab->txt, "  msivm  msix                104.5        104.5         5000",
		   "200.0          n/a        20000         3200          n/a     2");
	line_with(lab->txt, "  msivm  nomsi                      n/a             800.0     2");
	line_with(lab->txt, "  QEMU   msix                     900.0             700.0     2");
}

/* fio-rw has exits (exits, mmio, halt columns only); iperf has none: "no KVM debugfs". */
static void test_cost_tables(void **state)
{
	struct lab *lab = *state;
	const char *rw = strstr(lab->txt, "fio-rw: host CPU (us) and KVM exits per I/O");
	const char *tx = strstr(lab->txt, "iperf-tx: host CPU (us) and KVM exits per MiB");
	assert_non_null(rw);
	assert_non_null(tx);
	/* 0.5 s of VMM CPU / 10000 I/Os = 50 us; 1.0 s of vCPU = 100 us; 0.5 irqs; 3, 2, 0.5 exits */
	line_with(rw, "  msivm  msix             50.00     100.0     0.500     3.000     2.000     0.500");
	assert_non_null(strstr(line_with(rw, "vmm    config"), " mmio "));
	assert_null(strstr(line_with(rw, "vmm    config"), " io "));
	assert_non_null(strstr(line_with(tx, "vmm    config"), "KVM exits"));
	assert_non_null(strstr(tx, "KVM exits n/a: no KVM debugfs"));
}

static void test_ratios(void **state)
{
	struct lab *lab = *state;
	/* msix 1.000 s, nomsi 1.210 s: msix/nomsi 0.83, MSI-X 21% faster, the seed's ~21% */
	assert_row(lab->txt, "  msivm  nomsi    Run /init (s)",
		   "1.000     1.210       0.83   +21.0%  ~21% faster");
	assert_row(lab->txt, "  msivm  nomsi    fio-rw read (MiB/s)",
		   "104.5     100.0       1.04    +4.5%  ~4.5% more");
	assert_row(lab->txt, "  msivm  nomsi    iperf guest->host (Mbit/s)",
		   "not measured: msivm nomsi run 1: iperf-tx: iperf3: unable");
	assert_row(lab->txt, "  msivm  nomsi    virtio interrupts per I/O, fio-rw (per I/O)",
		   "0.500     1.000       0.50   +50.0%  fewer");
	assert_has(lab->txt, "  QEMU   no configuration without MSI (intx, nomsi) in this lab\n");
	assert_row(lab->txt, "  msix         Run /init (s)", "1.000     1.100       0.91");
}

static void test_findings(void **state)
{
	struct lab *lab = *state;
	const char *f = strstr(lab->txt, "\nFindings");
	assert_non_null(f);
	line_with(f, "     msivm: reproduced: Run /init: MSI-X 21.0% faster than nomsi (1.000 vs "
		     "1.210 s), the seed: ~21% faster with MSI-X");
	line_with(f, "     msivm: reproduced: fio-rw read: MSI-X 4.5% more than nomsi");
	line_with(f, "     msivm: not measured (iperf guest->host against nomsi: msivm nomsi run 1: "
		     "iperf-tx: iperf3: unable to connect to server)");
	line_with(f, "     msivm: reproduced: virtio interrupts per I/O, fio-rw: MSI-X 50.0% fewer "
		     "than nomsi");
	line_with(f, "     QEMU: not measured (no QEMU configuration without MSI, intx or nomsi");
	line_with(f, "     msivm vs QEMU: msix Run /init: msivm 10.0% faster than QEMU (1.000 vs "
		     "1.100 s)");
	line_with(f, "     msivm vs QEMU: msix iperf guest->host: msivm 20.0% more than QEMU");
}

static void test_interrupts_and_warning(void **state)
{
	struct lab *lab = *state;
	const char *v = strstr(lab->txt, "\nInterrupts per vector");
	assert_non_null(v);
	line_with(v, "  msivm msix (MSI-X, a vector per queue), run 1, during each workload:");
	/* the vsock workloads' columns: '-' in a run without a vsock device */
	line_with(v, "    25     PCI-MSIX-0000:00:04.0    edge            5000        900          -"
		     "        700          -       3000       2000          -          -  virtio1-req.0");
	line_with(v, "    24     PCI-MSIX-0000:00:04.0    edge               0          0          -"
		     "          0          -          0          0          -          -  virtio1-config");
	line_with(v, "  msivm nomsi (guest without MSI (pci=nomsi)), run 1, during each workload:");
	line_with(v, "    25     IO-APIC                  fasteoi        10000");
	line_with(v, "  QEMU msi (plain MSI offered): skipped: QEMU has no plain-MSI mode");
	line_with(lab->txt, "WARNING: msivm msix run 2: a virtio device has a level-triggered IO-APIC "
			    "line while MSI-X is on: virtio1-req.0 on IO-APIC 11-fasteoi during fio-rw");
	line_with(lab->txt, "WARNING: 1 run had a level-triggered virtio line while MSI-X was on");
}

static void test_failed_and_skipped(void **state)
{
	struct lab *lab = *state;
	const char *f = strstr(lab->txt, "\nFailed runs");
	assert_non_null(f);
	line_with(f, "  msivm nomsi run 3 (status 137): timed out: no \"lab: poweroff\" after 600 s");
	f = strstr(lab->txt, "\nSkipped configurations:");
	assert_non_null(f);
	line_with(f, "  QEMU msi: skipped: QEMU has no plain-MSI mode");
}

static json_t *run_of(json_t *runs, const char *vmm, const char *cfg, int index)
{
	size_t i;
	json_t *r;
	json_array_foreach(runs, i, r)
		if (!strcmp(json_string_value(json_object_get(r, "vmm")), vmm) &&
		    !strcmp(json_string_value(json_object_get(r, "config")), cfg) &&
		    json_integer_value(json_object_get(r, "index")) == index)
			return r;
	fail_msg("report.json has no run %s %s %d", vmm, cfg, index);
	return NULL;
}

static void test_json(void **state)
{
	struct lab *lab = *state;
	json_error_t jerr;
	json_t *root = json_loads(lab->json ? lab->json : "", 0, &jerr), *runs, *r, *w, *o;
	if (!root)
		fail_msg("report.json does not parse: %s (line %d)", jerr.text, jerr.line);
	assert_string_equal(json_string_value(json_object_get(root, "version")), MSIVM_VERSION);
	assert_string_equal(json_string_value(json_object_get(root, "date")), "2025-01-02T03:04:05Z");
	assert_int_equal(json_array_size(json_object_get(root, "argv")), 10);
	o = json_object_get(root, "options");
	assert_int_equal(json_integer_value(json_object_get(o, "io_runs")), 2);
	assert_int_equal(json_integer_value(json_object_get(o, "mem_mib")), 512);
	assert_string_equal(json_string_value(json_object_get(o, "initrd")), "/tmp/lab-initrd.cpio.gz");
	assert_true(json_is_true(json_object_get(json_object_get(root, "host"), "emulated")));
	runs = json_object_get(root, "runs");
	assert_int_equal(json_array_size(runs), 8);
	assert_int_equal(json_array_size(json_object_get(root, "cells")), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(root,
		"cells"), 3), "skip_reason")), "QEMU has no plain-MSI mode");

	r = run_of(runs, "msivm", "msix", 3);
	assert_true(json_is_null(json_object_get(r, "ready_s")));
	assert_false(json_is_true(json_object_get(r, "worked")));
	assert_string_equal(json_string_value(json_object_get(r, "console")), "bad byte ? here");
	r = run_of(runs, "msivm", "msix", 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "stats"), "exits")), 5);
	w = json_object_get(json_object_get(r, "work"), "fio-rw");
	assert_true(json_is_real(json_object_get(json_object_get(w, "exits"), "mmio_exits")));
	assert_true(json_is_null(json_object_get(json_object_get(w, "exits"), "io_exits")));
	assert_true(json_real_value(json_object_get(json_object_get(w, "fio"), "read_mib_s")) == 104.5);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(w, "irqs"),
									   1), "count")), 5000);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(w, "irqs"),
									     1), "chip")),
			    "PCI-MSIX-0000:00:04.0");
	w = json_object_get(json_object_get(r, "work"), "iperf-tx");
	assert_true(json_is_null(json_object_get(w, "ios")));
	assert_true(json_real_value(json_object_get(json_object_get(w, "iperf"), "received_mbit_s")) ==
		    1080);
	r = run_of(runs, "msivm", "msix", 2);
	assert_string_equal(json_string_value(json_object_get(r, "stats")), "not json {");
	assert_string_equal(json_string_value(json_object_get(r, "level_with_msi")),
			    "virtio1-req.0 on IO-APIC 11-fasteoi during fio-rw");
	r = run_of(runs, "msivm", "nomsi", 3);
	assert_true(json_is_true(json_object_get(r, "failed")));
	assert_int_equal(json_integer_value(json_object_get(r, "status")), 137);
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(
		run_of(runs, "msivm", "nomsi", 1), "work"), "iperf-tx"), "error")),
			    "iperf3: unable to connect to server");
	json_decref(root);
}

static bool have_gnuplot(void)
{
	return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

static void test_charts(void **state)
{
	struct lab *lab = *state;
	static const char *const svgs[] = { "linux-boot.svg", "linux-storage.svg",
					    "linux-network.svg", "linux-interrupts.svg" };
	if (!have_gnuplot()) {
		assert_has(lab->txt, "charts not drawn: gnuplot not found");
		print_message("gnuplot missing: the SVG files are not checked\n");
		return;
	}
	for (unsigned i = 0; i < 4; i++) {
		char *svg = slurp(lab->dir, svgs[i]);
		if (!svg || !strstr(svg, "</svg>"))
			fail_msg("%s missing or incomplete", svgs[i]);
		if (!strstr(svg, "mean of"))
			fail_msg("%s has no \"mean of\" in its title", svgs[i]);
		free(svg);
	}
	assert_has(lab->txt, "charts: ");
	assert_has(lab->txt, "linux-interrupts.svg; script linux-charts.gp");
}

/* ll_report of n cells into a fresh directory (options changed by `tune` if non-NULL): its
 * report.txt (the caller frees it). The cells are freed, the directory removed. */
static char *report_text(struct ll_cell *cells, unsigned n, void (*tune)(struct ll_options *o))
{
	struct ll_options o;
	struct error err = { "" };
	char dir[64] = "/tmp/msivm-lr-XXXXXX", *txt;
	int ret;
	assert_non_null(mkdtemp(dir));
	options(&o, dir);
	if (tune)
		tune(&o);
	ret = ll_report(&o, cells, n, &err);
	txt = slurp(dir, "report.txt");
	free_cells(cells, n);
	remove_dir(dir);
	if (ret)
		fail_msg("ll_report = %d: %s", ret, err.msg);
	assert_non_null(txt);
	return txt;
}

static void boot_only_options(struct ll_options *o)
{
	o->io_runs = 0;
	o->interrupted = 2;
	snprintf(o->host.cpu, sizeof(o->host.cpu), "Intel(R) Xeon(R)");
}

/* A lab without workloads (--io-runs 0): the ready table, and no claim on fio. */
static void test_boot_only(void **state)
{
	static const struct fig f = { 1.0, 1.5, 3.0, 0, 0, 0, 0, 0, 0 };
	struct ll_cell *cells = calloc(2, sizeof(*cells));
	char *txt;
	assert_non_null(cells);
	cells[0] = (struct ll_cell){ .cfg = &cfg_msix, .vmm = LAB_MSIVM, .nruns = 2 };
	cells[1] = (struct ll_cell){ .cfg = &cfg_intx, .vmm = LAB_MSIVM, .nruns = 0 };
	for (unsigned r = 0; r < 2; r++)
		fill_run(&cells[0].runs[r], &f, false, true);
	txt = report_text(cells, 2, boot_only_options);
	assert_null(strstr(txt, "NOTE: this host is itself emulated"));
	line_with(txt, "PARTIAL REPORT: the lab was interrupted by signal 2");
	line_with(txt, "  msivm msix (MSI-X, a vector per queue), run 1, at ready (no run ran the "
		       "workloads):");
	line_with(txt, "    25     PCI-MSIX-0000:00:04.0    edge             40  virtio1-req.0");
	line_with(strstr(txt, "\nNetwork"), "  no run ran the workloads");
	line_with(txt, "     msivm: not measured (Run /init against intx: msivm intx not run)");
	line_with(txt, "     msivm: not measured (fio-rw read against intx: no msivm msix run ran the "
		       "workloads; fio-rw write against intx: no msivm msix run ran the workloads)");
	line_with(txt, "boot only (no workloads); 8 of 8 runs done");
	line_with(strstr(txt, "\nStorage"), "  no run ran the workloads");
	line_with(txt, "     msivm vs QEMU: QEMU not in this lab");
	line_with(txt, "  msivm intx: not run (the lab was interrupted)");
	free(txt);
}

/* MSI-X slower than intx, a little faster than nomsi within the spread: partly reproduced. */
static void test_not_reproduced(void **state)
{
	static const struct fig msix[] = { { .run_init = 1.30 }, { .run_init = 1.32 } };
	static const struct fig intx[] = { { .run_init = 1.00 }, { .run_init = 1.02 } };
	static const struct fig nomsi[] = { { .run_init = 1.30 }, { .run_init = 1.40 } };
	struct ll_cell *cells = calloc(3, sizeof(*cells));
	char *txt;
	assert_non_null(cells);
	cells[0] = (struct ll_cell){ .cfg = &cfg_msix, .vmm = LAB_MSIVM, .nruns = 2 };
	cells[1] = (struct ll_cell){ .cfg = &cfg_intx, .vmm = LAB_MSIVM, .nruns = 2 };
	cells[2] = (struct ll_cell){ .cfg = &cfg_nomsi, .vmm = LAB_MSIVM, .nruns = 2 };
	for (unsigned r = 0; r < 2; r++) {
		fill_run(&cells[0].runs[r], &msix[r], false, true);
		fill_run(&cells[1].runs[r], &intx[r], false, false);
		fill_run(&cells[2].runs[r], &nomsi[r], false, false);
	}
	txt = report_text(cells, 3, NULL);
	assert_row(txt, "  msivm  intx     Run /init (s)", "1.310     1.010       1.30   -22.9%");
	line_with(txt, "     msivm: partly reproduced: Run /init: intx 29.7% faster than MSI-X (1.010 "
		       "vs 1.310 s), the seed: ~21% faster with MSI-X; Run /init: MSI-X 3.1% faster "
		       "than nomsi (1.310 vs 1.350 s; the runs' ranges overlap)");
	free(txt);
}

static void test_unwritable_dir(void **state)
{
	struct ll_cell cell = { .cfg = &cfg_msix, .vmm = LAB_MSIVM, .skipped = true };
	struct ll_options o;
	struct error err = { "" };
	options(&o, "/nonexistent-msivm-lr/sub");
	assert_int_not_equal(ll_report(&o, &cell, 1, &err), 0);
	assert_non_null(strstr(err.msg, "cannot write /nonexistent-msivm-lr/sub/report.txt"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_report_written),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_boot_table),
		cmocka_unit_test(test_io_tables),
		cmocka_unit_test(test_cost_tables),
		cmocka_unit_test(test_ratios),
		cmocka_unit_test(test_findings),
		cmocka_unit_test(test_interrupts_and_warning),
		cmocka_unit_test(test_failed_and_skipped),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_charts),
		cmocka_unit_test(test_boot_only),
		cmocka_unit_test(test_not_reproduced),
		cmocka_unit_test(test_unwritable_dir),
	};
	return cmocka_run_group_tests_name("linux_report", tests, group_setup, group_teardown);
}
