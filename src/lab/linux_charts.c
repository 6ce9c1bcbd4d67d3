/* Linux lab charts: boot, storage, network and interrupt bars per configuration, msivm beside QEMU, drawn by gnuplot. */
#include "lab/linux_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/file.h"

#define MAX_CONFIGS 16

/* The x axis: configuration names in cell order, each once. */
struct axis {
	unsigned n;
	const char *name[MAX_CONFIGS];
};

static void axis_of(const struct ll_cell *cells, unsigned ncells, struct axis *ax)
{
	ax->n = 0;
	for (unsigned i = 0; i < ncells; i++) {
		unsigned j = 0;
		if (!cells[i].cfg)
			continue;
		while (j < ax->n && strcmp(ax->name[j], cells[i].cfg->name))
			j++;
		if (j == ax->n && ax->n < MAX_CONFIGS)
			ax->name[ax->n++] = cells[i].cfg->name;
	}
}

/* What one chart (or one panel) shows. */
struct chart {
	const char *title;        /* first title line */
	const char *ylabel;
	const unsigned *metrics;
	unsigned nmetrics;
};

/* Summary of metric m of (vmm, config); n = 0 when the cell is missing or skipped. */
static struct lr_sum bar(const struct ll_cell *cells, unsigned ncells, enum lab_vmm vmm,
			 const char *cfg, unsigned m)
{
	const struct ll_cell *c = lr_cell(cells, ncells, vmm, cfg);
	return c && !c->skipped ? lr_metric_sum(c, m) : (struct lr_sum){ 0, NAN, NAN, NAN };
}

/* The fewest and most runs behind a bar of the chart; *hi = 0 when it has no bar. */
static void run_counts(const struct ll_cell *cells, unsigned ncells, const struct axis *ax,
		       const struct chart *ch, unsigned *lo, unsigned *hi)
{
	*lo = ~0u;
	*hi = 0;
	for (unsigned v = 0; v < 2; v++)
		for (unsigned k = 0; k < ch->nmetrics; k++)
			for (unsigned x = 0; x < ax->n; x++) {
				struct lr_sum s = bar(cells, ncells, (enum lab_vmm)v, ax->name[x],
						      ch->metrics[k]);
				if (s.n) {
					*lo = s.n < *lo ? s.n : *lo;
					*hi = s.n > *hi ? s.n : *hi;
				}
			}
}

/* A string for a gnuplot double-quoted string: '"' and '\' left out. */
static void gp_text(FILE *gp, const char *s)
{
	for (; *s; s++)
		if (*s != '"' && *s != '\\')
			fputc(*s, gp);
}

/* Title, y label and the plot with its data: a series per (vmm, metric) that has a bar, a
 * group per configuration that has one, whiskers min-max. */
static void plot(FILE *gp, const struct ll_cell *cells, unsigned ncells, const struct axis *ax,
		 const struct chart *ch, bool partial)
{
	static const char *const colors[2][3] = { { "#1f77b4", "#6baed6", "#08306b" },
						  { "#ff7f0e", "#fdae6b", "#7f2704" } };
	struct lr_sum sum[2][3][MAX_CONFIGS];
	bool has[2][3] = { { false } }, used[MAX_CONFIGS] = { false }, first = true;
	unsigned lo, hi, nm = ch->nmetrics < 3 ? ch->nmetrics : 3;
	for (unsigned v = 0; v < 2; v++)
		for (unsigned k = 0; k < nm; k++)
			for (unsigned x = 0; x < ax->n; x++) {
				sum[v][k][x] = bar(cells, ncells, (enum lab_vmm)v, ax->name[x],
						   ch->metrics[k]);
				has[v][k] |= sum[v][k][x].n > 0;
				used[x] |= sum[v][k][x].n > 0;
			}
	run_counts(cells, ncells, ax, ch, &lo, &hi);
	fprintf(gp, "set title \"");
	gp_text(gp, ch->title);
	if (lo == hi)
		fprintf(gp, "\\nmean of %u runs, whiskers min-max", hi);
	else
		fprintf(gp, "\\nmean of %u to %u runs (fewer where runs failed), whiskers min-max", lo,
			hi);
	fprintf(gp, "%s\"\n", partial ? "\\nPARTIAL: the lab was interrupted" : "");
	fprintf(gp, "set ylabel \"%s\"\nplot ", ch->ylabel);
	for (unsigned v = 0; v < 2; v++)
		for (unsigned k = 0; k < nm; k++) {
			if (!has[v][k])
				continue;
			fprintf(gp, "%s'-' using 2:3:4%s title \"%s%s%s\" lc rgb '%s'", first ? "" : ", ",
				first ? ":xtic(1)" : "", lr_vmm_name((enum lab_vmm)v), nm > 1 ? " " : "",
				nm > 1 ? lr_metrics[ch->metrics[k]].label : "", colors[v][k]);
			first = false;
		}
	fprintf(gp, "\n");
	for (unsigned v = 0; v < 2; v++)
		for (unsigned k = 0; k < nm; k++) {
			if (!has[v][k])
				continue;
			for (unsigned x = 0; x < ax->n; x++) {
				struct lr_sum b = sum[v][k][x];
				if (!used[x])
					continue;
				fprintf(gp, "\"");
				gp_text(gp, ax->name[x]);
				if (b.n)
					fprintf(gp, "\" %.9g %.9g %.9g\n", b.mean, b.min, b.max);
				else
					fprintf(gp, "\" NaN NaN NaN\n");
			}
			fprintf(gp, "e\n");
		}
}

/* A chart's file name, relative: gnuplot runs in the report directory, so the kept script
 * redraws the charts wherever the report is copied (scripts/lab-linux.sh does that). */
static void gp_path(FILE *gp, const char *dir, const char *file)
{
	(void)dir;
	fputc('\'', gp);
	for (const char *s = file; *s; s++)
		fprintf(gp, *s == '\'' ? "''" : "%c", *s);
	fputc('\'', gp);
}

/* Draws the panels that have data into `file` (side by side); returns false if none has. */
static bool chart(FILE *gp, const struct ll_options *o, const struct ll_cell *cells,
		  unsigned ncells, const char *file, const char *title, const struct chart *panels,
		  unsigned npanels)
{
	struct axis ax;
	unsigned n = 0, lo, hi;
	const struct chart *with[4];
	axis_of(cells, ncells, &ax);
	for (unsigned p = 0; p < npanels && n < 4; p++) {
		run_counts(cells, ncells, &ax, &panels[p], &lo, &hi);
		if (hi)
			with[n++] = &panels[p];
	}
	if (!n)
		return false;
	fprintf(gp, "set terminal svg size %u,460 dynamic font 'sans,12' background '#ffffff'\n"
		    "set output ", n > 1 ? 1100 : 760);
	gp_path(gp, o->out_dir, file);
	fprintf(gp, "\n");
	if (n > 1) {
		fprintf(gp, "set multiplot layout 1,%u title \"", n);
		gp_text(gp, title);
		fprintf(gp, "%s\"\n", o->interrupted ? " (PARTIAL: the lab was interrupted)" : "");
	}
	for (unsigned p = 0; p < n; p++)
		plot(gp, cells, ncells, &ax, with[p], o->interrupted && n == 1);
	if (n > 1)
		fprintf(gp, "unset multiplot\n");
	fprintf(gp, "set output\n");
	return true;
}

/* Writes the gnuplot script; `drawn` lists the charts it draws, `left` those without data. */
static void script(FILE *gp, const struct ll_options *o, const struct ll_cell *cells,
		   unsigned ncells, char *drawn, size_t dlen, char *left, size_t llen)
{
	static const unsigned boot[] = { LR_RUN_INIT, LR_READY, LR_WALL };
	static const unsigned storage[] = { LR_RW_READ, LR_RW_WRITE };
	static const unsigned network[] = { LR_TX, LR_RX };
	static const unsigned irq_rw[] = { LR_IRQ_RW }, irq_tx[] = { LR_IRQ_TX };
	static const struct chart boot_ch = { "Linux guest boot: Run /init (dmesg), init ready "
					      "(guest uptime), VMM start to exit (host)",
					      "seconds (lower is better)", boot, 3 };
	static const struct chart storage_ch = { "Storage: fio rw (2 jobs, O_DIRECT) in the guest, "
						 "read and write throughput",
						 "MiB/s (higher is better)", storage, 2 };
	static const struct chart network_ch = { "Network: iperf3 guest->host (tx) and host->guest "
						 "(rx), received", "Mbit/s (higher is better)",
						 network, 2 };
	static const struct chart irq_ch[] = {
		{ "virtio interrupts per I/O during fio-rw", "interrupts per I/O", irq_rw, 1 },
		{ "virtio interrupts per MiB during iperf-tx", "interrupts per MiB", irq_tx, 1 },
	};
	static const unsigned pt_iops[] = { LR_QD1_IOPS, LR_QD32_IOPS };
	static const unsigned pt_lat[] = { LR_QD1_LAT, LR_QD1_P99, LR_QD32_LAT, LR_QD32_P99 };
	static const unsigned pt_irq[] = { LR_IRQ_QD1, LR_IRQ_QD32 };
	static const unsigned pt_cpu[] = { LR_CPU_QD1, LR_CPU_QD32 };
	static const struct chart pt_ch[] = {
		{ "IOPS, 4 KiB random reads", "IOPS (higher is better)", pt_iops, 2 },
		{ "latency, mean and p99", "us (lower is better)", pt_lat, 4 },
		{ "device interrupts per I/O", "per I/O", pt_irq, 2 },
		{ "VMM threads' CPU per I/O", "us per I/O (irqfd: ~0)", pt_cpu, 2 },
	};
	static const struct {
		const char *file, *title;
		const struct chart *panels;
		unsigned n;
	} charts[] = {
		{ "linux-passthrough.svg", "Passthrough NVMe (pt-*) beside virtio-blk (pt-virtio), fio "
					   "at depth 1 and 32 (nested: compare ratios)", pt_ch, 4 },
		{ "linux-boot.svg", "", &boot_ch, 1 },
		{ "linux-storage.svg", "", &storage_ch, 1 },
		{ "linux-network.svg", "", &network_ch, 1 },
		{ "linux-interrupts.svg", "Virtio interrupts in the guest by configuration (lower is "
					  "better)", irq_ch, 2 },
	};
	size_t kd = 0, kl = 0;
	fprintf(gp, "# msivm lab --guest linux charts: gnuplot linux-charts.gp redraws them\n"
		    "set style data histogram\nset style histogram errorbars gap 1 lw 1.5\n"
		    "set style fill solid 0.8 border -1\nset boxwidth 0.9\n"
		    "set key outside below center horizontal Left reverse box\n"
		    "set grid ytics\nset yrange [0:*]\nset offsets 0, 0, graph 0.08, 0\n"
		    "set xtics nomirror\n");
	drawn[0] = left[0] = 0;
	for (unsigned i = 0; i < sizeof(charts) / sizeof(charts[0]); i++) {
		if (charts[i].panels == pt_ch && !lr_has_passthrough(cells, ncells))
			continue; /* the passthrough experiment's own chart */
		bool ok = chart(gp, o, cells, ncells, charts[i].file, charts[i].title, charts[i].panels,
				charts[i].n);
		char *buf = ok ? drawn : left;
		size_t len = ok ? dlen : llen, *k = ok ? &kd : &kl;
		if (*k < len)
			*k += (size_t)snprintf(buf + *k, len - *k, "%s%s", *k ? ", " : "",
					       charts[i].file);
	}
}

/* Runs gnuplot on linux-charts.gp in directory dir; its first message line into msg.
 * Returns its exit status. */
static int run_gnuplot(const char *dir, char *msg, size_t len)
{
	char cmd[8400], line[512];
	size_t k = (size_t)snprintf(cmd, sizeof(cmd), "cd '");
	FILE *p;
	for (const char *s = dir; *s && k + 8 < sizeof(cmd); s++)
		k += (size_t)snprintf(cmd + k, sizeof(cmd) - k, *s == '\'' ? "'\\''" : "%c", *s);
	snprintf(cmd + k, sizeof(cmd) - k, "' && exec gnuplot linux-charts.gp 2>&1");
	p = popen(cmd, "re");
	if (!p) {
		snprintf(msg, len, "cannot start gnuplot: %s", strerror(errno));
		return -1;
	}
	msg[0] = 0;
	while (fgets(line, sizeof(line), p))
		if (!msg[0] && line[strspn(line, " \t\n")])
			snprintf(msg, len, "%.*s", (int)strcspn(line, "\n"), line);
	return pclose(p);
}

int lr_write_charts(const struct ll_options *o, const struct ll_cell *cells, unsigned ncells,
		    char *note, size_t len)
{
	char path[4096], drawn[256], left[256], msg[320];
	FILE *gp;
	int status;
	snprintf(path, sizeof(path), "%s/linux-charts.gp", o->out_dir);
	gp = fopen(path, "we");
	if (!gp) {
		snprintf(note, len, "cannot write %s: %s", path, strerror(errno));
		return -EIO;
	}
	script(gp, o, cells, ncells, drawn, sizeof(drawn), left, sizeof(left));
	if (fclose(gp)) {
		snprintf(note, len, "cannot write %s", path);
		return -EIO;
	}
	if (!*drawn) {
		snprintf(note, len, "no figures to chart");
		return -ENODATA;
	}
	if (!file_on_path("gnuplot")) { /* the script stays: `gnuplot linux-charts.gp` in the report directory */
		snprintf(note, len, "gnuplot not found (apt package gnuplot-nox); script linux-charts.gp kept");
		return -ENOENT;
	}
	status = run_gnuplot(o->out_dir, msg, sizeof(msg));
	if (status) {
		snprintf(note, len, "gnuplot failed (status %d)%s%s", status, *msg ? ": " : "", msg);
		return -EIO;
	}
	snprintf(note, len, "%s%s%s; script linux-charts.gp", drawn, *left ? "; no figures for " : "",
		 left);
	return 0;
}
