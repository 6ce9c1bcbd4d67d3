/* Lab report: per-metric summaries -> terminal table, report.json with every raw run, SVG charts (gnuplot). */
#include "lab/lab.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/file.h"
#include "virtio/virtio_pci.h"

static bool is_count(const struct lab_metric_def *md)
{
	return !*md->unit;
}

/* "vs intx" column: a count as the ratio of the medians (x0.05), a time or a
 * rate as the change of the median (+12.0%); the baseline itself is "baseline". */
static void change(char *buf, size_t len, const struct lab_metric_def *md, struct lab_summary s,
		   struct lab_summary base, bool self)
{
	if (self)
		snprintf(buf, len, "%s", s.n ? "baseline" : "-");
	else if (!s.n || !base.n || base.median == 0)
		snprintf(buf, len, "-");
	else if (is_count(md))
		snprintf(buf, len, "x%.2f", s.median / base.median);
	else
		snprintf(buf, len, "%+.1f%%", (s.median - base.median) / base.median * 100);
}

static const char *sig_name(int sig)
{
	switch (sig) {
	case SIGINT: return "SIGINT";
	case SIGTERM: return "SIGTERM";
	case SIGHUP: return "SIGHUP";
	default: return "a signal";
	}
}

/* "kvm_pvm, KVM API 12" or "kvm_intel; cannot open /dev/kvm: Permission denied". */
static void kvm_description(char *buf, size_t len, const struct lab_host *h)
{
	char mods[96] = "";
	size_t k = 0;
	char tmp[96], *save = NULL;
	snprintf(tmp, sizeof(tmp), "%s", h->kvm_modules);
	for (char *t = strtok_r(tmp, " ", &save); t; t = strtok_r(NULL, " ", &save))
		if (strcmp(t, "kvm") && k < sizeof(mods))
			k += (size_t)snprintf(mods + k, sizeof(mods) - k, "%s%s", k ? "+" : "", t);
	if (!k)
		snprintf(mods, sizeof(mods), "%s", *h->kvm_modules ? h->kvm_modules : "no kvm module");
	if (h->kvm_api >= 0)
		snprintf(buf, len, "%s, KVM API %d", mods, h->kvm_api);
	else
		snprintf(buf, len, "%s; %s", mods, h->kvm_error);
}

/* The command line as given, from /proc/self/cmdline (else "msivm lab ..."). */
static json_t *argv_json(const struct lab_options *o)
{
	json_t *a = json_array();
	char buf[8192];
	FILE *f = fopen("/proc/self/cmdline", "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	if (n) {
		buf[n] = 0;
		for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
			json_array_append_new(a, json_string(buf + i));
		return a;
	}
	json_array_append_new(a, json_string(o->msivm));
	for (int i = 0; i < o->argc; i++)
		json_array_append_new(a, json_string(o->argv[i]));
	return a;
}

static void print_header(FILE *out, const struct lab_options *o)
{
	char kvm[256];
	json_t *a = argv_json(o);
	size_t i;
	json_t *v;
	kvm_description(kvm, sizeof(kvm), &o->host);
	fprintf(out, "msivm lab %s, %s:", MSIVM_VERSION, o->date);
	json_array_foreach(a, i, v)
		fprintf(out, " %s", json_string_value(v));
	json_decref(a);
	fprintf(out, "\nhost: Linux %s, %s, %u CPUs, %s\n", o->host.kernel, o->host.cpu, o->host.cpus, kvm);
	fprintf(out, "KVM mode: %s\n", o->host.kvm_mode_detail);
	if (o->interrupted)
		fprintf(out, "PARTIAL REPORT: interrupted by %s after %u of %u runs; configurations not "
			     "reached show \"not run\"\n", sig_name(o->interrupted), o->runs_done,
			o->runs_planned);
	fprintf(out, "runs: %u of %u done, %u failed%s\n", o->runs_done, o->runs_planned,
		o->runs_failed, o->runs_failed ? " (listed at the end; a failed run has no figures)" : "");
}

/* The legend of the per-experiment tables. */
static void print_legend(FILE *out, const struct lab_options *o)
{
	fprintf(out, "\nmedian, min, max: over the successful runs of a configuration (report.json adds the\n"
		     "  mean and the quartiles).\n"
		     "vs intx: against the intx (legacy INTx) configuration of the same VMM: for counts\n"
		     "  the ratio of the medians (x0.05 = a twentieth of intx's), for times and rates the\n"
		     "  change of the median (+12.0%% = 12%% more than intx); the intx rows are the baseline.\n");
	if (o->vs_qemu)
		fprintf(out, "msivm/qemu: the median of msivm's figure divided by QEMU's, batch by batch, in "
			     "the same mode (x0.50 = half of QEMU's).\n");
	fprintf(out, "Whole-run host CPU and KVM's exit count are in report.json only: on this kind of host\n"
		     "  they are mostly the guest's own (emulated) code, the same under both VMMs.\n");
}

static void print_failures(FILE *out, const struct lab_options *o,
			   struct lab_cell (*cells)[2][LAB_MAX_MODES])
{
	if (!o->runs_failed)
		return;
	fprintf(out, "\nFailed runs (exit status: first error line; the whole standard error is in "
		     "report.json):\n");
	for (unsigned e = 0; e < o->nexps; e++)
		for (unsigned vmm = 0; vmm < 2; vmm++)
			for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
				const struct lab_cell *c = &cells[e][vmm][m];
				for (unsigned r = 0; r < c->nruns; r++)
					if (c->runs[r].failed)
						fprintf(out, "  %s %s %s run %u (status %d): %s\n",
							o->exps[e]->name, vmm ? "qemu" : "msivm",
							irq_mode_name((enum irq_mode)m), r + 1,
							c->runs[r].status, c->runs[r].error);
			}
	fprintf(out, "%u of %u runs failed\n", o->runs_failed, o->runs_done);
}

/* Runs of c whose work window failed as a measurement (lab_cpu_window_ok); *why: the first's. */
static unsigned failed_windows(const struct lab_cell *c, const char **why)
{
	unsigned f = 0;
	for (unsigned r = 0; r < c->nruns; r++)
		if (!c->runs[r].failed && c->runs[r].window_failed && !f++)
			*why = c->runs[r].window_why;
	return f;
}

/* True for the figures a work window measures (the VMM's and the vCPUs' CPU in it). */
static bool window_metric(const struct lab_metric_def *md)
{
	return !strcmp(md->key, LAB_VMM_CPU_KEY) || !strcmp(md->key, "vcpu_cpu_us_per_req");
}

static unsigned failed_runs(const struct lab_cell *c)
{
	unsigned f = 0;
	for (unsigned r = 0; r < c->nruns; r++)
		f += c->runs[r].failed;
	return f;
}

/* A figure with three significant digits and never an exponent: 4180, 41.8, 0.42. */
static void fmt_fig(char *buf, size_t len, double v)
{
	double a = fabs(v);
	snprintf(buf, len, "%.*f", a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3, v);
}

/* "metric (unit)" of a metric, as the tables show it. */
static void metric_label(char *buf, size_t len, const struct lab_metric_def *md)
{
	snprintf(buf, len, "%s%s%s%s", md->label, *md->unit ? " (" : "", md->unit, *md->unit ? ")" : "");
}

/* The metric column's width: the longest label shown (labels outgrew a fixed width). */
static int label_width(const struct lab_options *o)
{
	int w = (int)strlen("metric");
	for (unsigned e = 0; e < o->nexps; e++)
		for (unsigned k = 0; k < o->exps[e]->nmetrics; k++) {
			char label[96];
			metric_label(label, sizeof(label), &o->exps[e]->metrics[k]);
			if (!o->exps[e]->metrics[k].json_only && (int)strlen(label) > w)
				w = (int)strlen(label);
		}
	return w;
}

static void print_table(FILE *out, const struct lab_options *o,
			struct lab_cell (*cells)[2][LAB_MAX_MODES])
{
	unsigned nvmm = o->vs_qemu ? 2 : 1;
	int w = label_width(o);
	for (unsigned e = 0; e < o->nexps; e++) {
		const struct lab_experiment *x = o->exps[e];
		fprintf(out, "\n%s (%u run%s each)\n", x->title, o->runs, o->runs == 1 ? "" : "s");
		fprintf(out, "  %-*s %-6s %-12s %10s %10s %10s %9s%s\n", w, "metric", "vmm", "mode",
			"median", "min", "max", "vs intx", o->vs_qemu ? "  msivm/qemu" : "");
		for (unsigned k = 0; k < x->nmetrics; k++) {
			const struct lab_metric_def *md = &x->metrics[k];
			if (md->json_only)
				continue;
			char label[96];
			metric_label(label, sizeof(label), md);
			for (unsigned vmm = 0; vmm < nvmm; vmm++) {
				if (vmm == LAB_QEMU && md->msivm_only)
					continue;
				struct lab_summary base = lab_summarize(&cells[e][vmm][IRQ_MODE_INTX], k);
				for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
					const char *why;
					if (!lab_cell_wanted(o, x, (enum lab_vmm)vmm, m, &why))
						continue;
					const struct lab_cell *c = &cells[e][vmm][m];
					const char *mode = irq_mode_name((enum irq_mode)m);
					if (c->skipped) {
						fprintf(out, "  %-*s %-6s %-12s skipped: %s\n", w, label,
							vmm ? "qemu" : "msivm", mode, c->skip_reason);
						continue;
					}
					struct lab_summary s = lab_summarize(c, k);
					char chg[16], ratio[24] = "";
					change(chg, sizeof(chg), md, s, base, m == IRQ_MODE_INTX);
					if (o->vs_qemu && vmm == LAB_MSIVM && !md->msivm_only) {
						struct lab_summary q = lab_paired_ratio(c, &cells[e][LAB_QEMU][m], k);
						char r[16];
						snprintf(r, sizeof(r), "x%.2f", q.median);
						snprintf(ratio, sizeof(ratio), "  %10s", q.n ? r : "-");
					}
					unsigned f = failed_runs(c);
					const char *wwhy = "";
					unsigned wf = window_metric(md) ? failed_windows(c, &wwhy) : 0;
					char note[192] = "";
					if (wf)
						snprintf(note, sizeof(note), "  (measurement failed in %u of %u runs: "
							 "%s)", wf, c->nruns, wwhy);
					else if (f)
						snprintf(note, sizeof(note), "  (%u of %u runs failed)", f, c->nruns);
					char med[24], lo[24], hi[24];
					fmt_fig(med, sizeof(med), s.median);
					fmt_fig(lo, sizeof(lo), s.min);
					fmt_fig(hi, sizeof(hi), s.max);
					if (!c->nruns)
						fprintf(out, "  %-*s %-6s %-12s %10s\n", w, label,
							vmm ? "qemu" : "msivm", mode, "not run");
					else if (!s.n)
						fprintf(out, "  %-*s %-6s %-12s %10s%s\n", w, label,
							vmm ? "qemu" : "msivm", mode, wf ? "FAILED" : "n/a", note);
					else
						fprintf(out, "  %-*s %-6s %-12s %10s %10s %10s %9s%s%s\n", w,
							label, vmm ? "qemu" : "msivm", mode, med, lo, hi, chg,
							ratio, note);
				}
			}
		}
	}
}

static json_t *num(double v) { return isnan(v) ? json_null() : json_real(v); }

/* A JSON string of captured output; bytes that are not UTF-8 become '?'. */
static json_t *text(const char *s)
{
	json_t *j = json_string(s ? s : "");
	if (j)
		return j;
	char *copy = strdup(s);
	if (!copy)
		return json_string("");
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(copy);
	free(copy);
	return j ? j : json_string("");
}

/* The work window of one run: when (ms since the VMM's start), how long, CPU by thread kind and by thread name. */
static json_t *lab_work_cpu_json(const struct lab_run *run)
{
	static const char *const kinds[] = { "vmm", "vcpu", "kvm" };
	const struct lab_cpu_window *w = &run->work_cpu;
	json_t *names = json_object();
	json_t *j = json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:i,s:i,s:b}", "begin_ms",
			      run->work_begin_ms, "window_ms", run->work_ms,
			      "vmm_ns", w->vmm_ns, "vcpu_ns", w->vcpu_ns, "kvm_ns", w->kvm_ns,
			      "vcpu_utime_ns", w->vcpu_utime_ns, "vcpu_stime_ns", w->vcpu_stime_ns,
			      "vcpu_guest_ns", w->vcpu_guest_ns, "threads_started", (int)w->started,
			      "threads_ended", (int)w->ended, "truncated", (int)w->truncated);
	json_object_set_new(j, "measurement_failed", json_boolean(run->window_failed));
	if (run->window_failed)
		json_object_set_new(j, "failed_why", json_string(run->window_why));
	for (unsigned i = 0; i < w->nnames; i++)
		json_object_set_new(names, w->names[i].name,
				    json_pack("{s:s,s:f}", "kind", kinds[w->names[i].kind], "ns",
					      w->names[i].ns));
	json_object_set_new(j, "threads", names);
	return j;
}

static int write_json(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES],
		      const char *path)
{
	json_t *root = json_object(), *exps = json_array(), *host = json_object(), *kvm = json_object();
	char desc[256];
	json_object_set_new(root, "version", json_string(MSIVM_VERSION));
	json_object_set_new(root, "argv", argv_json(o));
	json_object_set_new(root, "date", json_string(o->date));
	json_object_set_new(host, "kernel", json_string(o->host.kernel));
	json_object_set_new(host, "cpu", json_string(o->host.cpu));
	json_object_set_new(host, "cpus", json_integer(o->host.cpus));
	kvm_description(desc, sizeof(desc), &o->host);
	json_object_set_new(kvm, "description", json_string(desc));
	json_object_set_new(kvm, "device", json_string(o->kvm_device ? o->kvm_device : "/dev/kvm"));
	json_object_set_new(kvm, "modules", json_string(o->host.kvm_modules));
	json_object_set_new(kvm, "mode", json_string(o->host.kvm_mode));
	json_object_set_new(kvm, "mode_detail", json_string(o->host.kvm_mode_detail));
	json_object_set_new(kvm, "api_version", o->host.kvm_api >= 0 ? json_integer(o->host.kvm_api)
								     : json_null());
	if (*o->host.kvm_error)
		json_object_set_new(kvm, "error", json_string(o->host.kvm_error));
	json_object_set_new(host, "kvm", kvm);
	json_object_set_new(root, "host", host);
	json_object_set_new(root, "partial", json_boolean(o->interrupted));
	if (o->interrupted)
		json_object_set_new(root, "interrupted_by", json_string(sig_name(o->interrupted)));
	json_object_set_new(root, "runs_planned", json_integer(o->runs_planned));
	json_object_set_new(root, "runs_done", json_integer(o->runs_done));
	json_object_set_new(root, "runs_failed", json_integer(o->runs_failed));
	json_object_set_new(root, "runs_per_config", json_integer(o->runs));
	json_object_set_new(root, "tsc_hz", json_real(o->tsc_hz));
	for (unsigned e = 0; e < o->nexps; e++) {
		const struct lab_experiment *x = o->exps[e];
		json_t *je = json_object(), *configs = json_array();
		json_object_set_new(je, "name", json_string(x->name));
		json_object_set_new(je, "title", json_string(x->title));
		for (unsigned vmm = 0; vmm < (o->vs_qemu ? 2u : 1u); vmm++)
			for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
				const char *why;
				if (!lab_cell_wanted(o, x, (enum lab_vmm)vmm, m, &why))
					continue;
				const struct lab_cell *c = &cells[e][vmm][m];
				json_t *jc = json_object(), *runs = json_array(), *summ = json_object();
				json_object_set_new(jc, "vmm", json_string(vmm ? "qemu" : "msivm"));
				json_object_set_new(jc, "mode", json_string(irq_mode_name((enum irq_mode)m)));
				if (c->skipped)
					json_object_set_new(jc, "skipped", json_string(c->skip_reason));
				for (unsigned r = 0; r < c->nruns; r++) {
					const struct lab_run *run = &c->runs[r];
					json_t *jr = json_object(), *fig = json_object();
					json_object_set_new(jr, "status", json_integer(run->status));
					json_object_set_new(jr, "failed", json_boolean(run->failed));
					if (run->failed)
						json_object_set_new(jr, "error", json_string(run->error));
					json_object_set_new(jr, "seconds", json_real(run->secs));
					json_object_set_new(jr, "stderr", text(run->errout));
					for (unsigned k = 0; k < x->nmetrics; k++)
						json_object_set_new(fig, x->metrics[k].key, num(run->v[k]));
					json_object_set_new(jr, "figures", fig);
					if (run->have_work_cpu)
						json_object_set_new(jr, "work_cpu",
								    lab_work_cpu_json(run));
					json_t *stats = run->raw_json ? json_loads(run->raw_json, 0, NULL) : NULL;
					if (stats)
						json_object_set_new(jr, "msivm_stats", stats);
					json_object_set_new(jr, "console", text(run->console));
					json_array_append_new(runs, jr);
				}
				for (unsigned k = 0; k < x->nmetrics; k++) {
					struct lab_summary s = lab_summarize(c, k);
					if (s.n)
						json_object_set_new(summ, x->metrics[k].key,
								    json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:i}", "mean",
									      s.mean, "median", s.median, "q1", s.q1,
									      "q3", s.q3, "min", s.min, "max", s.max,
									      "n", s.n));
				}
				json_object_set_new(jc, "summary", summ);
				json_object_set_new(jc, "runs", runs);
				json_array_append_new(configs, jc);
			}
		json_object_set_new(je, "configs", configs);
		json_array_append_new(exps, je);
	}
	json_object_set_new(root, "experiments", exps);
	int ret = json_dump_file(root, path, JSON_INDENT(1)) ? -EIO : 0;
	json_decref(root);
	return ret;
}

static bool is_latency(const struct lab_experiment *x)
{
	return !strcmp(x->result, "latency") || !strcmp(x->result, "floor");
}

/* One chart per metric: a bar per mode (mean) with min-max whiskers, msivm and
 * QEMU side by side; a configuration without figures has no bar. Returns
 * false (nothing drawn) when no configuration has figures. */
static bool write_chart(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES],
			unsigned e, unsigned k, FILE *gp)
{
	const struct lab_experiment *x = o->exps[e];
	const struct lab_metric_def *md = &x->metrics[k];
	bool qemu = o->vs_qemu && !md->msivm_only && !x->msivm_only;
	unsigned any = 0;
	if (md->json_only)
		return false;
	for (unsigned vmm = 0; vmm < (qemu ? 2u : 1u); vmm++)
		for (unsigned m = 0; m < LAB_MAX_MODES; m++)
			any += lab_summarize(&cells[e][vmm][m], k).n;
	if (!any)
		return false;
	fprintf(gp, "set output '%s/%s-%s.svg'\n", o->out_dir, x->name, md->key);
	fprintf(gp, "set title \"%s: %s%s%s%s\\n(median of %u run%s, whiskers min-max; %s)%s\"\n", x->title,
		md->label, *md->unit ? " [" : "", md->unit, *md->unit ? "]" : "", o->runs,
		o->runs == 1 ? "" : "s",
		md->higher_is_better ? "higher is better" : "lower is better",
		o->interrupted ? "\\nPARTIAL: the lab was interrupted" : "");
	fprintf(gp, "set ylabel \"%s [%s]\"\n", md->label, *md->unit ? md->unit : "count");
	fprintf(gp, "plot '-' using 2:3:4:xtic(1) title 'msivm' lc rgb '#1f77b4'%s\n",
		qemu ? ", '-' using 2:3:4 title 'QEMU' lc rgb '#ff7f0e'" : "");
	for (unsigned vmm = 0; vmm < (qemu ? 2u : 1u); vmm++) {
		for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
			const char *why;
			if (!lab_cell_wanted(o, x, (enum lab_vmm)vmm, m, &why))
				continue;
			struct lab_summary s = lab_summarize(&cells[e][vmm][m], k);
			const char *mode = irq_mode_name((enum irq_mode)m), *wwhy;
			bool wfailed = window_metric(md) && failed_windows(&cells[e][vmm][m], &wwhy);
			if (s.n)
				fprintf(gp, "\"%s\" %g %g %g\n", mode, s.median, s.min, s.max);
			else
				fprintf(gp, "\"%s%s\" NaN NaN NaN\n", mode,
					wfailed ? " (measurement failed)" : vmm ? "" : " (no data)");
		}
		fprintf(gp, "e\n");
	}
	return true;
}

struct lat_row;
static void write_latency_chart(const struct lab_options *o,
				struct lab_cell (*cells)[2][LAB_MAX_MODES], FILE *gp);

/* Draws the SVG charts with gnuplot. Returns 0, -ENOENT when gnuplot is not on $PATH (nothing
 * started) or -EIO when it failed; a gnuplot that dies early costs the charts only (SIGPIPE is
 * ignored while msivm writes to it, so the report's last lines and the exit status stay). */
static int write_charts(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES])
{
	if (!file_on_path("gnuplot"))
		return -ENOENT;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigaction(SIGPIPE, &ign, &old);
	FILE *gp = popen("gnuplot 2>/dev/null", "w");
	if (!gp) {
		sigaction(SIGPIPE, &old, NULL);
		return -EIO;
	}
	fprintf(gp, "set terminal svg size 720,420 dynamic font 'sans,12' background '#ffffff'\n"
		    "set style data histogram\nset style histogram errorbars gap 1 lw 1.5\n"
		    "set style fill solid 0.8 border -1\nset boxwidth 0.9\n"
		    "set key outside below center horizontal reverse Left box\n"
		    "set grid ytics\nset yrange [0:*]\nset xtics nomirror\n");
	for (unsigned e = 0; e < o->nexps; e++)
		for (unsigned k = 0; k < o->exps[e]->nmetrics && !is_latency(o->exps[e]); k++)
			write_chart(o, cells, e, k, gp);
	write_latency_chart(o, cells, gp);
	int st = pclose(gp);
	sigaction(SIGPIPE, &old, NULL);
	return st == 0 ? 0 : -EIO;
}

/* Summary row of one latency configuration: min of the minima, mean of the
 * means and p99s, max of the maxima (metrics 0..3 of lat_metrics). */
struct lat_row {
	const char *name, *skip;
	double min, mean, p99, max;
	unsigned n;
};

static unsigned latency_rows(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES],
			     struct lat_row *rows)
{
	unsigned n = 0;
	for (unsigned e = 0; e < o->nexps; e++) {
		const struct lab_experiment *x = o->exps[e];
		if (!is_latency(x) || x->fixed_mode < 0)
			continue;
		const struct lab_cell *c = &cells[e][LAB_MSIVM][x->fixed_mode];
		struct lab_summary smin = lab_summarize(c, 0), savg = lab_summarize(c, 1),
				   sp99 = lab_summarize(c, 2), smax = lab_summarize(c, 3);
		rows[n++] = (struct lat_row){ x->name, c->skipped ? c->skip_reason : NULL, smin.min,
					      savg.mean, sp99.mean, smax.max, savg.n };
	}
	return n;
}

/* The findings' table: min/avg/p99/max per delivery path and CPU setup. */
static void print_latency_summary(FILE *out, const struct lab_options *o,
				  struct lab_cell (*cells)[2][LAB_MAX_MODES])
{
	struct lat_row rows[LAB_MAX_EXPS];
	unsigned n = latency_rows(o, cells, rows);
	if (!n)
		return;
	fprintf(out, "\nInterrupt latency summary, device signal to guest handler (us; min of minima, "
		     "mean, mean p99, max of maxima over %u run%s)\n", o->runs, o->runs == 1 ? "" : "s");
	fprintf(out, "  %-16s %10s %10s %10s %10s\n", "configuration", "min", "mean", "p99", "max");
	bool above = false;
	for (unsigned i = 0; i < n; i++) {
		if (rows[i].skip) {
			fprintf(out, "  %-16s skipped: %s\n", rows[i].name, rows[i].skip);
		} else if (!rows[i].n) {
			fprintf(out, "  %-16s %10s\n", rows[i].name, "n/a");
		} else {
			bool star = rows[i].mean > rows[i].p99;
			above |= star;
			fprintf(out, "  %-16s %10.1f %9.1f%s %10.1f %10.1f\n", rows[i].name, rows[i].min,
				rows[i].mean, star ? "*" : " ", rows[i].p99, rows[i].max);
		}
	}
	if (above)
		fprintf(out, "  * mean above p99: fewer than 1%% of the samples were so long (the vCPU "
			     "preempted or\n    descheduled on the host, up to the max column) that "
			     "they pull the mean past the\n    99th percentile; min and p99 describe the "
			     "usual delivery.\n");
}

/* One chart like the findings' table: min, mean, p99 and max per configuration. */
static void write_latency_chart(const struct lab_options *o,
				struct lab_cell (*cells)[2][LAB_MAX_MODES], FILE *gp)
{
	struct lat_row rows[LAB_MAX_EXPS];
	unsigned n = latency_rows(o, cells, rows);
	if (!n)
		return;
	fprintf(gp, "set output '%s/latency.svg'\nset logscale y\nset yrange [1:*]\n"
		    "set style histogram clustered gap 1\nset xtics rotate by -35\n"
		    "set title \"Interrupt latency, device signal to guest handler (us, log scale)\\n"
		    "floor = LAPIC self-IPI, no VMM; %u runs; skipped or failed configurations at 1\"\n"
		    "set ylabel 'latency [us, log scale]'\n"
		    "plot '-' using 2:xtic(1) title 'min', '-' using 2 title 'mean', "
		    "'-' using 2 title 'p99', '-' using 2 title 'max'\n", o->out_dir, o->runs);
	for (unsigned k = 0; k < 4; k++) {
		for (unsigned i = 0; i < n; i++) {
			double v[4] = { rows[i].min, rows[i].mean, rows[i].p99, rows[i].max };
			fprintf(gp, "%s %g\n", rows[i].name, rows[i].n && !rows[i].skip ? v[k] : 1.0);
		}
		fprintf(gp, "e\n");
	}
}

int lab_report(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES],
	       struct error *err)
{
	print_header(stdout, o);
	lab_print_headline(stdout, o, cells);
	print_legend(stdout, o);
	print_table(stdout, o, cells);
	print_latency_summary(stdout, o, cells);
	print_failures(stdout, o, cells);
	fflush(stdout);
	char path[4096];
	snprintf(path, sizeof(path), "%s/report.txt", o->out_dir);
	FILE *f = fopen(path, "we");
	if (!f)
		return error_set(err, -errno, "cannot write %s: %s", path, strerror(errno));
	print_header(f, o);
	lab_print_headline(f, o, cells);
	print_legend(f, o);
	print_table(f, o, cells);
	print_latency_summary(f, o, cells);
	print_failures(f, o, cells);
	if (fclose(f))
		return error_set(err, -EIO, "cannot write %s", path);
	snprintf(path, sizeof(path), "%s/report.json", o->out_dir);
	if (write_json(o, cells, path))
		return error_set(err, -EIO, "cannot write %s", path);
	int ret = write_charts(o, cells);
	char *headline = NULL;
	size_t hlen = 0;
	FILE *hf = open_memstream(&headline, &hlen);
	if (!hf)
		return error_set(err, -ENOMEM, "out of memory for the HTML report");
	lab_print_headline(hf, o, cells);
	fclose(hf);
	int hst = lab_html_write(o, cells, headline, ret == 0, err);
	free(headline);
	if (hst)
		return hst;
	printf("\nreport: %s/report.html (one page, every chart inline), %s/report.txt, every raw "
	       "run: %s/report.json, charts: %s/*.svg%s\n", o->out_dir,
	       o->out_dir, o->out_dir, o->out_dir,
	       ret == -ENOENT ? " (not drawn: gnuplot is not installed; scripts/deps.sh installs gnuplot-nox)"
	       : ret          ? " (not drawn: gnuplot failed)"
			      : "");
	return 0;
}
