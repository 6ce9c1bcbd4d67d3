/* Lab report as one page: cells + the charts gnuplot drew -> report.html, self-contained (headline, every chart inline, failed and missing cells marked, runs and spread per figure). */
#include "lab/lab.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "virtio/virtio_pci.h"

void lab_html_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

bool lab_html_inline_svg(FILE *f, const char *path, const char *caption)
{
	FILE *in = fopen(path, "re");
	if (!in)
		return false;
	char *buf = NULL;
	size_t cap = 0, len = 0;
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), in)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(in);
				return false;
			}
			buf = nb;
		}
		memcpy(buf + len, chunk, n);
		len += n;
	}
	fclose(in);
	const char *svg = buf ? (buf[len] = 0, strstr(buf, "<svg")) : NULL;
	if (svg) {
		fputs("<figure class=\"chart\">", f);
		fputs(svg, f);
		fputs("<figcaption>", f);
		lab_html_esc(f, caption);
		fputs("</figcaption></figure>\n", f);
	}
	free(buf);
	return svg != NULL;
}

/* Three significant digits without an exponent. */
static void fmt(char *buf, size_t len, double v)
{
	double a = fabs(v);
	snprintf(buf, len, "%.*f", a >= 100 ? 0 : a >= 10 ? 1 : 2, v);
}

static unsigned failed_runs(const struct lab_cell *c)
{
	unsigned n = 0;
	for (unsigned r = 0; r < c->nruns; r++)
		n += c->runs[r].failed;
	return n;
}

/* One row of an experiment's table: a configuration's figure, its spread and its runs. */
static void row(FILE *f, const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES],
		unsigned e, unsigned k, unsigned vmm, unsigned m)
{
	const struct lab_experiment *x = o->exps[e];
	const struct lab_cell *c = &cells[e][vmm][m];
	fprintf(f, "<tr><td>%s</td><td>%s</td>", vmm ? "QEMU" : "msivm", irq_mode_name((enum irq_mode)m));
	if (c->skipped) {
		fprintf(f, "<td class=\"missing\" colspan=\"%d\">skipped: ", o->vs_qemu ? 4 : 3);
		lab_html_esc(f, c->skip_reason);
		fputs("</td></tr>\n", f);
		return;
	}
	if (!c->nruns) {
		fprintf(f, "<td class=\"missing\" colspan=\"%d\">not run</td></tr>\n", o->vs_qemu ? 4 : 3);
		return;
	}
	struct lab_summary s = lab_summarize(c, k);
	unsigned failed = failed_runs(c);
	char med[32], lo[32], hi[32], ratio[112] = "";
	if (o->vs_qemu && vmm == LAB_MSIVM && !x->metrics[k].msivm_only && !x->msivm_only) {
		struct lab_summary q = lab_paired_ratio(c, &cells[e][LAB_QEMU][m], k);
		if (q.n) {
			fmt(med, sizeof(med), q.median);
			fmt(lo, sizeof(lo), q.min);
			fmt(hi, sizeof(hi), q.max);
			snprintf(ratio, sizeof(ratio), "x%s [%s-%s]", med, lo, hi);
		} else {
			snprintf(ratio, sizeof(ratio), "-");
		}
	}
	unsigned wfailed = 0; /* the work window's CPU figures: a failed measurement (lab_run.c) */
	if (!strcmp(x->metrics[k].key, LAB_VMM_CPU_KEY) || !strcmp(x->metrics[k].key, "vcpu_cpu_us_per_req"))
		for (unsigned r = 0; r < c->nruns; r++)
			wfailed += !c->runs[r].failed && c->runs[r].window_failed;
	if (!s.n && wfailed)
		fprintf(f, "<td class=\"failed\">measurement failed (%u of %u runs)</td><td></td>",
			wfailed, c->nruns);
	else if (!s.n)
		fputs("<td class=\"missing\">no figure</td><td></td>", f);
	else {
		fmt(med, sizeof(med), s.median);
		fmt(lo, sizeof(lo), s.min);
		fmt(hi, sizeof(hi), s.max);
		fprintf(f, "<td class=\"num\">%s</td><td class=\"num\">%s-%s</td>", med, lo, hi);
	}
	fprintf(f, "<td class=\"%s\">%u of %u%s</td>", failed ? "failed" : "num", c->nruns - failed,
		c->nruns, failed ? " (failed runs have no figures)" : "");
	if (o->vs_qemu)
		fprintf(f, "<td>%s</td>", ratio);
	fputs("</tr>\n", f);
}

/* The headline as a table: a row per experiment with a work window, a column per mode; each
 * cell the median [min-max] of the VMM's own CPU per request (and msivm/QEMU with QEMU). */
static void headline_table(FILE *f, const struct lab_options *o,
			   struct lab_cell (*cells)[2][LAB_MAX_MODES])
{
	fputs("<table class=\"headline\"><tr><th>experiment</th>", f);
	for (unsigned m = 0; m < LAB_MAX_MODES; m++)
		fprintf(f, "<th>%s</th>", irq_mode_name((enum irq_mode)m));
	fputs("</tr>\n", f);
	for (unsigned e = 0; e < o->nexps; e++) {
		const struct lab_experiment *x = o->exps[e];
		int k = lab_metric_index(x, LAB_VMM_CPU_KEY);
		if (k < 0)
			continue;
		fprintf(f, "<tr><td>%s</td>", x->name);
		for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
			const char *why;
			const struct lab_cell *c = &cells[e][LAB_MSIVM][m];
			if (!lab_cell_wanted(o, x, LAB_MSIVM, m, &why)) {
				if (x->fixed_mode >= 0)
					fprintf(f, "<td class=\"missing\">%s only</td>",
						irq_mode_name((enum irq_mode)x->fixed_mode));
				else
					fputs("<td class=\"missing\">mode not chosen (--modes)</td>", f);
				continue;
			}
			if (c->skipped || !c->nruns) {
				fprintf(f, "<td class=\"missing\">%s</td>", c->skipped ? "skipped" : "not run");
				continue;
			}
			struct lab_summary s = lab_summarize(c, (unsigned)k);
			unsigned failed = failed_runs(c);
			char med[32], lo[32], hi[32];
			if (!s.n) {
				fprintf(f, "<td class=\"failed\">no figure (%u of %u runs failed)</td>", failed,
					c->nruns);
				continue;
			}
			fmt(med, sizeof(med), s.median);
			fmt(lo, sizeof(lo), s.min);
			fmt(hi, sizeof(hi), s.max);
			fprintf(f, "<td class=\"%s\"><b>%s</b> [%s-%s] <small>%u run%s", failed ? "failed" : "num",
				med, lo, hi, s.n, s.n == 1 ? "" : "s");
			if (failed)
				fprintf(f, ", %u failed", failed);
			if (o->vs_qemu && !x->msivm_only) {
				struct lab_summary q = lab_paired_ratio(c, &cells[e][LAB_QEMU][m], (unsigned)k);
				if (q.n) {
					fmt(med, sizeof(med), q.median);
					fprintf(f, "; x%s QEMU", med);
				}
			}
			fputs("</small></td>", f);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void experiment(FILE *f, const struct lab_options *o,
		       struct lab_cell (*cells)[2][LAB_MAX_MODES], unsigned e, unsigned *charts)
{
	const struct lab_experiment *x = o->exps[e];
	fputs("<section><h2>", f);
	lab_html_esc(f, x->title);
	fprintf(f, " <small>(%s)</small></h2>\n", x->name);
	for (unsigned k = 0; k < x->nmetrics; k++) {
		const struct lab_metric_def *md = &x->metrics[k];
		if (md->json_only)
			continue;
		fputs("<h3>", f);
		lab_html_esc(f, md->label);
		if (*md->unit) {
			fputs(" (", f);
			lab_html_esc(f, md->unit);
			fputs(")", f);
		}
		fprintf(f, ", %s is better</h3>\n<table><tr><th>VMM</th><th>mode</th><th>median</th>"
			   "<th>min-max</th><th>runs with figures</th>%s</tr>\n",
			md->higher_is_better ? "higher" : "lower", o->vs_qemu ? "<th>msivm/QEMU</th>" : "");
		for (unsigned vmm = 0; vmm < (o->vs_qemu ? 2u : 1u); vmm++) {
			if (vmm == LAB_QEMU && md->msivm_only)
				continue;
			for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
				const char *why;
				if (lab_cell_wanted(o, x, (enum lab_vmm)vmm, m, &why))
					row(f, o, cells, e, k, vmm, m);
			}
		}
		fputs("</table>\n", f);
		char path[4096], caption[256];
		snprintf(path, sizeof(path), "%s/%s-%s.svg", o->out_dir, x->name, md->key);
		snprintf(caption, sizeof(caption), "%s: %s (%s-%s.svg)", x->name, md->label, x->name,
			 md->key);
		*charts += lab_html_inline_svg(f, path, caption);
	}
	fputs("</section>\n", f);
}

static const char *const style =
	"body{font:14px/1.4 sans-serif;margin:1.5em auto;max-width:1100px;color:#222}"
	"h1{font-size:1.5em}h2{border-top:2px solid #ccc;padding-top:.6em}h3{font-size:1em}"
	"pre{background:#f6f6f6;padding:.8em;overflow-x:auto;font-size:12px}"
	"table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #ccc;padding:2px 8px;"
	"text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}"
	"td.missing{background:#eee;color:#666;font-style:italic}"
	"td.failed,.banner{background:#fdd;color:#900;font-weight:bold}"
	".banner{padding:.6em}figure.chart{margin:.5em 0}figure.chart svg{max-width:min(100%,720px);height:auto}"
	"figcaption{font-size:12px;color:#666}table.headline td{white-space:nowrap}";

/* On load, each inline chart is checked for drawn content; the count lands in <body
 * data-charts="RENDERED/TOTAL"> (the tests read it from a headless browser). */
static const char chart_check[] =
	"<script>window.addEventListener('load',function(){var s=document.querySelectorAll("
	"'figure.chart svg'),n=0;for(var i=0;i<s.length;i++){var b=s[i].getBBox();"
	"if(b.width>0&&b.height>0&&s[i].querySelectorAll('path,rect,text').length>3)n++;}"
	"document.body.setAttribute('data-charts',n+'/'+s.length);});</script>\n";

int lab_html_begin(struct lab_html_page *page, const char *out_dir, struct error *err)
{
	snprintf(page->path, sizeof(page->path), "%s/report.html", out_dir);
	snprintf(page->tmp, sizeof(page->tmp), "%s.tmp", page->path);
	page->f = fopen(page->tmp, "we");
	if (!page->f)
		return error_set(err, -errno, "cannot write %s: %s", page->tmp, strerror(errno));
	return 0;
}

int lab_html_end(struct lab_html_page *page, struct error *err)
{
	fputs(chart_check, page->f);
	fputs("</body></html>\n", page->f);
	int bad = fclose(page->f);
	page->f = NULL;
	if (bad || rename(page->tmp, page->path)) {
		unlink(page->tmp);
		return error_set(err, -EIO, "cannot write %s", page->path);
	}
	return 0;
}

int lab_html_write(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES],
		   const char *headline, bool charts_drawn, struct error *err)
{
	struct lab_html_page page;
	int rc = lab_html_begin(&page, o->out_dir, err);
	if (rc)
		return rc;
	FILE *f = page.f;
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		   "<title>msivm lab report %s</title><style>%s</style></head>\n<body>\n"
		   "<h1>msivm lab report</h1>\n<p>msivm lab %s, %s:", o->date, style, MSIVM_VERSION,
		o->date);
	for (int i = 0; i < o->argc; i++) {
		fputc(' ', f);
		lab_html_esc(f, o->argv[i]);
	}
	fputs("<br>host: Linux ", f);
	lab_html_esc(f, o->host.kernel);
	fputs(", ", f);
	lab_html_esc(f, o->host.cpu);
	fprintf(f, ", %u CPUs<br>KVM mode: ", o->host.cpus);
	lab_html_esc(f, o->host.kvm_mode_detail);
	fprintf(f, "<br>runs: %u of %u done, %u failed; every figure is the median of a "
		   "configuration's successful runs, with their min-max range</p>\n",
		o->runs_done, o->runs_planned, o->runs_failed);
	if (o->interrupted)
		fprintf(f, "<p class=\"banner\">PARTIAL REPORT: interrupted after %u of %u runs; "
			   "configurations not reached show \"not run\"</p>\n", o->runs_done,
			o->runs_planned);
	if (o->runs_failed)
		fprintf(f, "<p class=\"banner\">%u of %u runs failed: their cells are marked, and "
			   "their errors listed at the end</p>\n", o->runs_failed, o->runs_done);
	if (!o->vs_qemu)
		fputs("<p>QEMU was not run: add <code>--vs qemu</code> to measure it beside msivm.</p>\n", f);
	if (!charts_drawn)
		fputs("<p class=\"banner\">charts not drawn: gnuplot is not installed "
		      "(scripts/deps.sh installs gnuplot-nox)</p>\n", f);
	fputs("<h2>Headline: the VMM's own CPU per request (us), msivm</h2>\n<p>Its own threads "
	      "(all but the vCPU threads), sampled at the probe's work window; median [min-max] "
	      "over the runs with figures.</p>\n", f);
	headline_table(f, o, cells);
	fputs("<details><summary>The headline as text, with the vCPU threads' CPU</summary><pre>", f);
	lab_html_esc(f, headline);
	fputs("</pre></details>\n", f);
	unsigned charts = 0;
	for (unsigned e = 0; e < o->nexps; e++)
		experiment(f, o, cells, e, &charts);
	char lat[4096];
	snprintf(lat, sizeof(lat), "%s/latency.svg", o->out_dir);
	if (lab_html_inline_svg(f, lat, "Interrupt latency, device signal to guest handler (latency.svg)"))
		charts++;
	if (o->runs_failed) {
		fputs("<h2>Failed runs</h2>\n<table><tr><th>experiment</th><th>VMM</th><th>mode</th>"
		      "<th>run</th><th>status</th><th>first error</th></tr>\n", f);
		for (unsigned e = 0; e < o->nexps; e++)
			for (unsigned vmm = 0; vmm < 2; vmm++)
				for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
					const struct lab_cell *c = &cells[e][vmm][m];
					for (unsigned r = 0; r < c->nruns; r++) {
						if (!c->runs[r].failed)
							continue;
						fprintf(f, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%u</td>"
							   "<td>%d</td><td class=\"failed\">",
							o->exps[e]->name, vmm ? "QEMU" : "msivm",
							irq_mode_name((enum irq_mode)m), r + 1, c->runs[r].status);
						lab_html_esc(f, c->runs[r].error);
						fputs("</td></tr>\n", f);
					}
				}
		fputs("</table>\n", f);
	}
	fprintf(f, "<p>%u charts; every raw run: report.json, the same tables as text: report.txt.</p>\n",
		charts);
	return lab_html_end(&page, err);
}
