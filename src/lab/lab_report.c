/* Lab report: per-metric summaries -> terminal table, report.json with every raw run, SVG charts (gnuplot). */
#include "lab/lab.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "virtio/virtio_pci.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct lab_summary lab_summarize(const struct lab_cell *c, unsigned metric)
{
	double vals[LAB_MAX_RUNS];
	struct lab_summary s = { 0 };
	for (unsigned r = 0; r < c->nruns; r++)
		if (!isnan(c->runs[r].v[metric]))
			vals[s.n++] = c->runs[r].v[metric];
	if (!s.n)
		return s;
	qsort(vals, s.n, sizeof(double), cmp_double);
	double sum = 0;
	for (unsigned i = 0; i < s.n; i++)
		sum += vals[i];
	s.mean = sum / s.n;
	s.median = s.n % 2 ? vals[s.n / 2] : (vals[s.n / 2 - 1] + vals[s.n / 2]) / 2;
	s.min = vals[0];
	s.max = vals[s.n - 1];
	return s;
}

static unsigned failed_runs(const struct lab_cell *c, enum lab_vmm vmm)
{
	unsigned f = 0;
	for (unsigned r = 0; r < c->nruns; r++)
		f += c->runs[r].status != (vmm == LAB_QEMU ? 1 : 0);
	return f;
}

/* "vs intx" column: relative change of the mean against the intx baseline. */
static void change(char *buf, size_t len, struct lab_summary s, struct lab_summary base)
{
	if (!s.n || !base.n || base.mean == 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%", (s.mean - base.mean) / base.mean * 100);
}

static void print_table(FILE *out, const struct lab_options *o,
			struct lab_cell (*cells)[2][LAB_MAX_MODES])
{
	unsigned nvmm = o->vs_qemu ? 2 : 1;
	for (unsigned e = 0; e < o->nexps; e++) {
		const struct lab_experiment *x = o->exps[e];
		fprintf(out, "\n%s (%u runs each)\n", x->title, o->runs);
		fprintf(out, "  %-42s %-6s %-12s %10s %10s %10s %10s %9s%s\n", "metric", "vmm", "mode",
			"mean", "median", "min", "max", "vs intx", o->vs_qemu ? "  msivm/qemu" : "");
		for (unsigned k = 0; k < x->nmetrics; k++) {
			const struct lab_metric_def *md = &x->metrics[k];
			char label[64];
			snprintf(label, sizeof(label), "%s%s%s%s", md->label, *md->unit ? " (" : "",
				 md->unit, *md->unit ? ")" : "");
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
						fprintf(out, "  %-42s %-6s %-12s skipped: %s\n", label,
							vmm ? "qemu" : "msivm", mode, c->skip_reason);
						continue;
					}
					struct lab_summary s = lab_summarize(c, k);
					char chg[16], ratio[24] = "";
					change(chg, sizeof(chg), s, base);
					if (o->vs_qemu && vmm == LAB_MSIVM && !md->msivm_only) {
						struct lab_summary q = lab_summarize(&cells[e][LAB_QEMU][m], k);
						if (q.n && s.n && q.mean != 0)
							snprintf(ratio, sizeof(ratio), "  %10.2fx", s.mean / q.mean);
					}
					unsigned f = failed_runs(c, (enum lab_vmm)vmm);
					if (!s.n)
						fprintf(out, "  %-42s %-6s %-12s %10s%s\n", label, vmm ? "qemu" : "msivm",
							mode, "n/a", f ? "  (runs failed)" : "");
					else
						fprintf(out, "  %-42s %-6s %-12s %10.3g %10.3g %10.3g %10.3g %9s%s%s\n",
							label, vmm ? "qemu" : "msivm", mode, s.mean, s.median,
							s.min, s.max, chg, ratio, f ? "  (some runs failed)" : "");
				}
			}
		}
	}
}

static json_t *num(double v) { return isnan(v) ? json_null() : json_real(v); }

static int write_json(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES],
		      const char *path)
{
	json_t *root = json_object(), *exps = json_array();
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
					for (unsigned k = 0; k < x->nmetrics; k++)
						json_object_set_new(fig, x->metrics[k].key, num(run->v[k]));
					json_object_set_new(jr, "figures", fig);
					json_t *stats = run->raw_json ? json_loads(run->raw_json, 0, NULL) : NULL;
					if (stats)
						json_object_set_new(jr, "msivm_stats", stats);
					json_object_set_new(jr, "console", json_string(run->console ? run->console : ""));
					json_array_append_new(runs, jr);
				}
				for (unsigned k = 0; k < x->nmetrics; k++) {
					struct lab_summary s = lab_summarize(c, k);
					if (s.n)
						json_object_set_new(summ, x->metrics[k].key,
								    json_pack("{s:f,s:f,s:f,s:f,s:i}", "mean", s.mean,
									      "median", s.median, "min", s.min,
									      "max", s.max, "n", s.n));
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

/* One chart per metric: a bar per mode (mean) with min-max whiskers, msivm and QEMU side by side. */
static int write_chart(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES],
		       unsigned e, unsigned k, FILE *gp)
{
	const struct lab_experiment *x = o->exps[e];
	const struct lab_metric_def *md = &x->metrics[k];
	bool qemu = o->vs_qemu && !md->msivm_only && !x->msivm_only;
	fprintf(gp, "set output '%s/%s-%s.svg'\n", o->out_dir, x->name, md->key);
	fprintf(gp, "set title \"%s: %s%s%s%s\\n(mean of %u runs, whiskers min-max; %s)\"\n", x->title,
		md->label, *md->unit ? " [" : "", md->unit, *md->unit ? "]" : "", o->runs,
		md->higher_is_better ? "higher is better" : "lower is better");
	fprintf(gp, "set ylabel \"%s%s\"\n", md->label, *md->unit ? "" : " (count)");
	fprintf(gp, "plot '-' using 2:3:4:xtic(1) title 'msivm' lc rgb '#1f77b4'%s\n",
		qemu ? ", '-' using 2:3:4 title 'QEMU' lc rgb '#ff7f0e'" : "");
	for (unsigned vmm = 0; vmm < (qemu ? 2u : 1u); vmm++) {
		for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
			const char *why;
			if (!lab_cell_wanted(o, x, (enum lab_vmm)vmm, m, &why))
				continue;
			struct lab_summary s = lab_summarize(&cells[e][vmm][m], k);
			if (s.n)
				fprintf(gp, "%s %g %g %g\n", irq_mode_name((enum irq_mode)m), s.mean, s.min, s.max);
			else
				fprintf(gp, "%s 0 0 0\n", irq_mode_name((enum irq_mode)m));
		}
		fprintf(gp, "e\n");
	}
	return 0;
}

struct lat_row;
static void write_latency_chart(const struct lab_options *o,
				struct lab_cell (*cells)[2][LAB_MAX_MODES], FILE *gp);

static int write_charts(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES])
{
	FILE *gp = popen("gnuplot 2>/dev/null", "w");
	if (!gp)
		return -ENOENT;
	fprintf(gp, "set terminal svg size 720,420 dynamic font 'sans,12' background '#ffffff'\n"
		    "set style data histogram\nset style histogram errorbars gap 1 lw 1.5\n"
		    "set style fill solid 0.8 border -1\nset boxwidth 0.9\nset key top left opaque box\n"
		    "set grid ytics\nset yrange [0:*]\nset xtics nomirror\n");
	for (unsigned e = 0; e < o->nexps; e++)
		for (unsigned k = 0; k < o->exps[e]->nmetrics && !is_latency(o->exps[e]); k++)
			write_chart(o, cells, e, k, gp);
	write_latency_chart(o, cells, gp);
	return pclose(gp) == 0 ? 0 : -EIO;
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
		     "mean, mean p99, max of maxima over %u runs)\n", o->runs);
	fprintf(out, "  %-16s %10s %10s %10s %10s\n", "configuration", "min", "mean", "p99", "max");
	for (unsigned i = 0; i < n; i++) {
		if (rows[i].skip)
			fprintf(out, "  %-16s skipped: %s\n", rows[i].name, rows[i].skip);
		else if (!rows[i].n)
			fprintf(out, "  %-16s %10s\n", rows[i].name, "n/a");
		else
			fprintf(out, "  %-16s %10.1f %10.1f %10.1f %10.1f\n", rows[i].name, rows[i].min,
				rows[i].mean, rows[i].p99, rows[i].max);
	}
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
		    "set style histogram clustered gap 1\nset xtics rotate by -35\nset key top left\n"
		    "set title \"Interrupt latency, device signal to guest handler (us, log scale)\\n"
		    "floor = LAPIC self-IPI, no VMM; %u runs; skipped configurations at 1\"\n"
		    "set ylabel 'us'\n"
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
	print_table(stdout, o, cells);
	print_latency_summary(stdout, o, cells);
	char path[4096];
	snprintf(path, sizeof(path), "%s/report.txt", o->out_dir);
	FILE *f = fopen(path, "w");
	if (f) {
		print_table(f, o, cells);
		print_latency_summary(f, o, cells);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/report.json", o->out_dir);
	if (write_json(o, cells, path))
		return error_set(err, -EIO, "cannot write %s", path);
	int ret = write_charts(o, cells);
	printf("\nreport: %s/report.txt, every raw run: %s/report.json, charts: %s/*.svg%s\n",
	       o->out_dir, o->out_dir, o->out_dir,
	       ret ? " (not drawn: gnuplot missing or failed; scripts/deps.sh installs it)" : "");
	return 0;
}
