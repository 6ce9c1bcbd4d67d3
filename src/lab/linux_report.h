/* Linux lab report internals: the figures a run yields, summaries over a cell, and the report's parts. */
#ifndef MSIVM_LAB_LINUX_REPORT_H
#define MSIVM_LAB_LINUX_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lab/linux_lab.h"

/* The figures compared across cells: one value per run (NAN when the run has none). */
enum lr_metric {
	LR_RUN_INIT, LR_READY, LR_WALL,                  /* boot, s */
	LR_RW_READ, LR_RW_WRITE,                         /* fio-rw, MiB/s */
	LR_QD1_IOPS, LR_QD1_LAT, LR_QD4_IOPS, LR_QD32_IOPS, LR_QD32_P99, LR_QD128_IOPS, /* IOPS, us */
	LR_TX, LR_RX,                                    /* iperf3 received, Mbit/s */
	LR_VSOCK_P50, LR_VSOCK_P99, LR_VSOCK_BULK,       /* vsock round trip, us; bulk, MiB/s */
	LR_IRQ_RW, LR_IRQ_TX,                            /* virtio interrupts per I/O, per MiB */
	/* the passthrough experiment's (pt-*) besides LR_QD1_IOPS, LR_QD1_LAT, LR_QD32_IOPS and
	 * LR_QD32_P99: */
	LR_QD1_P99, LR_QD32_LAT,                         /* us */
	LR_IRQ_QD1, LR_IRQ_QD32,                         /* the device's interrupts per I/O */
	LR_CPU_QD1, LR_CPU_QD32,                         /* VMM threads but the vCPUs, us per I/O */
	LR_NMETRIC
};

/* How a metric is better, and so how an advantage is worded. */
enum lr_kind {
	LR_TIME,  /* lower is better; "X% faster": the other takes X% longer */
	LR_RATE,  /* higher is better; "X% more" */
	LR_COUNT, /* lower is better; "X% fewer": X% less than the other's */
};

struct lr_metric_def {
	const char *key;          /* report.json summary key */
	const char *label;        /* "Run /init" */
	const char *unit;         /* "s" */
	enum lr_kind kind;
	int work;                 /* the enum ll_work it comes from; -1: the boot */
	double seed_gain;         /* the seed's MSI-X advantage (0.21: 21%), NAN: none given */
};

extern const struct lr_metric_def lr_metrics[LR_NMETRIC];

/* What a per-unit figure of a workload is (lr_per_unit's `what`): an exit reason
 * (enum ll_exit), or one of these. */
enum { LR_PER_OTHER = LL_NEXIT, LR_PER_VCPU, LR_PER_IRQ, LR_PER_N };

/* Summary over the runs of a cell that have the figure. */
struct lr_sum {
	unsigned n;               /* runs with the figure */
	double mean, min, max;
};

typedef double (*lr_get_fn)(const struct ll_run *r, unsigned arg);

/* Metric `m` of run r (an enum lr_metric): NAN if r failed, did not measure it, or (a
 * workload figure) did not run the workloads or the workload's output did not parse. */
double lr_value(const struct ll_run *r, unsigned m);

/* A workload's cost per unit moved (per I/O for fio, per round trip for vsock-rr, per MiB for
 * iperf and vsock-bulk): `arg` is
 * w * LR_PER_N + what; CPU in us (LR_PER_OTHER: the VMM's non-vCPU threads), exits and
 * virtio interrupts as counts. NAN when r failed or the figure or the unit is missing. */
double lr_per_unit(const struct ll_run *r, unsigned arg);

/* The unit lr_per_unit divides by for workload w: "I/O", "round trip" or "MiB". */
const char *lr_unit_name(enum ll_work w);

/* Summary of get(run, arg) over the runs of c (NANs left out); n = 0 if none. */
struct lr_sum lr_summarize(const struct ll_cell *c, lr_get_fn get, unsigned arg);

/* Summary of metric m over the runs of c. */
struct lr_sum lr_metric_sum(const struct ll_cell *c, unsigned m);

/* Runs of c that did not fail, and those of them that ran the workloads. */
unsigned lr_ok_runs(const struct ll_cell *c);
unsigned lr_worked_runs(const struct ll_cell *c);

/* "msivm" or "QEMU". */
const char *lr_vmm_name(enum lab_vmm vmm);

/* The cell of (vmm, configuration named cfg), or NULL when the lab planned none. */
const struct ll_cell *lr_cell(const struct ll_cell *cells, unsigned ncells, enum lab_vmm vmm,
			      const char *cfg);

/* Whether configuration cfg keeps Linux off MSI and MSI-X (the seed's "without MSI"). */
bool lr_without_msi(const char *cfg);

/* Why cell c (of vmm and configuration cfg; NULL: not planned) has no figure of metric m,
 * in a few words ("every msivm intx run failed"). */
void lr_why_missing(const struct ll_cell *c, enum lab_vmm vmm, const char *cfg, unsigned m,
		    char *buf, size_t len);

/* MSI-X's (or msivm's) advantage of `ours` over `other` for metric m, positive when ours is
 * better: time other/ours - 1, rate ours/other - 1, count 1 - ours/other. NAN if undefined. */
double lr_gain(unsigned m, double ours, double other);

/* The word of an advantage: "faster", "more", "fewer". */
const char *lr_better_word(unsigned m);

/* A figure for a table: "n/a" for NAN, else 3 or 4 significant digits. Returns buf. */
const char *lr_fmt(char *buf, size_t len, double v);

/* The report's text parts, each into `out`. */
void lr_print_interrupts(FILE *out, const struct ll_cell *cells, unsigned ncells);
void lr_print_ratios(FILE *out, const struct ll_cell *cells, unsigned ncells);
void lr_print_findings(FILE *out, const struct ll_cell *cells, unsigned ncells);

/* linux_passthrough.c: whether a cell is of the passthrough experiment (a configuration with
 * its own workload list), and its table (nothing without such a cell). */
bool lr_has_passthrough(const struct ll_cell *cells, unsigned ncells);
void lr_print_passthrough(FILE *out, const struct ll_cell *cells, unsigned ncells);

/* linux_html.c: OUT/report.html, self-contained: `text` (report.txt) and every chart of
 * `charts` (file names in o->out_dir) inline. Returns 0 or -errno (err says why). */
int lr_write_html(const struct ll_options *o, const char *text, const char *const *charts,
		  unsigned ncharts, struct error *err);

/* Writes report.json at path. Returns 0 or -EIO. */
int lr_write_json(const struct ll_options *o, const struct ll_cell *cells, unsigned ncells,
		  const char *path);

/* Draws the SVG charts into o->out_dir with gnuplot (the script is kept as linux-charts.gp).
 * Returns 0 when they were drawn; otherwise note says why not (gnuplot missing, failed). */
int lr_write_charts(const struct ll_options *o, const struct ll_cell *cells, unsigned ncells,
		    char *note, size_t len);

#endif
