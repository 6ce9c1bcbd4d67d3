/* Lab experiment "snapshot": cold start, snapshot, restore in a new process and clones, msivm beside QEMU's migrate/-incoming. */
#include "lab/lab.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "api/api.h"
#include "lab/lab_metrics.h"
#include "lab/lab_qmp.h"
#include "lab/lab_spawn.h"
#include "lab/lab_tty.h"
#include "virtio/virtio_pci.h"

#define STEP_NS      (60ULL * 1000000000ULL) /* each step's limit */
#define ECHO_READY   "probe: echo ready"
#define ECHO_CMDLINE "echo exit=5"           /* "quit" ends it: msivm 5, QEMU's debug-exit 11 */

enum { F_API, F_STATE, F_MEM, F_STATS, F_ERR, F_QMP, F_NFILES };
static const char *const file_role[F_NFILES] = { "snap-api", "snap-state", "snap-mem",
						 "snap-stats", "snap-err", "snap-qmp" };

struct snap {
	const struct lab_options *o;
	const struct lab_experiment *exp;
	enum lab_vmm vmm;
	unsigned mode;
	struct lab_run *run;
	char f[F_NFILES][4096];
	int signo;                /* a signal that arrived between steps */
};

static void set(struct snap *s, const char *key, double val)
{
	int i = lab_metric_index(s->exp, key);
	if (i >= 0)
		s->run->v[i] = val;
}

/* Marks the run failed with a one-line reason (the first one wins). Returns -1. */
__attribute__((format(printf, 2, 3))) static int fail(struct snap *s, const char *fmt, ...)
{
	if (!s->run->failed) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(s->run->error, sizeof(s->run->error), fmt, ap);
		va_end(ap);
		s->run->failed = true;
	}
	return -1;
}

/* Whether the lab was asked to stop; the signal is kept for lab_run_once's caller. */
static bool stopped(struct snap *s)
{
	if (!s->signo)
		s->signo = lab_pending_signal(s->o->sigfd);
	return s->signo != 0;
}

/* After a child was reaped: one that a Ctrl-C reached first (it died of SIGINT or exited 130)
 * stops the lab as the user's interrupt (lab_interrupted_child), as for every other experiment. */
static void reaped(struct snap *s, const struct lab_tty *t)
{
	if (!s->signo && t->status == 128 + SIGINT)
		s->signo = lab_interrupted_child(s->o->sigfd);
}

/* lab_tty_close, then reaped. */
static void end(struct snap *s, struct lab_tty *t)
{
	lab_tty_close(t);
	reaped(s, t);
}

static uint64_t deadline(void) { return lab_now_ns() + STEP_NS; }

static int64_t realtime_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- command lines ---- */

struct argv {
	char *v[40];
	char store[40][4352];
	unsigned n;
};

__attribute__((format(printf, 2, 3))) static void add(struct argv *a, const char *fmt, ...)
{
	if (a->n >= 39)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->store[a->n], sizeof(a->store[0]), fmt, ap);
	va_end(ap);
	a->v[a->n] = a->store[a->n];
	a->v[++a->n] = NULL;
}

static void msivm_common(struct snap *s, struct argv *a)
{
	add(a, "%s", s->o->msivm);
	add(a, "run");
	add(a, "-q");
	add(a, "--serial");
	add(a, "tty");
	add(a, "--stats-json");
	add(a, "%s", s->f[F_STATS]);
	if (s->o->kvm_device) {
		add(a, "--kvm-device");
		add(a, "%s", s->o->kvm_device);
	}
}

static void msivm_cold_argv(struct snap *s, struct argv *a)
{
	msivm_common(s, a);
	add(a, "--kernel");
	add(a, "%s", s->o->probe);
	add(a, "--cmdline");
	add(a, ECHO_CMDLINE);
	add(a, "--rng");
	add(a, "irq=%s", irq_mode_name((enum irq_mode)s->mode));
	add(a, "--api-socket");
	add(a, "%s", s->f[F_API]);
}

static void msivm_restore_argv(struct snap *s, struct argv *a)
{
	msivm_common(s, a);
	add(a, "--restore");
	add(a, "state=%s,mem=%s", s->f[F_STATE], s->f[F_MEM]);
}

/* QEMU with the same guest: q35, the rng with MSI-X vectors (none for intx), QMP when `qmp`. */
static void qemu_argv(struct snap *s, struct argv *a, bool qmp, const char *incoming)
{
	static const char *const base[] = {
		"qemu-system-x86_64", "-M", LAB_QEMU_MACHINE, "-enable-kvm", "-cpu",
		"host,-arch-capabilities", "-m", "256M", "-nodefaults", "-no-user-config",
		"-display", "none", "-serial", "stdio", "-device", "isa-debug-exit,iobase=0xf4,iosize=4",
		"-kernel",
	};
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		add(a, "%s", base[i]);
	add(a, "%s", s->o->probe);
	add(a, "-append");
	add(a, ECHO_CMDLINE);
	add(a, "-device");
	add(a, "virtio-rng-pci,disable-legacy=on%s", s->mode == IRQ_MODE_INTX ? ",vectors=0" : "");
	if (qmp) {
		add(a, "-qmp");
		add(a, "unix:%s,server=on,wait=off", s->f[F_QMP]);
	}
	if (incoming) {
		add(a, "-incoming");
		add(a, "%s", incoming);
	}
}

/* ---- steps shared by both VMMs ---- */

static int start(struct snap *s, struct lab_tty *t, struct argv *a, const char *what)
{
	int ret = lab_tty_spawn(t, a->v, s->f[F_ERR]);
	return ret ? fail(s, "cannot start %s: %s", what, strerror(-ret)) : 0;
}

/* Sends "quit" and checks the VMM's status; `stats` reads msivm's --stats-json first_run_ns. */
static int quit(struct snap *s, struct lab_tty *t, const char *what, uint64_t *first_run_ns)
{
	int want = s->vmm == LAB_QEMU ? 11 : 5;
	bool ended = !lab_tty_send(t, "quit") && lab_tty_wait(t, deadline());
	s->run->status = t->status;
	reaped(s, t);
	if (!ended || t->status != want)
		return fail(s, "%s %s with status %d instead of %d", what,
			    ended ? "ended" : "did not end after quit (killed)", t->status, want);
	if (!first_run_ns)
		return 0;
	json_t *j = json_load_file(s->f[F_STATS], 0, NULL);
	json_t *v = json_object_get(j, "first_run_ns");
	*first_run_ns = json_is_integer(v) ? (uint64_t)json_integer_value(v) : 0;
	json_decref(j);
	return *first_run_ns ? 0 : fail(s, "%s's --stats-json has no first_run_ns", what);
}

/* LAB_SNAPSHOT_CLONES restores at once: the mean PSS of one once every clone answered. */
static int clones(struct snap *s, struct argv *a)
{
	struct lab_tty t[LAB_SNAPSHOT_CLONES] = { 0 };
	int ret = 0;
	long pss = 0;
	for (unsigned k = 0; k < LAB_SNAPSHOT_CLONES && !ret; k++)
		ret = start(s, &t[k], a, "a clone");
	for (unsigned k = 0; k < LAB_SNAPSHOT_CLONES && !ret; k++) {
		char line[32], echo[48];
		snprintf(line, sizeof(line), "clone%u", k);
		snprintf(echo, sizeof(echo), "probe: echo %s", line);
		/* Written until it comes back: QEMU drops input during its incoming migration. */
		uint64_t end = deadline(), got = 0;
		while (!got && lab_now_ns() < end && !lab_tty_send(&t[k], line))
			got = lab_tty_wait_line(&t[k], echo, lab_now_ns() + 20000000ULL);
		if (!got)
			ret = fail(s, "clone %u never answered its console", k);
	}
	for (unsigned k = 0; k < LAB_SNAPSHOT_CLONES && !ret; k++) {
		long p = lab_pss_kib(t[k].pid);
		if (p < 0)
			ret = fail(s, "cannot read clone %u's PSS", k);
		pss += p;
	}
	for (unsigned k = 0; k < LAB_SNAPSHOT_CLONES; k++) {
		if (!ret)
			ret = quit(s, &t[k], "a clone", NULL);
		end(s, &t[k]);
	}
	if (!ret)
		set(s, "clone_pss_kib", (double)pss / LAB_SNAPSHOT_CLONES);
	return ret;
}

static double file_kib(const char *path, bool on_disk)
{
	struct stat st;
	if (stat(path, &st))
		return NAN;
	return on_disk ? (double)st.st_blocks / 2 : (double)st.st_size / 1024;
}

/* ---- msivm: the API's snapshot, --restore ---- */

static int msivm_save(struct snap *s)
{
	json_t *b = json_pack("{s:s,s:s,s:b}", "state", s->f[F_STATE], "mem", s->f[F_MEM], "resume", 1);
	char *body = b ? json_dumps(b, JSON_COMPACT) : NULL, *reply = NULL;
	json_decref(b);
	uint64_t t = lab_now_ns();
	int ret = body ? api_request(s->f[F_API], "PUT", "/vm/snapshot", body, 60, &reply) : -ENOMEM;
	uint64_t took = lab_now_ns() - t;
	free(body);
	if (!ret && strncmp(reply, "HTTP/1.1 2", 10))
		ret = fail(s, "the snapshot request failed: %.160s", reply);
	else if (ret)
		ret = fail(s, "the snapshot request failed: %s", strerror(-ret));
	free(reply);
	if (!ret)
		set(s, "save_ms", (double)took / 1e6);
	return ret;
}

static int msivm_steps(struct snap *s, struct lab_tty *t)
{
	struct argv *a = calloc(1, sizeof(*a));
	uint64_t ready, first = 0, answer;
	if (!a)
		return fail(s, "out of memory");
	msivm_cold_argv(s, a);
	int ret = start(s, t, a, "msivm");
	if (!ret && !(ready = lab_tty_wait_line(t, ECHO_READY, deadline())))
		ret = fail(s, "the cold-booted guest never printed '" ECHO_READY "'");
	if (!ret) {
		set(s, "cold_ms", (double)ready / 1e6);
		set(s, "cold_pss_kib", (double)lab_pss_kib(t->pid));
		ret = msivm_save(s);
	}
	if (!ret && !(ret = quit(s, t, "the snapshotted msivm", &first)))
		set(s, "cold_entry_ms", (double)(first - t->t0) / 1e6);
	end(s, t);
	if (!ret && !stopped(s)) {
		memset(a, 0, sizeof(*a));
		msivm_restore_argv(s, a);
		ret = start(s, t, a, "the restoring msivm");
		if (!ret && !(answer = lab_tty_first_answer(t, deadline())))
			ret = fail(s, "the restored guest never answered its console");
		if (!ret && !(ret = quit(s, t, "the restored msivm", &first))) {
			set(s, "restore_ms", (double)answer / 1e6);
			set(s, "restore_entry_ms", (double)(first - t->t0) / 1e6);
			int c = lab_metric_index(s->exp, "cold_entry_ms");
			set(s, "restore_x_cold", (double)(first - t->t0) / 1e6 / s->run->v[c]);
		}
	}
	if (!ret && !stopped(s))
		ret = clones(s, a);
	free(a);
	set(s, "state_kib", file_kib(s->f[F_STATE], false));
	set(s, "mem_kib", file_kib(s->f[F_MEM], true));
	return ret;
}

/* ---- QEMU: migrate to a file, -incoming ---- */

static int qemu_save(struct snap *s)
{
	struct lab_qmp q;
	char cmd[4352], status[32] = "", why[160] = "";
	uint64_t t = lab_now_ns(), end = deadline();
	int ret = lab_qmp_open(&q, s->f[F_QMP], end);
	snprintf(cmd, sizeof(cmd), "{\"execute\":\"migrate\",\"arguments\":{\"uri\":\"exec:cat > %s\"}}",
		 s->f[F_STATE]);
	if (!ret)
		ret = lab_qmp_cmd(&q, cmd, NULL, NULL, NULL, 0, why, sizeof(why), end);
	while (!ret && strcmp(status, "completed") && strcmp(status, "failed")) {
		ret = lab_qmp_cmd(&q, "{\"execute\":\"query-migrate\"}", NULL, NULL, status,
				  sizeof(status), why, sizeof(why), end);
		if (!ret && strcmp(status, "completed"))
			usleep(1000);
	}
	uint64_t took = lab_now_ns() - t;
	lab_qmp_close(&q);
	if (ret || strcmp(status, "completed"))
		return fail(s, "QEMU's migrate to a file: %s", ret ? (*why ? why : strerror(-ret)) : status);
	set(s, "save_ms", (double)took / 1e6);
	return 0;
}

/* -incoming defer, then migrate-incoming on QMP: its RESUME event says when the vCPUs ran. */
static int qemu_restore(struct snap *s, struct lab_tty *t, struct argv *a)
{
	char cmd[4352], why[160] = "";
	int64_t resumed = -1;
	unlink(s->f[F_QMP]);
	qemu_argv(s, a, true, "defer");
	int64_t t0_us = realtime_us();
	int ret = start(s, t, a, "the restoring QEMU");
	uint64_t end = deadline(), answer = 0;
	struct lab_qmp q = { .fd = -1 };
	if (!ret && (ret = lab_qmp_open(&q, s->f[F_QMP], end)))
		ret = fail(s, "QEMU's QMP socket: %s", strerror(-ret));
	snprintf(cmd, sizeof(cmd), "{\"execute\":\"migrate-incoming\",\"arguments\":"
		 "{\"uri\":\"exec:cat %s\"}}", s->f[F_STATE]);
	if (!ret && lab_qmp_cmd(&q, cmd, "RESUME", &resumed, NULL, 0, why, sizeof(why), end))
		ret = fail(s, "QEMU's migrate-incoming: %s", *why ? why : "no reply");
	if (!ret && resumed < 0)
		resumed = lab_qmp_event(&q, "RESUME", end);
	lab_qmp_close(&q);
	if (!ret && resumed < 0)
		ret = fail(s, "QEMU sent no RESUME event after its incoming migration");
	if (!ret && !(answer = lab_tty_first_answer(t, deadline())))
		ret = fail(s, "the restored guest never answered its console");
	if (!ret && !(ret = quit(s, t, "the restored QEMU", NULL))) {
		set(s, "restore_ms", (double)answer / 1e6);
		set(s, "restore_entry_ms", (double)(resumed - t0_us) / 1e3);
	}
	return ret;
}

static int qemu_steps(struct snap *s, struct lab_tty *t)
{
	struct argv *a = calloc(1, sizeof(*a));
	char incoming[4352];
	uint64_t ready;
	if (!a)
		return fail(s, "out of memory");
	qemu_argv(s, a, true, NULL);
	int ret = start(s, t, a, "QEMU");
	if (!ret && !(ready = lab_tty_wait_line(t, ECHO_READY, deadline())))
		ret = fail(s, "the cold-booted guest never printed '" ECHO_READY "'");
	if (!ret) {
		set(s, "cold_ms", (double)ready / 1e6);
		set(s, "cold_pss_kib", (double)lab_pss_kib(t->pid));
		ret = qemu_save(s);
	}
	end(s, t); /* a migrated QEMU stays stopped: its console would never answer */
	if (!ret && !stopped(s)) {
		memset(a, 0, sizeof(*a));
		ret = qemu_restore(s, t, a);
	}
	if (!ret && !stopped(s)) {
		memset(a, 0, sizeof(*a));
		snprintf(incoming, sizeof(incoming), "exec:cat %s", s->f[F_STATE]);
		qemu_argv(s, a, false, incoming);
		ret = clones(s, a);
	}
	free(a);
	set(s, "state_kib", file_kib(s->f[F_STATE], false));
	return ret;
}

int lab_snapshot_run(const struct lab_options *o, const struct lab_experiment *exp,
		     enum lab_vmm vmm, unsigned mode, struct lab_run *run, int *signo)
{
	struct snap *s = calloc(1, sizeof(*s));
	memset(run, 0, sizeof(*run));
	for (unsigned i = 0; i < LAB_MAX_METRICS; i++)
		run->v[i] = NAN;
	if (!s) {
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "msivm lab: out of memory");
		return 0;
	}
	*s = (struct snap){ .o = o, .exp = exp, .vmm = vmm, .mode = mode, .run = run };
	static const char *const suffix[F_NFILES] = { ".sock", ".state", ".mem", ".json", ".err", ".qmp" };
	int ret = 0;
	for (unsigned i = 0; i < F_NFILES && !ret; i++)
		if (lab_make_scratch(s->f[i], sizeof(s->f[i]), file_role[i], suffix[i]))
			ret = fail(s, "msivm lab: cannot create a scratch file");
	/* Sockets are made by their servers, and a snapshot's files by msivm: it refuses a path
	 * that exists. */
	unlink(s->f[F_API]);
	unlink(s->f[F_QMP]);
	unlink(s->f[F_STATE]);
	unlink(s->f[F_MEM]);
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigaction(SIGPIPE, &ign, &old); /* a VMM that died must not take the lab with it */
	struct lab_tty t = { 0 };
	t.in = t.out = -1;
	uint64_t t0 = lab_now_ns();
	if (!ret)
		ret = vmm == LAB_MSIVM ? msivm_steps(s, &t) : qemu_steps(s, &t);
	run->secs = (double)(lab_now_ns() - t0) / 1e9;
	run->console = t.log; /* the restored guest's console, or the cold one's if it went no further */
	t.log = NULL;
	end(s, &t);
	sigaction(SIGPIPE, &old, NULL);
	/* A run that failed while a signal came for the lab: the user's Ctrl-C (which the VMMs got
	 * too: QEMU exits 0 on it) ended it, not the VMM. */
	if (run->failed)
		stopped(s);
	run->errout = lab_slurp(s->f[F_ERR]);
	if (run->failed && run->errout && *run->errout) {
		size_t n = strlen(run->error);
		snprintf(run->error + n, sizeof(run->error) - n, "; %.*s",
			 (int)strcspn(run->errout, "\n"), run->errout);
	}
	for (unsigned i = 0; i < F_NFILES; i++)
		if (*s->f[i])
			unlink(s->f[i]);
	int sig = s->signo;
	free(s);
	if (sig) {
		*signo = sig;
		lab_run_free(run);
		return -EINTR;
	}
	if (run->failed)
		for (unsigned i = 0; i < LAB_MAX_METRICS; i++)
			run->v[i] = NAN;
	return 0;
}
