/* Linux lab merge: the report.json files of several lab sessions (one per nested L1 boot) -> one report. */
#include "lab/linux_lab.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 64

static const char usage[] =
	"usage: msivm lab --guest linux --merge [--out DIR] [--force] REPORT.json...\n"
	"Builds one report from the raw runs of several `msivm lab --guest linux` sessions (as\n"
	"scripts/lab-linux.sh does with one nested L1 per run). Every run is interpreted again\n"
	"from its console; its CPU, exit and window figures are taken as recorded.\n";

static double num(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static char *text(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? strdup(s) : NULL;
}

static struct ll_cpu cpu_of(json_t *o)
{
	return (struct ll_cpu){ num(o, "vcpu_s"), num(o, "other_s") };
}

static const struct ll_config *config_named(const char *name)
{
	for (unsigned i = 0; name && i < ll_nconfigs; i++)
		if (!strcmp(ll_configs[i].name, name))
			return &ll_configs[i];
	return NULL;
}

/* One recorded run into *r: interpreted again from its console, the watcher's figures as recorded. */
static void load_run(json_t *j, const struct ll_config *cfg, struct ll_run *r)
{
	memset(r, 0, sizeof(*r));
	r->run_init_s = r->ready_s = NAN;
	r->worked = json_is_true(json_object_get(j, "worked"));
	const char *vs = json_string_value(json_object_get(j, "vsock")); /* absent before vsock */
	r->vsock = !vs ? LL_VSOCK_NONE : !strcmp(vs, "unix") ? LL_VSOCK_UNIX
		 : !strcmp(vs, "vhost") ? LL_VSOCK_VHOST : LL_VSOCK_NONE;
	json_t *asked = json_object_get(j, "asked"), *a;
	size_t ai;
	r->asked = 0;
	json_array_foreach(asked, ai, a)
		for (unsigned w = 0; w < LL_NWORK; w++)
			if (json_is_string(a) && !strcmp(json_string_value(a), ll_work_name((enum ll_work)w)))
				r->asked |= LL_WORK_BIT(w);
	if (!json_is_array(asked) && r->worked) /* a report from before the list */
		r->asked = LL_WORKS_BEFORE_DEPTH | (r->vsock ? ll_works_default(r->vsock) &
			   (LL_WORK_BIT(LL_VSOCK_RR) | LL_WORK_BIT(LL_VSOCK_BULK)) : 0);
	r->console = text(j, "console");
	r->errout = text(j, "errout");
	json_t *st = json_object_get(j, "stats");
	r->stats_json = json_is_string(st) ? strdup(json_string_value(st))
		      : json_is_object(st) ? json_dumps(st, JSON_COMPACT) : NULL;
	ll_parse_console(r->console, cfg, r->worked, r);
	/* The recorded verdict stands (exit status, timeout, reset). */
	r->failed = json_is_true(json_object_get(j, "failed"));
	const char *e = json_string_value(json_object_get(j, "error"));
	snprintf(r->error, sizeof(r->error), "%s", e ? e : "");
	r->status = (int)num(j, "status");
	r->wall_s = num(j, "wall_s");
	r->cpu_total = cpu_of(json_object_get(j, "cpu_total"));
	json_t *works = json_object_get(j, "work");
	for (unsigned k = 0; k < LL_NWORK; k++) {
		json_t *w = json_object_get(works, ll_work_name((enum ll_work)k));
		struct ll_work_result *wr = &r->work[k];
		wr->window_s = num(w, "window_s");
		wr->cpu = cpu_of(json_object_get(w, "cpu"));
		json_t *ex = json_object_get(w, "exits");
		for (unsigned x = 0; x < LL_NEXIT; x++)
			wr->exits[x] = num(ex, ll_exit_name((enum ll_exit)x));
	}
}

static struct ll_cell *cell_of(struct ll_cell *cells, unsigned n, enum lab_vmm vmm,
			       const struct ll_config *cfg)
{
	for (unsigned i = 0; i < n; i++)
		if (cells[i].vmm == vmm && cells[i].cfg == cfg)
			return &cells[i];
	return NULL;
}

/* The first file's options and host stand for the merged session. */
static void take_header(json_t *root, struct ll_options *o, char *kernel, char *initrd, size_t len)
{
	json_t *opt = json_object_get(root, "options"), *h = json_object_get(root, "host");
	const char *s;
	o->fio_s = (unsigned)num(opt, "fio_s");
	o->iperf_s = (unsigned)num(opt, "iperf_s");
	o->cpus = (unsigned)num(opt, "cpus");
	o->mem_mib = (unsigned)num(opt, "mem_mib");
	snprintf(kernel, len, "%s", (s = json_string_value(json_object_get(opt, "kernel"))) ? s : "?");
	snprintf(initrd, len, "%s", (s = json_string_value(json_object_get(opt, "initrd"))) ? s : "?");
	o->kernel = kernel;
	o->initrd = initrd;
	snprintf(o->host.kernel, sizeof(o->host.kernel), "%s",
		 (s = json_string_value(json_object_get(h, "kernel"))) ? s : "?");
	snprintf(o->host.cpu, sizeof(o->host.cpu), "%s",
		 (s = json_string_value(json_object_get(h, "cpu"))) ? s : "?");
	snprintf(o->host.kvm_modules, sizeof(o->host.kvm_modules), "%s",
		 (s = json_string_value(json_object_get(h, "kvm_modules"))) ? s : "?");
	snprintf(o->host.kvm_mode, sizeof(o->host.kvm_mode), "%s",
		 (s = json_string_value(json_object_get(h, "kvm_mode"))) ? s : "");
	snprintf(o->host.kvm_mode_detail, sizeof(o->host.kvm_mode_detail), "%s",
		 (s = json_string_value(json_object_get(h, "kvm_mode_detail"))) ? s : "");
	o->host.cpus = (unsigned)num(h, "cpus");
	double api = num(h, "kvm_api");
	o->host.kvm_api = isnan(api) ? -1 : (int)api;
}

/* Loads each report (argv[0..n)) into roots; seen[vmm] gets a bit per configuration its runs
 * name (vmm 1: QEMU), o->vs_qemu whether QEMU ran. False after a line on stderr. */
static bool load_reports(char **files, int n, json_t **roots, unsigned seen[2], struct ll_options *o)
{
	for (int i = 0; i < n; i++) {
		json_error_t je;
		roots[i] = json_load_file(files[i], 0, &je);
		const char *kind = json_string_value(json_object_get(roots[i], "report"));
		if (!roots[i] || !kind || strcmp(kind, "linux-lab")) {
			fprintf(stderr, "msivm lab --merge: '%s' is not a Linux lab report.json%s%s\n",
				files[i], roots[i] ? "" : ": ", roots[i] ? "" : je.text);
			return false;
		}
		size_t k;
		json_t *run;
		json_array_foreach(json_object_get(roots[i], "runs"), k, run) {
			const struct ll_config *cfg = config_named(json_string_value(json_object_get(run, "config")));
			const char *vmm = json_string_value(json_object_get(run, "vmm"));
			if (!cfg || !vmm)
				continue;
			bool q = !strcmp(vmm, "qemu");
			seen[q] |= 1u << (cfg - ll_configs);
			o->vs_qemu |= q;
		}
	}
	return true;
}

/* Puts every run of the reports into its cell (at most LL_MAX_RUNS each) and counts them in o:
 * done, failed, runs per cell and runs with a workload. */
static void fill_cells(json_t **roots, int n, struct ll_cell *cells, unsigned ncells,
		       struct ll_options *o)
{
	for (int i = 0; i < n; i++) {
		size_t k;
		json_t *run;
		json_array_foreach(json_object_get(roots[i], "runs"), k, run) {
			const struct ll_config *cfg = config_named(json_string_value(json_object_get(run, "config")));
			const char *vmm = json_string_value(json_object_get(run, "vmm"));
			struct ll_cell *cell = cfg && vmm ? cell_of(cells, ncells, strcmp(vmm, "qemu") ? LAB_MSIVM
									 : LAB_QEMU, cfg) : NULL;
			if (!cell || cell->skipped || cell->nruns == LL_MAX_RUNS)
				continue;
			struct ll_run *r = &cell->runs[cell->nruns++];
			load_run(run, cfg, r);
			o->runs_done++;
			o->runs_failed += r->failed;
		}
	}
	for (unsigned i = 0; i < ncells; i++) {
		unsigned worked = 0;
		for (unsigned r = 0; r < cells[i].nruns; r++)
			worked += cells[i].runs[r].worked;
		o->runs = cells[i].nruns > o->runs ? cells[i].nruns : o->runs;
		o->io_runs = worked > o->io_runs ? worked : o->io_runs;
	}
}

int ll_merge_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "guest", required_argument, NULL, 'g' }, { "merge", no_argument, NULL, 'm' },
		{ "out", required_argument, NULL, 'o' }, { "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' }, { 0, 0, 0, 0 },
	};
	struct ll_options o = { .out_dir = "lab-linux-out", .sigfd = -1, .argc = argc, .argv = argv };
	static char kernel[4096], initrd[4096];
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'g': case 'm': break;
		case 'o': o.out_dir = optarg; break;
		case 'f': o.force = true; break;
		case 'h': fputs(usage, stdout); return 0;
		default:
			fprintf(stderr, "msivm lab --merge: bad option '%s'\n%s", argv[optind - 1], usage);
			return EXIT_USAGE;
		}
	}
	int nfiles = argc - optind;
	if (nfiles < 1 || nfiles > MAX_FILES) {
		fprintf(stderr, "msivm lab --merge: give 1 to %d report.json files\n%s", MAX_FILES, usage);
		return EXIT_USAGE;
	}
	json_t *roots[MAX_FILES] = { 0 };
	unsigned seen[2] = { 0, 0 };
	int status = EXIT_USAGE;
	if (!load_reports(argv + optind, nfiles, roots, seen, &o))
		goto out;
	take_header(roots[0], &o, kernel, initrd, sizeof(kernel));
	struct ll_cell *cells = calloc(2 * ll_nconfigs, sizeof(*cells));
	if (!cells)
		goto out;
	unsigned ncells = ll_plan(&o, seen[0] | seen[1], cells);
	fill_cells(roots, nfiles, cells, ncells, &o);
	o.runs_planned = o.runs_done;
	const char *d = json_string_value(json_object_get(roots[0], "date")); /* the first session's */
	snprintf(o.date, sizeof(o.date), "%s", d ? d : "?");
	struct error err = { "" };
	if (lab_prepare_out_dir(o.out_dir, o.force)) {
		status = EXIT_USAGE;
	} else if (ll_report(&o, cells, ncells, &err)) {
		fprintf(stderr, "msivm lab --merge: %s\n", err.msg);
		status = EXIT_USAGE;
	} else {
		fprintf(stderr, "msivm lab --merge: %u runs from %d files (%u failed)\n", o.runs_done,
			nfiles, o.runs_failed);
		status = o.runs_failed ? 1 : 0;
	}
	for (unsigned i = 0; i < ncells; i++)
		for (unsigned r = 0; r < cells[i].nruns; r++)
			ll_run_free(&cells[i].runs[r]);
	free(cells);
out:
	for (int i = 0; i < nfiles; i++)
		json_decref(roots[i]);
	return status;
}
