/* Lab runs (probe guest): the VMM command line per experiment and mode, one run, its figures. */
#include "lab/lab.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lab/lab_metrics.h"
#include "lab/lab_spawn.h"
#include "virtio/virtio_pci.h"

#define RUN_TIMEOUT_NS (180ULL * 1000000000ULL)
#define MAX_ARGS 48

double lab_tsc_hz(void)
{
	uint64_t t0 = lab_now_ns(), c0 = __builtin_ia32_rdtsc();
	struct timespec d = { 0, 20 * 1000 * 1000 };
	nanosleep(&d, NULL);
	uint64_t t1 = lab_now_ns(), c1 = __builtin_ia32_rdtsc();
	return (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
}

struct argv_buf {
	char *v[MAX_ARGS + 1];
	char store[MAX_ARGS][4352];
	unsigned n;
};

static void arg(struct argv_buf *a, const char *fmt, const char *s)
{
	if (a->n >= MAX_ARGS)
		return;
	if (snprintf(a->store[a->n], sizeof(a->store[0]), fmt, s ? s : "") >= (int)sizeof(a->store[0]))
		return; /* cannot happen: every argument is shorter than a path */
	a->v[a->n] = a->store[a->n];
	a->v[++a->n] = NULL;
}

/* Splits `s` on spaces into further arguments. */
static void args_split(struct argv_buf *a, const char *s)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", s ? s : "");
	char *save = NULL;
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
		arg(a, "%s", t);
}

static void build_msivm_argv(const struct lab_options *o, const struct lab_experiment *exp,
			     unsigned mode, const char *cmdline, const char *json,
			     struct argv_buf *a)
{
	char dev[4352];
	const char *m = irq_mode_name((enum irq_mode)mode);
	arg(a, "%s", o->msivm);
	args_split(a, "run -q --kernel");
	arg(a, "%s", o->probe);
	arg(a, "%s", "--cmdline");
	arg(a, "%s", cmdline);
	arg(a, "%s", "--stats-json");
	arg(a, "%s", json);
	if (o->kvm_device) {
		arg(a, "%s", "--kvm-device");
		arg(a, "%s", o->kvm_device);
	}
	if (exp->dev == LAB_DEV_DISK) {
		snprintf(dev, sizeof(dev), "path=%s,irq=%s%s", o->disk, m, exp->dev_extra ? exp->dev_extra : "");
		arg(a, "%s", "--disk");
	} else if (exp->dev == LAB_DEV_NET) {
		snprintf(dev, sizeof(dev), "backend=peer,irq=%s%s", m, exp->dev_extra ? exp->dev_extra : "");
		arg(a, "%s", "--net");
	} else {
		snprintf(dev, sizeof(dev), "irq=%s%s", m, exp->dev_extra ? exp->dev_extra : "");
		arg(a, "%s", "--rng");
	}
	arg(a, "%s", dev);
	args_split(a, exp->msivm_extra);
}

/* QEMU's virtio-pci offers MSI-X or nothing: msix and msix-shared use its
 * vectors, intx uses vectors=0, msi has no equivalent (lab_cell_wanted). */
static void build_qemu_argv(const struct lab_options *o, const struct lab_experiment *exp,
			    unsigned mode, const char *cmdline, struct argv_buf *a)
{
	const char *vec = mode == IRQ_MODE_INTX ? ",vectors=0" : "";
	char dev[4352];
	/* debug-threads: the vCPU threads are named "CPU N/KVM" (lab_threads.h) */
	args_split(a, "qemu-system-x86_64 -name msivm-lab,debug-threads=on -M " LAB_QEMU_MACHINE
		      " -enable-kvm -cpu host,-arch-capabilities"
		      " -m 256M -nodefaults -no-user-config -nographic -serial stdio -no-reboot"
		      " -device isa-debug-exit,iobase=0xf4,iosize=4 -kernel");
	arg(a, "%s", o->probe);
	arg(a, "%s", "-append");
	arg(a, "%s", cmdline);
	if (exp->dev == LAB_DEV_DISK) {
		snprintf(dev, sizeof(dev), "file=%s,if=none,id=d0,format=raw,aio=io_uring", o->disk);
		arg(a, "%s", "-drive");
		arg(a, "%s", dev);
		snprintf(dev, sizeof(dev), "virtio-blk-pci,drive=d0,disable-legacy=on%s", vec);
	} else if (exp->dev == LAB_DEV_NET) {
		/* QEMU's user network answers ARP and ICMP for 10.0.2.2 and passes
		 * UDP to the host, like msivm's peer (responder / sink). */
		args_split(a, "-netdev user,id=n0");
		snprintf(dev, sizeof(dev), "virtio-net-pci,netdev=n0,disable-legacy=on%s", vec);
	} else {
		snprintf(dev, sizeof(dev), "virtio-rng-pci,disable-legacy=on%s", vec);
	}
	arg(a, "%s", "-device");
	arg(a, "%s", dev);
}

struct probe_watch {
	pid_t pid;
	uint64_t t_ns;                 /* of the console chunk being looked at */
	size_t scanned;                /* console bytes already looked at */
	char result[64];               /* "probe: result <experiment's result> " */
	bool ready, resulted;          /* the ready line, the experiment's result line seen */
	uint64_t ready_ns, ready_cpu_ns;
	uint64_t begin_ns;
	bool begun, ended;             /* the last window's lines seen */
	struct lab_cpu_snap begin, end;
	double work_ms;
};

static bool line_is(const char *line, size_t n, const char *what)
{
	size_t k = strlen(what);
	return n >= k && !memcmp(line, what, k);
}

/* At the ready line: the time and the process CPU so far. At the work
 * window's lines: the VMM's threads. */
static void on_probe_line(void *ctx, const char *line, size_t n)
{
	struct probe_watch *w = ctx;
	if (!w->ready && line_is(line, n, LAB_READY_LINE)) {
		w->ready = true;
		w->ready_ns = w->t_ns;
		w->ready_cpu_ns = lab_proc_cpu_ns(w->pid);
	} else if (w->ready && line_is(line, n, w->result)) {
		w->resulted = true;
	} else if (line_is(line, n, LAB_WORK_BEGIN_LINE)) {
		w->begun = !lab_cpu_snap_take(w->pid, &w->begin);
		w->ended = false;
		w->begin_ns = w->t_ns;
	} else if (w->begun && line_is(line, n, LAB_WORK_END_LINE)) {
		w->ended = !lab_cpu_snap_take(w->pid, &w->end);
		w->work_ms = (double)(w->t_ns - w->begin_ns) / 1e6;
	}
}

static void watch_probe(void *ctx, pid_t pid, const char *console, size_t len, uint64_t t_ns)
{
	struct probe_watch *w = ctx;
	w->pid = pid;
	w->t_ns = t_ns;
	lab_console_lines(console, len, &w->scanned, on_probe_line, w);
}

/* The first non-empty line of s, or NULL. */
static const char *first_line(const char *s, int *len)
{
	while (s && *s) {
		size_t n = strcspn(s, "\n");
		if (n) {
			*len = n > 200 ? 200 : (int)n;
			return s;
		}
		s += 1;
	}
	return NULL;
}

/* The last non-empty console line, at most 120 characters, in buf. */
static void last_line(const char *console, char *buf, size_t len)
{
	const char *last = NULL;
	size_t lastn = 0;
	for (const char *p = console; p && *p;) {
		size_t n = strcspn(p, "\n");
		if (n)
			last = p, lastn = n;
		p += n + (p[n] == '\n');
	}
	snprintf(buf, len, "%.*s", (int)(lastn > 120 ? 120 : lastn), last ? last : "");
}

/* What the guest showed of its work: whether the run did what the experiment needs. */
struct probe_seen {
	bool ready;       /* "probe: ready" */
	bool worked;      /* the result line, and the window's end line where it was asked for */
};

/* One line for run->error: the first reason the run does not count, with the VMM's first error
 * line (or its status) and, once the guest was ready, the console line where it stopped. */
static void describe_failure(struct lab_run *run, const struct lab_child *ch, int expected,
			     struct probe_seen seen)
{
	int n = 0;
	char status[48], last[128];
	const char *line = first_line(run->errout, &n);
	if (line)
		snprintf(status, sizeof(status), "status %d", run->status);
	else if (run->status > 128)
		snprintf(status, sizeof(status), "killed by signal %d", run->status - 128);
	else
		snprintf(status, sizeof(status), "exit status %d", run->status);
	last_line(run->console, last, sizeof(last));
	if (ch->timed_out)
		snprintf(run->error, sizeof(run->error), "timed out after %llu s%s%.*s",
			 RUN_TIMEOUT_NS / 1000000000ULL, line ? "; " : "", n, line ? line : "");
	else if (!seen.ready && !line)
		snprintf(run->error, sizeof(run->error),
			 "the guest never got ready (no '" LAB_READY_LINE "' line, %s); its console ends: %s",
			 status, *last ? last : "(nothing)");
	else if (!seen.worked && seen.ready)
		snprintf(run->error, sizeof(run->error),
			 "the guest stopped before its result (%s); its console ends: %s", status, last);
	else if (line)
		snprintf(run->error, sizeof(run->error), "%.*s", n, line);
	else
		snprintf(run->error, sizeof(run->error),
			 "%s instead of %d, no error output (the guest's console is in report.json)",
			 status, expected);
}

void lab_run_free(struct lab_run *run)
{
	free(run->console);
	free(run->raw_json);
	free(run->errout);
	run->console = run->raw_json = run->errout = NULL;
}

int lab_run_once(const struct lab_options *o, const struct lab_experiment *exp,
		 enum lab_vmm vmm, unsigned mode, struct lab_run *run, int *signo)
{
	if (exp->run)
		return exp->run(o, exp, vmm, mode, run, signo);
	char cmdline[512];
	int expected = vmm == LAB_QEMU ? 1 : 0; /* the probe's exit=0 through each debug-exit */
	memset(run, 0, sizeof(*run));
	/* The work window only where its figures are wanted: its pauses would
	 * count in boot's times. */
	bool window = lab_metric_index(exp, LAB_VMM_CPU_KEY) >= 0;
	snprintf(cmdline, sizeof(cmdline), "%s%s%s%s exit=0", exp->guest_args,
		 window ? " " LAB_WINDOW_ARG : "", o->probe_args ? " " : "",
		 o->probe_args ? o->probe_args : "");
	if (vmm == LAB_MSIVM && truncate(o->stats, 0) && errno != ENOENT) {
		run->failed = true;
		run->status = -1;
		snprintf(run->error, sizeof(run->error), "msivm lab: cannot truncate %.160s: %s", o->stats,
			 strerror(errno));
		return 0;
	}
	struct argv_buf *a = calloc(1, sizeof(*a));
	struct probe_watch *w = calloc(1, sizeof(*w));
	if (!a || !w) {
		free(a);
		free(w);
		run->failed = true;
		run->status = -1;
		snprintf(run->error, sizeof(run->error), "msivm lab: out of memory");
		return 0;
	}
	snprintf(w->result, sizeof(w->result), "probe: result %s ", exp->result);
	if (vmm == LAB_MSIVM)
		build_msivm_argv(o, exp, mode, cmdline, o->stats, a);
	else
		build_qemu_argv(o, exp, mode, cmdline, a);
	struct lab_child ch = { .timeout_ns = RUN_TIMEOUT_NS, .watch = watch_probe, .ctx = w };
	struct rusage ru = { 0 };
	int ret = lab_spawn(a->v, o->sigfd, &ch, run, &ru);
	free(a);
	if (!ret && w->ended) {
		run->have_work_cpu = true;
		lab_cpu_window(&w->begin, &w->end, &run->work_cpu);
		run->window_failed = !lab_cpu_window_ok(&run->work_cpu, run->window_why,
							sizeof(run->window_why));
		run->work_ms = w->work_ms;
		run->work_begin_ms = (double)w->begin_ns / 1e6;
	}
	uint64_t ready_ns = w->ready_ns, ready_cpu_ns = w->ready_cpu_ns;
	struct probe_seen seen = { w->ready, w->resulted && (!window || w->ended) };
	free(w);
	if (ret) {
		run->failed = true;
		run->status = -1;
		snprintf(run->error, sizeof(run->error), "msivm lab: cannot start the %s process: %s",
			 vmm == LAB_QEMU ? "QEMU" : "msivm", strerror(-ret));
		return 0;
	}
	if (ch.signo) {
		*signo = ch.signo;
		lab_run_free(run);
		return -EINTR;
	}
	run->raw_json = vmm == LAB_MSIVM ? lab_slurp(o->stats) : NULL;
	run->failed = ch.timed_out || !seen.ready || !seen.worked || run->status != expected;
	if (run->failed)
		describe_failure(run, &ch, expected, seen);
	double cpu_ns = ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
			((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
	struct lab_raw raw = {
		.vmm = vmm, .wall_ns = run->secs * 1e9,
		.ready_ns = ready_ns ? (double)ready_ns : NAN,
		.cpu_ns = cpu_ns,
		.cpu_after_ready_ns = ready_ns && cpu_ns > (double)ready_cpu_ns
					      ? cpu_ns - (double)ready_cpu_ns : NAN,
		.tsc_hz = o->tsc_hz, .console = run->console,
		.stats_json = run->raw_json,
		.work_cpu = run->have_work_cpu && !run->window_failed ? &run->work_cpu : NULL,
		.ok = !run->failed,
	};
	lab_compute_metrics(exp, &raw, run->v);
	return 0;
}
