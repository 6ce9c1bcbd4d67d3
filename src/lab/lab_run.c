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
#include <sys/resource.h>
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

/* Reads the child's console until EOF, noting when `ready` first appears. */
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

static int capture(int fd, pid_t pid, uint64_t t0, char **console, uint64_t *ready_ns,
		   uint64_t *ready_cpu_ns)
{
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	*ready_ns = 0;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int r = poll(&p, 1, 1000);
		if (now_ns() - t0 > RUN_TIMEOUT_NS) {
			kill(pid, SIGKILL);
			break;
		}
		if (r <= 0)
			continue;
		if (len + 4096 + 1 > cap && cap < CONSOLE_MAX) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1 < 4096 ? cap - len - 1 : 4096);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = 0;
		if (!*ready_ns && strstr(buf, LAB_READY_LINE)) {
			*ready_ns = now_ns() - t0;
			*ready_cpu_ns = proc_cpu_ns(pid);
		}
	}
	buf[len] = 0;
	*console = buf;
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *s = malloc(CONSOLE_MAX + 1);
	size_t n = s ? fread(s, 1, CONSOLE_MAX, f) : 0;
	fclose(f);
	if (s)
		s[n] = 0;
	return s;
}

/* Runs argv with stdout captured; fills the run's console and status. */
static int spawn(const struct argv_buf *a, struct lab_run *run, uint64_t *wall, uint64_t *ready_ns,
		 uint64_t *ready_cpu_ns,
		 struct rusage *ru, struct error *err)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC))
		return error_set(err, -errno, "pipe: %s", strerror(errno));
	uint64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return error_set(err, -errno, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		dup2(pipefd[1], 1);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 2);
		execvp(a->v[0], a->v);
		_exit(127);
	}
	close(pipefd[1]);
	capture(pipefd[0], pid, t0, &run->console, ready_ns, ready_cpu_ns);
	close(pipefd[0]);
	int wstatus = 0;
	while (wait4(pid, &wstatus, 0, ru) < 0 && errno == EINTR)
		;
	*wall = now_ns() - t0;
	run->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	if (run->status == 127)
		return error_set(err, -ENOENT, "cannot run %s", a->v[0]);
	return 0;
}

int lab_run_once(const struct lab_options *o, const struct lab_experiment *exp,
		 enum lab_vmm vmm, unsigned mode, struct lab_run *run, struct error *err)
{
	char cmdline[512], json[4200];
	snprintf(cmdline, sizeof(cmdline), "%s exit=0", exp->guest_args);
	snprintf(json, sizeof(json), "%s/.run-stats.json", o->out_dir);
	unlink(json);
	struct argv_buf *a = calloc(1, sizeof(*a));
	if (!a)
		return error_set(err, -ENOMEM, "out of memory");
	if (vmm == LAB_MSIVM)
		build_msivm_argv(o, exp, mode, cmdline, json, a);
	else
		build_qemu_argv(o, exp, mode, cmdline, a);
	uint64_t wall = 0, ready_ns = 0, ready_cpu_ns = 0;
	struct rusage ru = { 0 };
	run->console = NULL;
	int ret = spawn(a, run, &wall, &ready_ns, &ready_cpu_ns, &ru, err);
	free(a);
	run->raw_json = vmm == LAB_MSIVM ? slurp(json) : NULL;
	unlink(json);
	if (ret)
		return ret;
	double cpu_ns = ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
			((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
	struct lab_raw raw = {
		.vmm = vmm, .wall_ns = (double)wall, .ready_ns = ready_ns ? (double)ready_ns : NAN,
		.cpu_ns = cpu_ns,
		.cpu_after_ready_ns = ready_ns && cpu_ns > (double)ready_cpu_ns ? cpu_ns - (double)ready_cpu_ns : NAN,
		.tsc_hz = o->tsc_hz, .console = run->console,
		.stats_json = run->raw_json,
		.ok = run->status == (vmm == LAB_QEMU ? 1 : 0),
	};
	lab_compute_metrics(exp, &raw, run->v);
	return 0;
}
