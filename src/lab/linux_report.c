/* Linux lab report: header, boot, storage, network and per-I/O cost tables, failures -> stdout and report.txt. */
#include "lab/linux_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool emulated_host(const struct lab_host *h)
{
	return strstr(h->cpu, "QEMU") || strstr(h->cpu, "TCG");
}

static unsigned level_warnings(const struct ll_cell *cells, unsigned ncells)
{
	unsigned n = 0;
	for (unsigned i = 0; i < ncells; i++)
		for (unsigned r = 0; r < cells[i].nruns && r < LL_MAX_RUNS; r++)
			n += !!*cells[i].runs[r].level_with_msi;
	return n;
}

static void print_header(FILE *out, const struct ll_options *o, const struct ll_cell *cells,
			 unsigned ncells)
{
	unsigned warnings = level_warnings(cells, ncells);
	fprintf(out, "msivm lab --guest linux %s, %s\ncommand:", MSIVM_VERSION, o->date);
	for (int i = 0; o->argv && i < o->argc; i++)
		fprintf(out, " %s", o->argv[i]);
	fprintf(out, "\nhost: Linux %s, %s, %u CPUs, KVM modules: %s, ", o->host.kernel, o->host.cpu,
		o->host.cpus, *o->host.kvm_modules ? o->host.kvm_modules : "none");
	if (o->host.kvm_api >= 0)
		fprintf(out, "KVM API %d\n", o->host.kvm_api);
	else
		fprintf(out, "no KVM: %s\n", o->host.kvm_error);
	if (*o->host.kvm_mode_detail)
		fprintf(out, "KVM mode: %s\n", o->host.kvm_mode_detail);
	if (emulated_host(&o->host))
		fprintf(out, "NOTE: this host is itself emulated (nested under QEMU TCG): absolute figures "
			     "are ~100x those of hardware; compare ratios only.\n");
	fprintf(out, "guest: kernel %s, initrd %s, %u vCPUs, %u MiB\n", o->kernel ? o->kernel : "?",
		o->initrd ? o->initrd : "?", o->cpus, o->mem_mib);
	fprintf(out, "runs: %u boots per configuration, ", o->runs);
	if (o->io_runs)
		fprintf(out, "the first %u with the workloads (fio %u s per job, iperf3 %u s per "
			     "direction)", o->io_runs, o->fio_s, o->iperf_s);
	else
		fprintf(out, "boot only (no workloads)");
	fprintf(out, "; %u of %u runs done, %u failed\n", o->runs_done, o->runs_planned,
		o->runs_failed);
	if (o->interrupted)
		fprintf(out, "PARTIAL REPORT: the lab was interrupted by signal %d (%s) after %u of %u "
			     "runs; cells not reached say \"not run\"\n", o->interrupted,
			strsignal(o->interrupted), o->runs_done, o->runs_planned);
	if (warnings)
		fprintf(out, "WARNING: %u run%s had a level-triggered virtio line while MSI-X was on "
			     "(see Interrupts per vector)\n", warnings, warnings == 1 ? "" : "s");
	fprintf(out, "Failed runs are left out of every figure (listed at the end).\n");
}

static bool any_worked(const struct ll_cell *c)
{
	for (unsigned r = 0; r < c->nruns && r < LL_MAX_RUNS; r++)
		if (c->runs[r].worked)
			return true;
	return false;
}

/* Prints "  vmm config " and returns true if the cell has figures to show; else says why not. */
static bool row_start(FILE *out, const struct ll_cell *c, bool work)
{
	fprintf(out, "  %-6s %-12s ", lr_vmm_name(c->vmm), c->cfg ? c->cfg->name : "?");
	if (c->skipped)
		fprintf(out, "skipped: %s\n", c->skip_reason);
	else if (!c->nruns)
		fprintf(out, "not run\n");
	else if (!lr_ok_runs(c))
		fprintf(out, "every run failed\n");
	else if (work && !lr_worked_runs(c))
		fprintf(out, "%s\n", any_worked(c) ? "every run with workloads failed"
						   : "no run with workloads");
	else
		return true;
	return false;
}

/* Whether any run of the lab that did not fail ran the workloads. */
static bool lab_worked(const struct ll_cell *cells, unsigned ncells)
{
	for (unsigned i = 0; i < ncells; i++)
		if (lr_worked_runs(&cells[i]))
			return true;
	return false;
}

/* Prints a workload section's title; false (and says so) when no run ran the workloads. */
static bool work_section(FILE *out, const struct ll_cell *cells, unsigned ncells,
			 const char *title)
{
	fprintf(out, "\n%s\n", title);
	if (lab_worked(cells, ncells))
		return true;
	fprintf(out, "  no run ran the workloads\n");
	return false;
}

/* "1.000 ± 0.010" (mean ± (max-min)/2), "(n=2)" appended when fewer runs than ok had it,
 * padded to `width` columns. */
static void print_spread(FILE *out, struct lr_sum s, unsigned ok, int width)
{
	char buf[64];
	int n;
	if (!s.n)
		n = snprintf(buf, sizeof(buf), "n/a");
	else
		n = snprintf(buf, sizeof(buf), "%.3f ± %.3f%s", s.mean, (s.max - s.min) / 2,
			     s.n < ok ? " (n<ok)" : "") - 1; /* '±' is two bytes, one column */
	fprintf(out, "%s%*s", buf, n < width ? width - n : 1, "");
}

static void print_boot(FILE *out, const struct ll_cell *cells, unsigned ncells)
{
	fprintf(out, "\nBoot (s; mean ± spread over the runs that did not fail, spread = (max-min)/2;\n"
		     "  Run /init: the guest kernel's dmesg; init ready: guest uptime when init saw every "
		     "device;\n  ok/runs: runs that did not fail / runs; n<ok: some ok runs lack the "
		     "figure)\n");
	fprintf(out, "  %-6s %-12s %-20s %-20s %-20s %7s  %s\n", "vmm", "config", "Run /init",
		"init ready", "VMM start to exit", "ok/runs", "Linux uses");
	for (unsigned i = 0; i < ncells; i++) {
		const struct ll_cell *c = &cells[i];
		unsigned ok = lr_ok_runs(c);
		char okr[24];
		if (!row_start(out, c, false))
			continue;
		print_spread(out, lr_metric_sum(c, LR_RUN_INIT), ok, 21);
		print_spread(out, lr_metric_sum(c, LR_READY), ok, 21);
		print_spread(out, lr_metric_sum(c, LR_WALL), ok, 21);
		snprintf(okr, sizeof(okr), "%u/%u", ok, c->nruns);
		fprintf(out, "%7s  %s\n", okr, c->cfg && c->cfg->label ? c->cfg->label : "");
	}
}

/* A row of means of metrics `ms`, each `width` wide, then the runs with workloads. */
static void print_means(FILE *out, const struct ll_cell *c, const unsigned *ms, unsigned n,
			int width)
{
	char buf[32];
	if (!row_start(out, c, true))
		return;
	for (unsigned k = 0; k < n; k++)
		fprintf(out, "%*s ", width, lr_fmt(buf, sizeof(buf), lr_metric_sum(c, ms[k]).mean));
	fprintf(out, "%5u\n", lr_worked_runs(c));
}

static void print_storage(FILE *out, const struct ll_cell *cells, unsigned ncells)
{
	static const unsigned fio[] = { LR_RW_READ, LR_RW_WRITE, LR_QD1_IOPS, LR_QD1_LAT, LR_QD4_IOPS,
					LR_QD32_IOPS, LR_QD32_P99, LR_QD128_IOPS };
	if (!work_section(out, cells, ncells, "Storage (fio in the guest on a virtio-blk disk, "
			  "O_DIRECT; mean over the runs with workloads that have the figure)"))
		return;
	fprintf(out, "  %-6s %-12s %12s %12s %12s %12s %12s %12s %12s %12s\n", "", "", "fio-rw read",
		"fio-rw write", "fio-qd1", "qd1 mean", "fio-qd4", "fio-qd32", "qd32 p99", "fio-qd128");
	fprintf(out, "  %-6s %-12s %12s %12s %12s %12s %12s %12s %12s %12s %5s\n", "vmm", "config",
		"MiB/s", "MiB/s", "IOPS", "lat (us)", "IOPS", "IOPS", "lat (us)", "IOPS", "runs");
	for (unsigned i = 0; i < ncells; i++)
		print_means(out, &cells[i], fio, 8, 12);
}

static void print_network(FILE *out, const struct ll_cell *cells, unsigned ncells)
{
	static const unsigned net[] = { LR_TX, LR_RX };
	if (!work_section(out, cells, ncells, "Network (iperf3 in the guest against the host over "
			  "virtio-net; Mbit/s received; mean over the runs with workloads)"))
		return;
	fprintf(out, "  %-6s %-12s %17s %17s %5s\n", "vmm", "config", "guest->host (tx)",
		"host->guest (rx)", "runs");
	for (unsigned i = 0; i < ncells; i++)
		print_means(out, &cells[i], net, 2, 17);
}

/* The vsock device of the cell's runs with workloads ("unix", "vhost"; "-": none ran it). */
static const char *vsock_kind(const struct ll_cell *c)
{
	for (unsigned r = 0; r < c->nruns && r < LL_MAX_RUNS; r++)
		if (c->runs[r].worked && c->runs[r].vsock)
			return c->runs[r].vsock == LL_VSOCK_UNIX ? "unix" : "vhost-vsock";
	return "-";
}

static void print_vsock(FILE *out, const struct ll_cell *cells, unsigned ncells)
{
	static const unsigned ms[] = { LR_VSOCK_P50, LR_VSOCK_P99, LR_VSOCK_BULK };
	char buf[32];
	if (!work_section(out, cells, ncells, "vsock (the guest's AF_VSOCK stream to the host's "
			  "services: round trips of 64 bytes, p50 and p99 of\n  each run's 2000; 16 MiB "
			  "guest->host until the host read it all; mean over the runs with workloads;\n"
			  "  backend: msivm's unix (hybrid, the data through msivm) or the kernel's "
			  "vhost-vsock, QEMU's always)"))
		return;
	fprintf(out, "  %-6s %-12s %-12s %13s %13s %13s %5s\n", "vmm", "config", "backend",
		"rr p50 (us)", "rr p99 (us)", "bulk MiB/s", "runs");
	for (unsigned i = 0; i < ncells; i++) {
		const struct ll_cell *c = &cells[i];
		if (!row_start(out, c, true))
			continue;
		fprintf(out, "%-12s ", vsock_kind(c));
		for (unsigned k = 0; k < 3; k++)
			fprintf(out, "%13s ", lr_fmt(buf, sizeof(buf), lr_metric_sum(c, ms[k]).mean));
		fprintf(out, "%5u\n", lr_worked_runs(c));
	}
}

/* Whether any cell has exit reason e counted during workload w. */
static bool exits_seen(const struct ll_cell *cells, unsigned ncells, enum ll_work w, unsigned e)
{
	for (unsigned i = 0; i < ncells; i++)
		if (lr_summarize(&cells[i], lr_per_unit, w * LR_PER_N + e).n)
			return true;
	return false;
}

static void print_cost(FILE *out, const struct ll_cell *cells, unsigned ncells, enum ll_work w)
{
	const char *unit = lr_unit_name(w);
	bool seen[LL_NEXIT], any = false;
	char buf[32];
	for (unsigned e = 0; e < LL_NEXIT; e++)
		any |= seen[e] = exits_seen(cells, ncells, w, e);
	fprintf(out, "\n%s: host CPU (us) and KVM exits per %s\n", ll_work_name(w), unit);
	fprintf(out, "  %-6s %-12s %9s %9s %9s", "vmm", "config", "VMM CPU", "vCPU CPU", "irqs");
	for (unsigned e = 0; e < LL_NEXIT; e++) {
		const char *name = ll_exit_name((enum ll_exit)e);
		size_t len = strcspn(name, "_");
		if (seen[e])
			fprintf(out, " %9.*s", (int)(e == LL_EXIT_IRQ_WINDOW ? 10 : len), name);
	}
	fprintf(out, "%s %5s\n", any ? "" : " KVM exits", "runs");
	for (unsigned i = 0; i < ncells; i++) {
		const struct ll_cell *c = &cells[i];
		if (!row_start(out, c, true))
			continue;
		for (unsigned what = LR_PER_OTHER; what < LR_PER_N; what++)
			fprintf(out, "%9s ", lr_fmt(buf, sizeof(buf),
						    lr_summarize(c, lr_per_unit, w * LR_PER_N + what).mean));
		for (unsigned e = 0; e < LL_NEXIT; e++)
			if (seen[e])
				fprintf(out, "%9s ", lr_fmt(buf, sizeof(buf),
							    lr_summarize(c, lr_per_unit, w * LR_PER_N + e).mean));
		if (!any)
			fprintf(out, "%9s ", "n/a");
		fprintf(out, "%5u\n", lr_worked_runs(c));
	}
	if (!any)
		fprintf(out, "  KVM exits n/a: no KVM debugfs (exits were not counted on this host)\n");
}

static void print_costs(FILE *out, const struct ll_cell *cells, unsigned ncells)
{
	if (!work_section(out, cells, ncells, "Host CPU and exits per unit moved (fio: per I/O; iperf: "
			  "per MiB; mean over the runs with workloads)\n  VMM CPU: the VMM's threads "
			  "other than the vCPUs; vCPU CPU: the vCPU threads; irqs: virtio interrupts\n"
			  "  in the guest; exits: KVM exits by reason (debugfs), both VMMs alike"))
		return;
	for (unsigned w = 0; w < LL_NWORK; w++)
		print_cost(out, cells, ncells, (enum ll_work)w);
}

static void print_failures(FILE *out, const struct ll_options *o, const struct ll_cell *cells,
			   unsigned ncells)
{
	unsigned failed = 0, skipped = 0, notrun = 0;
	for (unsigned i = 0; i < ncells; i++) {
		skipped += cells[i].skipped;
		notrun += !cells[i].skipped && !cells[i].nruns;
		for (unsigned r = 0; r < cells[i].nruns && r < LL_MAX_RUNS; r++)
			failed += cells[i].runs[r].failed;
	}
	if (failed)
		fprintf(out, "\nFailed runs (exit status: why; console and standard error in report.json):\n");
	for (unsigned i = 0; i < ncells && failed; i++)
		for (unsigned r = 0; r < cells[i].nruns && r < LL_MAX_RUNS; r++)
			if (cells[i].runs[r].failed)
				fprintf(out, "  %s %s run %u (status %d): %s\n", lr_vmm_name(cells[i].vmm),
					cells[i].cfg ? cells[i].cfg->name : "?", r + 1,
					cells[i].runs[r].status, cells[i].runs[r].error);
	if (skipped || notrun)
		fprintf(out, "\nSkipped configurations:\n");
	for (unsigned i = 0; i < ncells; i++)
		if (cells[i].skipped || !cells[i].nruns)
			fprintf(out, "  %s %s: %s%s\n", lr_vmm_name(cells[i].vmm),
				cells[i].cfg ? cells[i].cfg->name : "?",
				cells[i].skipped ? "skipped: " : "not run",
				cells[i].skipped ? cells[i].skip_reason
						 : o->interrupted ? " (the lab was interrupted)" : "");
}

static void print_report(FILE *out, const struct ll_options *o, const struct ll_cell *cells,
			 unsigned ncells, const char *charts)
{
	print_header(out, o, cells, ncells);
	print_boot(out, cells, ncells);
	lr_print_passthrough(out, cells, ncells);
	print_storage(out, cells, ncells);
	print_network(out, cells, ncells);
	print_vsock(out, cells, ncells);
	print_costs(out, cells, ncells);
	lr_print_interrupts(out, cells, ncells);
	lr_print_ratios(out, cells, ncells);
	lr_print_findings(out, cells, ncells);
	print_failures(out, o, cells, ncells);
	fprintf(out, "\nreport: %s/report.txt; every raw run: %s/report.json; %s\n", o->out_dir,
		o->out_dir, charts);
}

/* Writes text to path. Returns 0 or -errno (err says why). */
static int write_text(const char *path, const char *text, struct error *err)
{
	FILE *f = fopen(path, "we");
	int ret;
	if (!f) {
		ret = -errno;
		return error_set(err, ret, "cannot write %s: %s", path, strerror(-ret));
	}
	ret = fputs(text, f) < 0 ? -EIO : 0;
	if (fclose(f) || ret)
		return error_set(err, -EIO, "cannot write %s", path);
	return 0;
}

/* The charts first (report.txt says whether they were drawn), then the text on stdout
 * (whatever happens to the files), report.txt and report.json. */
int ll_report(const struct ll_options *o, struct ll_cell *cells, unsigned ncells,
	      struct error *err)
{
	char path[4096], note[512], charts[4600];
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int ret;
	if (lr_write_charts(o, cells, ncells, note, sizeof(note)))
		snprintf(charts, sizeof(charts), "charts not drawn: %s", note);
	else
		snprintf(charts, sizeof(charts), "charts: %s/linux-*.svg (%s)", o->out_dir, note);
	f = open_memstream(&text, &len);
	if (!f)
		return error_set(err, -ENOMEM, "no memory for the report");
	print_report(f, o, cells, ncells, charts);
	if (fclose(f)) {
		free(text);
		return error_set(err, -ENOMEM, "no memory for the report");
	}
	fputs(text, stdout);
	fflush(stdout);
	snprintf(path, sizeof(path), "%s/report.txt", o->out_dir);
	ret = write_text(path, text, err);
	static const char *const svgs[] = { "linux-passthrough.svg", "linux-boot.svg",
					    "linux-storage.svg", "linux-network.svg",
					    "linux-interrupts.svg" };
	struct error herr = { "" };
	if (lr_write_html(o, text, svgs, sizeof(svgs) / sizeof(svgs[0]), &herr) && !ret)
		ret = error_set(err, -EIO, "%s", herr.msg);
	free(text);
	snprintf(path, sizeof(path), "%s/report.json", o->out_dir);
	if (lr_write_json(o, cells, ncells, path) && !ret)
		ret = error_set(err, -EIO, "cannot write %s", path);
	return ret;
}
