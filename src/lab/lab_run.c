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
	char store[MAX_ARGS][512];
	unsigned n;
};

static void arg(struct argv_buf *a, const char *fmt, const char *s)
{
	if (a->n >= MAX_ARGS)
		return;
	snprintf(a->store[a->n], sizeof(a->store[0]), fmt, s ? s : "");
	a->v[a->n] = a->store[a->n];
	a->v[++a->n] = NULL;
}

static void build_msivm_argv(const struct lab_options *o, const struct lab_experiment *exp,
			     unsigned mode, const char *cmdline, const char *json,
			     struct argv_buf *a)
{
	arg(a, "%s", o->msivm);
	arg(a, "%s", "run");
	arg(a, "%s", "--kernel");
	arg(a, "%s", o->probe);
	arg(a, "%s", "--cmdline");
	arg(a, "%s", cmdline);
	arg(a, "%s", "--stats-json");
	arg(a, "%s", json);
	arg(a, "%s", "-q");
	if (exp->device_opt) {
		arg(a, "%s", exp->device_opt);
		arg(a, "irq=%s", irq_mode_name((enum irq_mode)mode));
	}
	lab_extra_msivm_args(exp, a->store, a->v, &a->n, MAX_ARGS);
}

/* QEMU's virtio-pci offers MSI-X or nothing: msix and msix-shared use its
 * vectors, intx uses vectors=0, msi has no equivalent. */
static int build_qemu_argv(const struct lab_options *o, const struct lab_experiment *exp,
			   unsigned mode, const char *cmdline, struct argv_buf *a)
{
	if (mode == IRQ_MODE_MSI)
		return -ENOTSUP;
	arg(a, "%s", "qemu-system-x86_64");
	const char *fixed[] = { "-M", LAB_QEMU_MACHINE, "-enable-kvm", "-cpu", "host,-arch-capabilities",
				"-m", "256M", "-nodefaults", "-no-user-config", "-nographic",
				"-serial", "stdio", "-no-reboot", "-device",
				"isa-debug-exit,iobase=0xf4,iosize=4", NULL };
	for (unsigned i = 0; fixed[i]; i++)
		arg(a, "%s", fixed[i]);
	arg(a, "%s", "-kernel");
	arg(a, "%s", o->probe);
	arg(a, "%s", "-append");
	arg(a, "%s", cmdline);
	if (exp->qemu_device) {
		char dev[256];
		snprintf(dev, sizeof(dev), exp->qemu_device,
			 mode == IRQ_MODE_INTX ? ",vectors=0" : mode == IRQ_MODE_MSIX_SHARED ? ",vectors=2" : "");
		arg(a, "%s", "-device");
		arg(a, "%s", dev);
	}
	return lab_extra_qemu_args(exp, a->store, a->v, &a->n, MAX_ARGS);
}

/* Reads the child's console until EOF, noting when `ready` first appears. */
static int capture(int fd, pid_t pid, uint64_t t0, char **console, uint64_t *ready_ns)
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
		if (!*ready_ns && strstr(buf, LAB_READY_LINE))
			*ready_ns = now_ns() - t0;
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

int lab_run_once(const struct lab_options *o, const struct lab_experiment *exp,
		 enum lab_vmm vmm, unsigned mode, struct lab_run *run, struct error *err)
{
	char cmdline[256], json[512];
	snprintf(cmdline, sizeof(cmdline), "%s exit=0", exp->guest_args);
	snprintf(json, sizeof(json), "%s/.run-stats.json", o->out_dir);
	unlink(json);
	struct argv_buf a = { .n = 0 };
	if (vmm == LAB_MSIVM)
		build_msivm_argv(o, exp, mode, cmdline, json, &a);
	else if (build_qemu_argv(o, exp, mode, cmdline, &a))
		return error_set(err, -ENOTSUP, "QEMU has no %s mode", irq_mode_name((enum irq_mode)mode));

	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC))
		return error_set(err, -errno, "pipe: %s", strerror(errno));
	uint64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0)
		return error_set(err, -errno, "fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(pipefd[1], 1);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 2);
		execvp(a.v[0], a.v);
		_exit(127);
	}
	close(pipefd[1]);
	uint64_t ready_ns = 0;
	run->console = NULL;
	capture(pipefd[0], pid, t0, &run->console, &ready_ns);
	close(pipefd[0]);
	int wstatus = 0;
	struct rusage ru;
	while (wait4(pid, &wstatus, 0, &ru) < 0 && errno == EINTR)
		;
	uint64_t wall = now_ns() - t0;
	run->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	run->raw_json = vmm == LAB_MSIVM ? slurp(json) : NULL;
	unlink(json);
	if (run->status == 127)
		return error_set(err, -ENOENT, "cannot run %s", a.v[0]);

	double cpu_ns = ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
			((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
	struct lab_raw raw = {
		.vmm = vmm, .wall_ns = (double)wall, .ready_ns = ready_ns ? (double)ready_ns : NAN,
		.cpu_ns = cpu_ns, .tsc_hz = o->tsc_hz, .console = run->console,
		.stats_json = run->raw_json,
		.ok = run->status == (vmm == LAB_QEMU ? 1 : 0),
	};
	lab_compute_metrics(exp, &raw, run->v);
	return 0;
}
