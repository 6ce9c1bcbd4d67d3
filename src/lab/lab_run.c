/* Lab runs: one VMM process per run (msivm or QEMU), console captured with timestamps, figures parsed. */
#include "lab/lab.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lab/lab_metrics.h"
#include "virtio/virtio_pci.h"

#define RUN_TIMEOUT_NS (180ULL * 1000000000ULL)
#define MAX_ARGS 48
#define CONSOLE_MAX (1 << 20)

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

double lab_tsc_hz(void)
{
	uint64_t t0 = now_ns(), c0 = __builtin_ia32_rdtsc();
	struct timespec d = { 0, 20 * 1000 * 1000 };
	nanosleep(&d, NULL);
	uint64_t t1 = now_ns(), c1 = __builtin_ia32_rdtsc();
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
	args_split(a, "qemu-system-x86_64 -M " LAB_QEMU_MACHINE " -enable-kvm -cpu host,-arch-capabilities"
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

bool lab_cell_wanted(const struct lab_options *o, const struct lab_experiment *exp,
		     enum lab_vmm vmm, unsigned mode, const char **why)
{
	*why = NULL;
	if (!(o->modes & (1u << mode)) && exp->fixed_mode < 0)
		return false;
	if (exp->fixed_mode >= 0 && (unsigned)exp->fixed_mode != mode)
		return false;
	if (vmm == LAB_QEMU && !o->vs_qemu)
		return false;
	if (vmm == LAB_QEMU && exp->msivm_only)
		*why = "msivm only (no QEMU equivalent)";
	else if (vmm == LAB_QEMU && mode == IRQ_MODE_MSI)
		*why = "QEMU's virtio-pci has no plain MSI capability";
	else if (o->host_cpus < exp->min_cpus)
		*why = "needs more host CPUs than this machine has";
	return true;
}

/* CPU time (user + system, all threads) the process `pid` has used so far,
 * from /proc (clock ticks); 0 if unreadable. */
static uint64_t proc_cpu_ns(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	unsigned long long ut = 0, st = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return 0;
	return (ut + st) * (1000000000ULL / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* A growing buffer of at most `max` bytes; what does not fit is read and dropped. */
struct sink {
	char *buf;
	size_t len, cap, max;
	bool truncated;
};

static int sink_read(struct sink *k, int fd)
{
	char scratch[4096];
	if (k->len + 4096 + 1 > k->cap && k->cap < k->max) {
		size_t ncap = k->cap * 2 > k->max ? k->max : k->cap * 2;
		char *nb = realloc(k->buf, ncap);
		if (nb) {
			k->buf = nb;
			k->cap = ncap;
		}
	}
	size_t room = k->buf && k->cap > k->len + 1 ? k->cap - k->len - 1 : 0;
	char *dst = room ? k->buf + k->len : scratch;
	ssize_t n = read(fd, dst, room ? (room < 4096 ? room : 4096) : sizeof(scratch));
	if (n < 0 && errno == EINTR)
		return 1;
	if (n <= 0)
		return 0;
	if (room) {
		k->len += (size_t)n;
		k->buf[k->len] = 0;
	} else {
		k->truncated = true;
	}
	return 1;
}

/* Seconds a signalled VMM has to exit before it is killed. */
#define STOP_GRACE_NS (5ULL * 1000000000ULL)

struct child {
	pid_t pid;
	int out, err;               /* read ends of its stdout and stderr, -1 at EOF */
	uint64_t t0, ready_ns, ready_cpu_ns;
	bool timed_out;
	int signo;                  /* the signal the lab received and forwarded */
};

/* Reads the child's stdout (the console, noting when `ready` first appears)
 * and stderr until both end; forwards signals that arrive on sigfd; kills the
 * child after the run timeout or the stop grace. */
static void capture(struct child *ch, int sigfd, struct sink *out, struct sink *err)
{
	uint64_t kill_at = ch->t0 + RUN_TIMEOUT_NS;
	bool killed = false;
	while (ch->out >= 0 || ch->err >= 0) {
		struct pollfd p[3] = {
			{ .fd = ch->out, .events = POLLIN }, { .fd = ch->err, .events = POLLIN },
			{ .fd = sigfd, .events = POLLIN },
		};
		int r = poll(p, 3, 200);
		uint64_t now = now_ns();
		if (!killed && now >= kill_at) {
			ch->timed_out = !ch->signo;
			kill(ch->pid, SIGKILL);
			killed = true;
		}
		if (r <= 0)
			continue;
		if (p[2].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				/* The first signal is passed on; a second one kills. */
				if (!ch->signo) {
					ch->signo = (int)si.ssi_signo;
					kill(ch->pid, (int)si.ssi_signo);
					if (kill_at > now + STOP_GRACE_NS)
						kill_at = now + STOP_GRACE_NS;
				} else if (!killed) {
					kill(ch->pid, SIGKILL);
					killed = true;
				}
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (!sink_read(out, ch->out)) {
				close(ch->out);
				ch->out = -1;
			} else if (!ch->ready_ns && out->len && strstr(out->buf, LAB_READY_LINE)) {
				ch->ready_ns = now_ns() - ch->t0;
				ch->ready_cpu_ns = proc_cpu_ns(ch->pid);
			}
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (!sink_read(err, ch->err)) {
				close(ch->err);
				ch->err = -1;
			}
		}
	}
	/* Ctrl-C on a terminal reaches the VMM too, which may end before the lab
	 * reads its own signal: the run was interrupted all the same. */
	struct signalfd_siginfo si;
	if (!ch->signo && sigfd >= 0 && read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		ch->signo = (int)si.ssi_signo;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *s = malloc(CONSOLE_MAX + 1);
	size_t n = s ? fread(s, 1, CONSOLE_MAX, f) : 0;
	fclose(f);
	if (s)
		s[n] = 0;
	if (s && !n) {
		free(s);
		s = NULL;
	}
	return s;
}

/* The child side of spawn: never returns. */
static void child_exec(const struct argv_buf *a, int out, int err, pid_t parent)
{
	/* No VMM outlives the lab, however the lab ends. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int null = open("/dev/null", O_RDONLY);
	if (null >= 0 && null != 0) {
		dup2(null, 0);
		close(null);
	}
	dup2(out, 1);
	dup2(err, 2);
	execvp(a->v[0], a->v);
	dprintf(2, "msivm lab: cannot run %s: %s\n", a->v[0], strerror(errno));
	_exit(127);
}

/* Runs argv with stdout and stderr captured; fills the run's console, errout and status. */
static int spawn(const struct argv_buf *a, int sigfd, struct lab_run *run, struct child *ch,
		 struct rusage *ru)
{
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC))
		return -errno;
	if (pipe2(pe, O_CLOEXEC)) {
		int e = -errno;
		close(po[0]);
		close(po[1]);
		return e;
	}
	pid_t parent = getpid();
	ch->t0 = now_ns();
	ch->pid = fork();
	if (ch->pid < 0) {
		int e = -errno;
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		return e;
	}
	if (ch->pid == 0)
		child_exec(a, po[1], pe[1], parent);
	close(po[1]);
	close(pe[1]);
	ch->out = po[0];
	ch->err = pe[0];
	struct sink out = { .buf = calloc(1, 65536), .cap = 65536, .max = CONSOLE_MAX };
	struct sink err = { .buf = calloc(1, 4096), .cap = 4096, .max = LAB_STDERR_MAX };
	capture(ch, sigfd, &out, &err);
	int wstatus = 0;
	while (wait4(ch->pid, &wstatus, 0, ru) < 0 && errno == EINTR)
		;
	run->secs = (double)(now_ns() - ch->t0) / 1e9;
	run->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	static const char trunc_note[] = "\n[truncated]\n";
	if (err.truncated && err.len >= sizeof(trunc_note))
		memcpy(err.buf + err.len - (sizeof(trunc_note) - 1), trunc_note, sizeof(trunc_note));
	run->console = out.buf;
	run->errout = err.buf;
	return 0;
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

static void describe_failure(struct lab_run *run, const struct child *ch, int expected)
{
	int n = 0;
	const char *line = first_line(run->errout, &n);
	if (ch->timed_out)
		snprintf(run->error, sizeof(run->error), "timed out after %llu s%s%.*s",
			 RUN_TIMEOUT_NS / 1000000000ULL, line ? "; " : "", n, line ? line : "");
	else if (line)
		snprintf(run->error, sizeof(run->error), "%.*s", n, line);
	else if (run->status > 128)
		snprintf(run->error, sizeof(run->error), "killed by signal %d, no error output",
			 run->status - 128);
	else
		snprintf(run->error, sizeof(run->error),
			 "exit status %d instead of %d, no error output (the guest's console is in report.json)",
			 run->status, expected);
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
	char cmdline[512];
	int expected = vmm == LAB_QEMU ? 1 : 0; /* the probe's exit=0 through each debug-exit */
	memset(run, 0, sizeof(*run));
	snprintf(cmdline, sizeof(cmdline), "%s exit=0", exp->guest_args);
	if (vmm == LAB_MSIVM && truncate(o->stats, 0) && errno != ENOENT) {
		run->failed = true;
		run->status = -1;
		snprintf(run->error, sizeof(run->error), "msivm lab: cannot truncate %.160s: %s", o->stats,
			 strerror(errno));
		return 0;
	}
	struct argv_buf *a = calloc(1, sizeof(*a));
	if (!a) {
		run->failed = true;
		run->status = -1;
		snprintf(run->error, sizeof(run->error), "msivm lab: out of memory");
		return 0;
	}
	if (vmm == LAB_MSIVM)
		build_msivm_argv(o, exp, mode, cmdline, o->stats, a);
	else
		build_qemu_argv(o, exp, mode, cmdline, a);
	struct child ch = { .pid = -1 };
	struct rusage ru = { 0 };
	int ret = spawn(a, o->sigfd, run, &ch, &ru);
	free(a);
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
	run->raw_json = vmm == LAB_MSIVM ? slurp(o->stats) : NULL;
	run->failed = ch.timed_out || run->status != expected;
	if (run->failed)
		describe_failure(run, &ch, expected);
	double cpu_ns = ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
			((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
	struct lab_raw raw = {
		.vmm = vmm, .wall_ns = run->secs * 1e9,
		.ready_ns = ch.ready_ns ? (double)ch.ready_ns : NAN,
		.cpu_ns = cpu_ns,
		.cpu_after_ready_ns = ch.ready_ns && cpu_ns > (double)ch.ready_cpu_ns
					      ? cpu_ns - (double)ch.ready_cpu_ns : NAN,
		.tsc_hz = o->tsc_hz, .console = run->console,
		.stats_json = run->raw_json,
		.ok = !run->failed,
	};
	lab_compute_metrics(exp, &raw, run->v);
	return 0;
}
