/* The lab: replays the interrupt-mode experiments (boot, rng, blk, latency) and reports them. */
#ifndef MSIVM_LAB_LAB_H
#define MSIVM_LAB_LAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lab/lab_threads.h"
#include "util/error.h"
#include "vmm/kvm_host.h"

#define LAB_MAX_MODES   4
#define LAB_MAX_RUNS    32
#define LAB_MAX_METRICS 24
#define LAB_MAX_EXPS    32
#define LAB_SNAPSHOT_CLONES 4 /* the snapshot experiment's restores at once */

enum lab_vmm { LAB_MSIVM, LAB_QEMU };

/* One figure a run produces, e.g. "ready_ms" or "exits_per_req". */
struct lab_metric_def {
	const char *key;
	const char *label;       /* "boot to ready" */
	const char *unit;        /* "ms" */
	bool higher_is_better;
	bool msivm_only;         /* not measurable under QEMU (KVM exits from msivm's stats) */
	bool json_only;          /* kept in report.json, not in the text table or the charts */
};

enum lab_dev { LAB_DEV_RNG, LAB_DEV_DISK, LAB_DEV_NET };

struct lab_options;
struct lab_run;

struct lab_experiment {
	const char *name;                 /* "boot", "rng", "blk-randread", "lat-irqfd" ... */
	const char *title;
	const char *result;               /* name in the probe's "probe: result <name>" line */
	const char *guest_args;           /* probe command-line tokens */
	enum lab_dev dev;                 /* the device under test */
	const char *dev_extra;            /* appended to msivm's device value, e.g. ",latency=500" */
	const char *msivm_extra;          /* more msivm arguments, space-separated */
	int fixed_mode;                   /* -1: every mode of --modes; else only this irq_mode */
	unsigned min_cpus;                /* host CPUs the configuration needs */
	bool msivm_only;                  /* QEMU has no equivalent */
	const struct lab_metric_def *metrics;
	unsigned nmetrics;
	/* NULL: one probe run (lab_run_once's own); else the experiment's own steps, with
	 * lab_run_once's contract. */
	int (*run)(const struct lab_options *o, const struct lab_experiment *exp, enum lab_vmm vmm,
		   unsigned mode, struct lab_run *run, int *signo);
};

/* Standard error kept per run (the rest is dropped and "[truncated]" noted). */
#define LAB_STDERR_MAX (64 * 1024)

/* Figures of one run: value per metric, NaN when not measured. */
struct lab_run {
	double v[LAB_MAX_METRICS];
	int status;              /* exit status of the VMM process (128+N: signal N) */
	bool failed;             /* not the probe's success status, timed out, or not started */
	double secs;             /* wall time of the run */
	char *raw_json;          /* msivm's --stats-json text (msivm runs), malloc'd */
	char *console;           /* the guest's console output, malloc'd */
	char *errout;            /* the VMM's standard error, at most LAB_STDERR_MAX, malloc'd */
	char error[256];         /* failed: one line saying why (the first line of errout) */
	bool have_work_cpu;      /* the probe's work window was seen (both lines) */
	struct lab_cpu_window work_cpu; /* VMM process CPU between "probe: work begin" and "work end" */
	bool window_failed;      /* that window measured nothing sound (lab_cpu_window_ok): its CPU
				  * figures are a failed measurement (NaN), said so in every output */
	char window_why[96];
	double work_begin_ms;    /* when the first sample was taken, since the VMM's start */
	double work_ms;          /* host time between those two samples */
};

struct lab_cell {                /* one (experiment, vmm, mode) */
	unsigned nruns;
	struct lab_run runs[LAB_MAX_RUNS];
	bool skipped;
	char skip_reason[96];
};

/* What the report says about the machine it ran on. */
struct lab_host {
	char kernel[128];            /* uname -r */
	char cpu[128];               /* "model name" of /proc/cpuinfo */
	unsigned cpus;               /* online CPUs */
	char kvm_modules[96];        /* loaded kvm modules, e.g. "kvm kvm_intel" */
	int kvm_api;                 /* KVM_GET_API_VERSION, -1 if the device did not answer */
	char kvm_error[160];         /* why not, "" if it did */
	char kvm_mode[16];           /* "hardware", "pvm", "nested" (inside scripts/nested) or "none" */
	char kvm_mode_detail[400];   /* one line naming the mode and what it means for the figures */
};

#define LAB_MAX_PROBE_ARGS 200 /* characters of --probe-args */

struct lab_options {
	const char *msivm;           /* path of the msivm binary to run */
	const char *probe;           /* probe guest ELF */
	const char *probe_args;      /* --probe-args: more probe tokens per run, NULL if none */
	const char *out_dir;
	const char *kvm_device;      /* --kvm-device for msivm runs; NULL: msivm's default */
	bool force;                  /* --force: replace an earlier report in out_dir */
	int argc;                    /* the lab's command line, for the report */
	char **argv;
	char date[32];               /* start, UTC ISO 8601 */
	struct lab_host host;
	int sigfd;                   /* signalfd of SIGINT/SIGTERM/SIGHUP, -1 if none */
	unsigned runs_planned, runs_done, runs_failed;
	int interrupted;             /* the signal that stopped the lab early, 0 if none */
	char stats[4096];            /* per-run --stats-json file (in $TMPDIR) */
	unsigned runs;
	unsigned modes;              /* bit per enum irq_mode */
	const struct lab_experiment *exps[LAB_MAX_EXPS];
	unsigned nexps;
	bool vs_qemu;
	double tsc_hz;               /* host TSC frequency, measured */
	unsigned host_cpus;
	char rt_refused[160];        /* why SCHED_FIFO is not possible here, "" if it is */
	char disk[4096];             /* scratch disk image for blk experiments */
};

/* Whether (exp, vmm, mode) is part of the run matrix; if it is but cannot
 * run here, *why says so (and the cell is reported as skipped). */
bool lab_cell_wanted(const struct lab_options *o, const struct lab_experiment *exp,
		     enum lab_vmm vmm, unsigned mode, const char **why);

/* The headline figure: the VMM's own threads' CPU per request in the work window. */
#define LAB_VMM_CPU_KEY "vmm_cpu_us_per_req"

/* The index of exp's metric `key`, or -1. */
int lab_metric_index(const struct lab_experiment *exp, const char *key);

/* The experiments the lab knows, in report order. */
extern const struct lab_experiment lab_experiments[];
extern const unsigned lab_nexperiments;

/* Creates the report directory, or refuses (a message on stderr, -1) one that
 * holds an earlier report (report.txt, report.json, *.svg) unless force, which
 * removes those files and nothing else. */
int lab_prepare_out_dir(const char *out_dir, bool force);

/* A scratch file $TMPDIR/msivm-lab-WHAT-XXXXXXSUFFIX (default /tmp), created
 * empty; path filled. 0, or -1 with a message on stderr and path "". */
int lab_make_scratch(char *path, size_t len, const char *what, const char *suffix);

/* Blocks SIGINT, SIGTERM and SIGHUP (unless ignored, as under nohup) and
 * returns a non-blocking signalfd for them (-1 on failure), so the lab can
 * stop its VMM and report. */
int lab_signals_setup(void);

/* A signal that arrived on sigfd (between runs), or 0. */
int lab_pending_signal(int sigfd);

/* "M:SS" or "H:MM:SS". */
void lab_fmt_secs(char *buf, size_t len, double secs);

/* The lab's exit status for bad usage or a host problem (nothing was measured). */
#define EXIT_USAGE 125

/* The msivm binary the lab runs: `msivm` beside this program (build/msivm-lab runs
 * build/msivm; make install puts both in bin/). Fills buf; returns 0, or -1 after a message. */
int lab_vmm_path(char *buf, size_t len);

/* `msivm lab [options]`: runs, prints progress and the table, writes JSON and
 * SVG charts. Returns the process exit status: 0 every run succeeded, 1 some
 * run failed, 125 usage/host error, 128+N interrupted by signal N (a partial
 * report is written). */
int lab_main(int argc, char **argv);

/* Runs the probe once under `vmm` in `mode` for `exp` and fills *run; a run
 * that failed (including one that could not start) has run->failed and
 * run->error set. Returns 0, or -EINTR if a signal arrived on o->sigfd during
 * the run: it was forwarded to the VMM, *signo is set and *run is to be
 * discarded with lab_run_free. */
int lab_run_once(const struct lab_options *o, const struct lab_experiment *exp,
		 enum lab_vmm vmm, unsigned mode, struct lab_run *run, int *signo);

void lab_run_free(struct lab_run *run);

/* The "snapshot" experiment's run (lab_run_once's contract): the echo probe booted cold,
 * snapshotted while running, its VMM stopped, restored in a new process, then restored
 * LAB_SNAPSHOT_CLONES times at once. msivm: the API's PUT /vm/snapshot and --restore, the
 * first instruction from --stats-json's first_run_ns; QEMU: QMP migrate to a file and
 * -incoming defer + migrate-incoming, the first instruction from its RESUME event. */
int lab_snapshot_run(const struct lab_options *o, const struct lab_experiment *exp,
		     enum lab_vmm vmm, unsigned mode, struct lab_run *run, int *signo);

/* Whether this host lets msivm run threads at SCHED_FIFO: tries it in a short-lived child.
 * Returns true, or false with the reason in why (e.g. a container without a real-time budget). */
bool lab_rt_possible(char *why, size_t len);

/* Fills *h (kernel, CPU, KVM modules, API version and mode of kvm_device or /dev/kvm). */
void lab_host_probe(struct lab_host *h, const char *kvm_device);

/* On a host with no usable KVM: replaces this process with the same lab inside a nested host
 * (scripts/nested/run.sh, or scripts/lab-linux.sh for `linux_guest`), found in the source tree
 * msivm was built in, after one line on stdout naming the mode and what it means for the figures.
 * argv is lab_main's (argv[0] "lab"); out_dir (probe lab: created here) stays the host's inside.
 * Returns only on failure: EXIT_USAGE after a message (no tree, or no usable KVM inside the nested
 * host either). */
int lab_nested_exec(const char *self, int argc, char **argv, const struct kvm_host *h, bool linux_guest,
		    const char *out_dir);

/* The report's KVM mode of *h: "nested" when this lab was started by lab_nested_exec, else the
 * host's kind; `detail` is one line for the report header. */
void lab_kvm_mode(const struct kvm_host *h, char *word, size_t wlen, char *detail, size_t dlen);

/* Parses the guest's "probe: result <exp> key=value ..." line for `key`.
 * Returns the value or NaN. */
double lab_guest_value(const char *console, const char *exp, const char *key);

/* Measures the host TSC frequency against CLOCK_MONOTONIC (about 20 ms). */
double lab_tsc_hz(void);

/* Summary statistics over runs of one metric (NaNs ignored); n = 0 if none.
 * Quartiles q1, median, q3 interpolate linearly between the closest ranks. */
struct lab_summary {
	unsigned n;
	double mean, median, q1, q3, min, max;
};

/* Of vals[0..n-1] (n <= LAB_MAX_RUNS; NaNs ignored). */
struct lab_summary lab_summary_of(const double *vals, unsigned n);

/* Of one metric over a configuration's runs. */
struct lab_summary lab_summarize(const struct lab_cell *c, unsigned metric);

/* Of the ratios a/b of one metric, run r of a against run r of b: the two
 * runs of one batch (lab_plan); a pair with a failed or zero run is left out. */
struct lab_summary lab_paired_ratio(const struct lab_cell *a, const struct lab_cell *b, unsigned metric);

/* One run of the matrix. */
struct lab_step {
	unsigned exp;                /* index into o->exps */
	enum lab_vmm vmm;
	unsigned mode;
	unsigned run;                /* batch number */
};

/* The lab's run order: per experiment, batch after batch (o->runs), in each
 * batch every wanted mode with msivm then QEMU right after it, so that the
 * VMMs alternate (A B A B ...) and share the host's drift. Cells that are
 * skipped (lab_cell_wanted's why) have no step. Fills up to max steps (steps
 * may be NULL) and returns how many there are. */
unsigned lab_plan(const struct lab_options *o, struct lab_step *steps, unsigned max);

/* The report's first tables: the VMM's own threads' CPU per request, msivm
 * beside QEMU, per experiment (those with LAB_VMM_CPU_KEY) and mode, then
 * the vCPU threads' likewise, and what /proc said about guest time. */
void lab_print_headline(FILE *out, const struct lab_options *o,
			struct lab_cell (*cells)[2][LAB_MAX_MODES]);

/* Writes `s` with HTML's special characters escaped. */
void lab_html_esc(FILE *f, const char *s);

/* Copies the <svg> element of the file at `path` into the page as a captioned figure (the XML
 * prolog and doctype left out). Returns false when there is no such chart. */
bool lab_html_inline_svg(FILE *f, const char *path, const char *caption);

/* A report page being written: OUT/report.html.tmp, renamed over OUT/report.html at the end. */
struct lab_html_page {
	FILE *f;
	char path[4096], tmp[4200];
};

/* Opens OUT_DIR/report.html.tmp for writing into page->f. Returns 0 or -errno with a message. */
int lab_html_begin(struct lab_html_page *page, const char *out_dir, struct error *err);

/* Ends the page: the script that counts the inline charts drawn into <body
 * data-charts="N/TOTAL"> (tests/e2e/check_report_html.sh reads it), the closing tags; closes it
 * and renames it over report.html. On failure the temporary file is removed. Returns 0 or -EIO. */
int lab_html_end(struct lab_html_page *page, struct error *err);

/* Writes OUT/report.html (through a temporary file): the run's header, `headline` (the text
 * headline tables) and, per experiment and figure, a table of every configuration (median,
 * min-max, runs with figures, failed and missing cells marked) with its chart inlined from
 * OUT/<experiment>-<metric>.svg where gnuplot drew one; the failed runs' errors. Self-contained:
 * no file or network beside it is read by the page. Returns 0 or -errno with a message. */
int lab_html_write(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES],
		   const char *headline, bool charts_drawn, struct error *err);

/* Writes report.json, the SVG charts and prints the terminal table. */
int lab_report(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES],
	       struct error *err);

#endif
