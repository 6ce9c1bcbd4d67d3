/* Lab driver: options, the run matrix (experiment x VMM x mode x run) with progress, then the report. */
#include "lab/lab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lab/lab_progress.h"
#include "lab/linux_lab.h"
#include "util/parse.h"
#include "virtio/virtio_pci.h"

#define LAB_QEMU_BATCHES 4 /* default --runs with --vs qemu */

static const char lab_usage[] =
	"usage: msivm lab [--modes LIST] [--runs N] [--experiments LIST] [--out DIR] [--force]\n"
	"                 [--vs qemu] [--probe FILE] [--probe-args ARGS] [--kvm-device PATH]\n"
	"       msivm lab --guest linux [options]   (the same on a stock Linux guest: --guest linux --help)\n"
	"  --modes LIST        interrupt modes, comma-separated (default msix,msix-shared,msi,intx)\n"
	"  --runs N            runs per configuration, 1-32 (default 3; with --vs qemu 4):\n"
	"                      batches, each running every configuration once, msivm\n"
	"                      and QEMU alternately\n"
	"  --experiments LIST  boot,rng,blk-randread,blk-randread-qd1,blk-randread-qd1-poll,\n"
	"                      blk-randread-qd1-io-same,blk-randread-qd1-io-apart,blk-randread-qd32,\n"
	"                      blk-randread-qd32-nocoalesce,blk-randread-qd64,\n"
	"                      blk-randread-qd4-nocoalesce,blk-randread-qd64-nocoalesce,\n"
	"                      blk-seqwrite,net-ping,net-tx,net-rx,snapshot,floor,\n"
	"                      lat-irqfd,lat-irqfd-pin,\n"
	"                      lat-irqfd-rt,lat-irqfd-ded, the same for lat-sigmsi and lat-intx\n"
	"                      (default: all)\n"
	"  --out DIR           report directory (default lab-out); refused if it holds an\n"
	"                      earlier report (report.txt, report.json, report.html, *.svg)\n"
	"  --force             remove an earlier report's files from DIR first (only those)\n"
	"  --vs qemu           run the same guest and devices under QEMU too, interleaved\n"
	"                      with msivm's runs\n"
	"  --probe FILE        probe guest (default: guest/probe.elf next to msivm, else\n"
	"                      ../lib/msivm/probe.elf from msivm's directory, as installed)\n"
	"  --probe-args ARGS   more probe command-line tokens for every run, space-separated\n"
	"                      (e.g. verbose); a run whose guest then does not do its work\n"
	"                      fails like any other\n"
	"  --kvm-device PATH   KVM device node for the msivm runs (msivm run --kvm-device)\n"
	"\n"
	"A run counts as done only when the guest printed its ready line, the experiment's\n"
	"result line (and the work window's end line where its CPU figures are wanted) and\n"
	"then the VMM exited with the probe's success status; otherwise it failed, and the\n"
	"progress line, report.txt and report.json say where it stopped.\n"
	"\n"
	"Progress goes to standard error: a line per run (redrawn in place on a terminal) and\n"
	"a line per failed run with its first error line; each run's standard error is kept in\n"
	"report.json. Scratch files live in $TMPDIR (default /tmp) and are removed on exit.\n"
	"SIGINT/SIGTERM stop the running VMM and write a partial report.\n"
	"Exit status: 0 every run succeeded, 1 some run failed, 125 the lab could not start\n"
	"(bad option, unreadable probe, --out holds a report), 128+N stopped by signal N.\n";

static int lab_usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "msivm lab: %s '%s' (see msivm lab --help)\n", what, arg);
	return EXIT_USAGE;
}

static int parse_modes(const char *s, unsigned *modes)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	*modes = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		enum irq_mode m;
		if (irq_mode_parse(t, &m))
			return -EINVAL;
		*modes |= 1u << m;
	}
	return *modes ? 0 : -EINVAL;
}

static int parse_experiments(const char *s, struct lab_options *o)
{
	char *buf = strdup(s); /* the whole list: a fixed buffer cut long lists mid-name */
	if (!buf)
		return -ENOMEM;
	o->nexps = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned i;
		for (i = 0; i < lab_nexperiments && strcmp(lab_experiments[i].name, t); i++)
			;
		if (i == lab_nexperiments || o->nexps == LAB_MAX_EXPS) {
			free(buf);
			return -EINVAL;
		}
		o->exps[o->nexps++] = &lab_experiments[i];
	}
	free(buf);
	return o->nexps ? 0 : -EINVAL;
}

static int parse_options(int argc, char **argv, struct lab_options *o, char *probe_buf,
			 size_t probe_len)
{
	static const struct option opts[] = {
		{ "modes", required_argument, NULL, 'm' }, { "runs", required_argument, NULL, 'r' },
		{ "experiments", required_argument, NULL, 'e' }, { "out", required_argument, NULL, 'o' },
		{ "vs", required_argument, NULL, 'q' }, { "probe", required_argument, NULL, 'p' },
		{ "force", no_argument, NULL, 'f' }, { "kvm-device", required_argument, NULL, 'k' },
		{ "probe-args", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' }, { 0, 0, 0, 0 },
	};
	uint64_t v;
	int c;
	bool runs_given = false;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (parse_modes(optarg, &o->modes))
				return lab_usage_error("bad mode list", optarg);
			break;
		case 'r':
			if (parse_uint(optarg, 1, LAB_MAX_RUNS, &v))
				return lab_usage_error("bad --runs (1-32)", optarg);
			o->runs = (unsigned)v;
			runs_given = true;
			break;
		case 'e':
			if (parse_experiments(optarg, o))
				return lab_usage_error("unknown experiment in", optarg);
			break;
		case 'o': o->out_dir = optarg; break;
		case 'p': o->probe = optarg; break;
		case 'f': o->force = true; break;
		case 'k': o->kvm_device = optarg; break;
		case 'a':
			if (strlen(optarg) > LAB_MAX_PROBE_ARGS)
				return lab_usage_error("--probe-args is too long", optarg);
			o->probe_args = optarg;
			break;
		case 'q':
			if (strcmp(optarg, "qemu"))
				return lab_usage_error("--vs takes 'qemu', not", optarg);
			o->vs_qemu = true;
			break;
		case 'h': fputs(lab_usage, stdout); return 0;
		case ':': return lab_usage_error("option needs a value:", argv[optind - 1]);
		default: return lab_usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return lab_usage_error("unexpected argument", argv[optind]);
	if (o->vs_qemu && !runs_given)
		o->runs = LAB_QEMU_BATCHES;
	if (!o->probe) {
		/* Next to msivm in the build tree, or where `make install` puts it. */
		char *dir = dirname(probe_buf); /* probe_buf holds the msivm path */
		char build[4096], installed[4096];
		snprintf(build, sizeof(build), "%s/guest/probe.elf", dir);
		snprintf(installed, sizeof(installed), "%s/../lib/msivm/probe.elf", dir);
		if (access(build, R_OK) && !access(installed, R_OK))
			snprintf(probe_buf, probe_len, "%s", installed);
		else
			snprintf(probe_buf, probe_len, "%s", build);
		o->probe = probe_buf;
	}
	if (access(o->probe, R_OK))
		return lab_usage_error("cannot read the probe guest (see --probe)", o->probe);
	return -1;
}

/* A sparse 64 MiB scratch image for the disk experiments. */
static int make_disk(struct lab_options *o)
{
	if (lab_make_scratch(o->disk, sizeof(o->disk), "disk", ".img"))
		return -1;
	if (truncate(o->disk, 64 << 20)) {
		fprintf(stderr, "msivm lab: cannot size '%s': %s\n", o->disk, strerror(errno));
		return -1;
	}
	return 0;
}

static void remove_scratch(struct lab_options *o)
{
	if (o->disk[0])
		unlink(o->disk);
	if (o->stats[0])
		unlink(o->stats);
	o->disk[0] = o->stats[0] = 0;
}

static void free_cells(struct lab_cell (*cells)[2][LAB_MAX_MODES], unsigned nexps)
{
	for (unsigned e = 0; e < nexps; e++)
		for (unsigned vmm = 0; vmm < 2; vmm++)
			for (unsigned m = 0; m < LAB_MAX_MODES; m++)
				for (unsigned r = 0; r < cells[e][vmm][m].nruns; r++)
					lab_run_free(&cells[e][vmm][m].runs[r]);
	free(cells);
}

/* Marks the cells that are wanted but cannot run here. */
static void mark_skipped(const struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES])
{
	const char *why;
	for (unsigned e = 0; e < o->nexps; e++)
		for (unsigned vmm = 0; vmm < 2; vmm++)
			for (unsigned m = 0; m < LAB_MAX_MODES; m++)
				if (lab_cell_wanted(o, o->exps[e], (enum lab_vmm)vmm, m, &why) && why) {
					cells[e][vmm][m].skipped = true;
					snprintf(cells[e][vmm][m].skip_reason,
						 sizeof(cells[e][vmm][m].skip_reason), "%s", why);
				}
}

/* Runs the steps of the plan in order; stops early when a signal arrives
 * (o->interrupted). */
static void run_matrix(struct lab_options *o, struct lab_cell (*cells)[2][LAB_MAX_MODES],
		       const struct lab_step *steps, unsigned nsteps)
{
	struct lab_progress p;
	lab_progress_init(&p, 3);
	for (unsigned i = 0; i < nsteps && !o->interrupted; i++) {
		const struct lab_step *st = &steps[i];
		const struct lab_experiment *x = o->exps[st->exp];
		struct lab_cell *c = &cells[st->exp][st->vmm][st->mode];
		const char *vname = st->vmm == LAB_QEMU ? "qemu" : "msivm";
		const char *mname = irq_mode_name((enum irq_mode)st->mode);
		if ((o->interrupted = lab_pending_signal(o->sigfd)))
			break;
		char what[160];
		snprintf(what, sizeof(what), "%s %s %s run %u/%u", x->name, vname, mname, st->run + 1,
			 o->runs);
		lab_progress_show(&p, o->runs_done, o->runs_planned, what);
		struct lab_run *run = &c->runs[c->nruns];
		int signo = 0;
		if (lab_run_once(o, x, st->vmm, st->mode, run, &signo) == -EINTR) {
			o->interrupted = signo;
			break;
		}
		c->nruns++;
		o->runs_done++;
		lab_progress_ran(&p, run->secs);
		if (run->failed) {
			o->runs_failed++;
			lab_progress_clear(&p);
			fprintf(stderr, "run %u/%u %s %s %s failed (status %d): %s\n", o->runs_done,
				o->runs_planned, vname, x->name, mname, run->status, run->error);
		}
	}
	lab_progress_clear(&p);
}

int lab_main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if ((!strcmp(argv[i], "--guest") && i + 1 < argc && !strcmp(argv[i + 1], "linux")) ||
		    !strcmp(argv[i], "--guest=linux"))
			return ll_main(argc, argv);
	static char self[4096], probe_path[4096];
	if (lab_vmm_path(self, sizeof(self)))
		return EXIT_USAGE;
	snprintf(probe_path, sizeof(probe_path), "%s", self);
	struct lab_options o = { .msivm = self, .out_dir = "lab-out", .runs = 3, .modes = 0xf,
				 .argc = argc, .argv = argv, .sigfd = -1 };
	for (unsigned i = 0; i < lab_nexperiments && o.nexps < LAB_MAX_EXPS; i++)
		o.exps[o.nexps++] = &lab_experiments[i];
	int st = parse_options(argc, argv, &o, probe_path, sizeof(probe_path));
	if (st >= 0)
		return st;
	struct kvm_host kh;
	kvm_host_probe(o.kvm_device, &kh);
	/* No KVM at all: nested. A device the operator named is used as it is (each run then fails
	 * with its error); one this user may not open stops the lab here, before any run. */
	if (kh.denied) {
		char who[400];
		kvm_host_access_why(o.kvm_device ? o.kvm_device : "/dev/kvm", who, sizeof(who));
		fprintf(stderr, "msivm lab: no permission to open %s (%s): no run can start; "
			"stopping\n", o.kvm_device ? o.kvm_device : "/dev/kvm", who[0] ? who : kh.why);
		return EXIT_USAGE;
	}
	if (kh.kind == KVM_HOST_NONE && !o.kvm_device)
		return lab_nested_exec(self, argc, argv, &kh, false, o.out_dir);
	if (lab_prepare_out_dir(o.out_dir, o.force))
		return EXIT_USAGE;
	time_t now = time(NULL);
	struct tm tm;
	strftime(o.date, sizeof(o.date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	lab_host_probe(&o.host, o.kvm_device);
	o.tsc_hz = lab_tsc_hz();
	o.host_cpus = o.host.cpus;
	if (!lab_rt_possible(o.rt_refused, sizeof(o.rt_refused)))
		printf("msivm lab: the real-time experiments (-rt, -ded) are %s: this host grants no "
		       "real-time budget (no CAP_SYS_NICE and RLIMIT_RTPRIO 0, or a container without one); "
		       "they are reported as skipped\n", o.rt_refused);
	struct lab_cell (*cells)[2][LAB_MAX_MODES] = calloc(o.nexps, sizeof(*cells));
	if (!cells)
		return EXIT_USAGE;
	/* From here on every exit goes through the end: scratch files removed. */
	o.sigfd = lab_signals_setup();
	int status = 0;
	bool disk = false;
	for (unsigned e = 0; e < o.nexps; e++)
		disk |= o.exps[e]->dev == LAB_DEV_DISK;
	if (lab_make_scratch(o.stats, sizeof(o.stats), "stats", ".json") || (disk && make_disk(&o))) {
		status = EXIT_USAGE;
		goto out;
	}
	o.runs_planned = lab_plan(&o, NULL, 0);
	struct lab_step *steps = calloc(o.runs_planned ? o.runs_planned : 1, sizeof(*steps));
	if (!steps) {
		status = EXIT_USAGE;
		goto out;
	}
	lab_plan(&o, steps, o.runs_planned);
	mark_skipped(&o, cells);
	run_matrix(&o, cells, steps, o.runs_planned);
	free(steps);
	remove_scratch(&o);
	if (o.interrupted)
		fprintf(stderr, "msivm lab: interrupted (%s) after %u/%u runs; writing a partial report\n",
			strsignal(o.interrupted), o.runs_done, o.runs_planned);
	struct error err = { "" };
	if (lab_report(&o, cells, &err)) {
		fprintf(stderr, "msivm lab: %s\n", err.msg);
		status = EXIT_USAGE;
	}
	if (o.runs_failed)
		fprintf(stderr, "msivm lab: %u of %u runs failed (each run's error output is in %s/report.json)\n",
			o.runs_failed, o.runs_done, o.out_dir);
	if (o.interrupted)
		fprintf(stderr, "msivm lab: interrupted after %u/%u runs\n", o.runs_done, o.runs_planned);
	if (o.interrupted)
		status = 128 + o.interrupted;
	else if (!status && o.runs_failed)
		status = 1;
out:
	remove_scratch(&o);
	if (o.sigfd >= 0)
		close(o.sigfd);
	free_cells(cells, o.nexps);
	return status;
}
