/* Linux lab runs: the VMM command line per configuration, a watcher that takes VMM CPU and KVM exits at the guest's marks, one boot. */
#include "lab/linux_lab.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "lab/lab_spawn.h"

#define MAX_ARGS 64
#define ARG_LEN 4352

struct args {
	char *v[MAX_ARGS + 1];
	char store[MAX_ARGS][ARG_LEN];
	unsigned n;
	bool overflow;             /* an argument did not fit: the run is refused */
};

static void add(struct args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct args *a, const char *fmt, ...)
{
	if (a->n >= MAX_ARGS) {
		a->overflow = true;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(a->store[a->n], ARG_LEN, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= ARG_LEN) {
		a->overflow = true;
		return;
	}
	a->v[a->n] = a->store[a->n];
	a->v[++a->n] = NULL;
}

/* An option and its formatted value, two arguments. */
static void opt(struct args *a, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void opt(struct args *a, const char *name, const char *fmt, ...)
{
	char v[ARG_LEN];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= ARG_LEN)
		a->overflow = true;
	add(a, "%s", name);
	add(a, "%s", v);
}

static void guest_cmdline(const struct ll_options *o, const struct ll_config *cfg, bool work,
			  char *buf, size_t len)
{
	snprintf(buf, len,
		 "console=ttyS0 loglevel=5 panic=-1 rdinit=/lab-init lab.work=%s lab.fio=%u lab.iperf=%u "
		 "lab.host=%s lab.ip=%s lab.port=%u%s%s",
		 work ? "fio,iperf" : "none", o->fio_s, o->iperf_s, o->host_ip, o->guest_ip, o->port,
		 *cfg->guest_extra ? " " : "", cfg->guest_extra);
}

static void msivm_args(const struct ll_options *o, const struct ll_config *cfg, const char *cmdline,
		       struct args *a)
{
	add(a, "%s", o->msivm);
	add(a, "run"); /* warnings kept: they name a reset's cause */
	add(a, "--no-reboot"); /* a guest reset ends the run (status 123), as -no-reboot in QEMU */
	opt(a, "--kernel", "%s", o->kernel);
	opt(a, "--initrd", "%s", o->initrd);
	opt(a, "--cmdline", "%s", cmdline);
	opt(a, "--cpus", "%u", o->cpus);
	opt(a, "--mem", "%uM", o->mem_mib);
	opt(a, "--disk", "path=%s,irq=%s", o->disk, cfg->irq);
	opt(a, "--net", "backend=tap,ifname=%s,irq=%s", o->tap, cfg->irq);
	opt(a, "--stats-json", "%s", o->stats);
	if (o->cpuid_hide)
		opt(a, "--cpuid-hide", "%s", o->cpuid_hide);
}

static void qemu_args(const struct ll_options *o, const struct ll_config *cfg, const char *cmdline,
		      struct args *a)
{
	char cpu[256] = "host";
	if (o->cpuid_hide) { /* "a,b" -> "host,-a,-b" */
		const char *p = o->cpuid_hide;
		size_t k = strlen(cpu);
		while (*p && k < sizeof(cpu) - 2) {
			size_t n = strcspn(p, ",");
			k += (size_t)snprintf(cpu + k, sizeof(cpu) - k, ",-%.*s", (int)n, p);
			p += n + (p[n] == ',');
		}
	}
	add(a, "%s", o->qemu);
	opt(a, "-name", "msivm-lab,debug-threads=on"); /* vCPU threads named "CPU N/KVM" */
	opt(a, "-M", "q35");
	add(a, "-enable-kvm");
	opt(a, "-cpu", "%s", cpu);
	opt(a, "-smp", "%u", o->cpus);
	opt(a, "-m", "%uM", o->mem_mib);
	add(a, "-nodefaults");
	add(a, "-no-user-config");
	opt(a, "-display", "none");
	opt(a, "-serial", "stdio");
	add(a, "-no-reboot");
	opt(a, "-kernel", "%s", o->kernel);
	opt(a, "-initrd", "%s", o->initrd);
	opt(a, "-append", "%s", cmdline);
	opt(a, "-drive", "file=%s,if=none,id=d0,format=raw", o->disk);
	opt(a, "-device", "virtio-blk-pci,drive=d0,num-queues=1,disable-legacy=on%s", cfg->qemu_vectors);
	opt(a, "-netdev", "tap,id=n0,ifname=%s,script=no,downscript=no", o->tap);
	opt(a, "-device", "virtio-net-pci,netdev=n0,disable-legacy=on,romfile=%s", cfg->qemu_vectors);
}

/* --- the watcher: VMM CPU by thread kind and KVM exits at the guest's marks */

struct snap {
	double t_s;
	struct ll_cpu cpu;
	double exits[LL_NEXIT];
};

struct watch {
	struct ll_run *run;
	size_t scanned;            /* console bytes already looked at */
	struct snap begin[LL_NWORK];
	bool begun[LL_NWORK];
	char kvm_dir[300];         /* the VM's KVM debugfs directory, "" if none (yet) */
	bool kvm_looked;
};

/* vCPU threads: msivm's "msivm-vcpuN", QEMU's "CPU N/KVM". */
static bool is_vcpu_thread(const char *comm)
{
	size_t n = strlen(comm);
	return !strncmp(comm, "msivm-vcpu", 10) ||
	       (!strncmp(comm, "CPU ", 4) && n > 4 && !strcmp(comm + n - 4, "/KVM"));
}

static double thread_cpu_s(pid_t pid, const char *tid, char *comm, size_t comm_len)
{
	char path[300], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return NAN;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *l = strchr(buf, '('), *r = strrchr(buf, ')');
	unsigned long long ut, st;
	if (!l || !r || r < l ||
	    sscanf(r + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return NAN;
	snprintf(comm, comm_len, "%.*s", (int)(r - l - 1), l + 1);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static struct ll_cpu process_cpu(pid_t pid)
{
	struct ll_cpu c = { NAN, NAN };
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return c;
	c.vcpu_s = c.other_s = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char comm[64] = "";
		double s = thread_cpu_s(pid, de->d_name, comm, sizeof(comm));
		if (isnan(s))
			continue; /* the thread ended meanwhile */
		if (is_vcpu_thread(comm))
			c.vcpu_s += s;
		else
			c.other_s += s;
	}
	closedir(d);
	return c;
}

/* KVM's per-VM debugfs directory "PID-FD" of the VMM, when debugfs is mounted. */
static void find_kvm_dir(struct watch *w, pid_t pid)
{
	if (w->kvm_looked)
		return;
	w->kvm_looked = true;
	DIR *d = opendir("/sys/kernel/debug/kvm");
	if (!d)
		return;
	char prefix[32];
	int n = snprintf(prefix, sizeof(prefix), "%d-", (int)pid);
	struct dirent *de;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, prefix, (size_t)n)) {
			snprintf(w->kvm_dir, sizeof(w->kvm_dir), "/sys/kernel/debug/kvm/%s", de->d_name);
			break;
		}
	closedir(d);
}

static void read_exits(const struct watch *w, double *exits)
{
	for (unsigned e = 0; e < LL_NEXIT; e++) {
		exits[e] = NAN;
		if (!w->kvm_dir[0])
			continue;
		char path[400];
		snprintf(path, sizeof(path), "%s/%s", w->kvm_dir, ll_exit_name((enum ll_exit)e));
		FILE *f = fopen(path, "re");
		unsigned long long v;
		if (f && fscanf(f, "%llu", &v) == 1)
			exits[e] = (double)v;
		if (f)
			fclose(f);
	}
}

static struct snap take(struct watch *w, pid_t pid, uint64_t t_ns)
{
	struct snap s = { .t_s = (double)t_ns / 1e9, .cpu = process_cpu(pid) };
	find_kvm_dir(w, pid);
	read_exits(w, s.exits);
	return s;
}

static int work_index(const char *name, size_t len)
{
	for (unsigned i = 0; i < LL_NWORK; i++) {
		const char *n = ll_work_name((enum ll_work)i);
		if (strlen(n) == len && !memcmp(n, name, len))
			return (int)i;
	}
	return -1;
}

int ll_mark(const char *line, size_t len, bool *begin)
{
	static const char b[] = "lab: mark begin ", e[] = "lab: mark end ", off[] = "lab: poweroff";
	const char *p;
	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--; /* the serial console ends lines with \r\n */
	if (memmem(line, len, off, sizeof(off) - 1))
		return LL_MARK_POWEROFF;
	bool is_begin = (p = memmem(line, len, b, sizeof(b) - 1)) != NULL;
	if (is_begin)
		p += sizeof(b) - 1;
	else if ((p = memmem(line, len, e, sizeof(e) - 1)))
		p += sizeof(e) - 1;
	else
		return -1;
	*begin = is_begin;
	return work_index(p, len - (size_t)(p - line));
}

static void on_line(struct watch *w, pid_t pid, const char *line, size_t len, uint64_t t_ns)
{
	bool begin = false;
	int k = ll_mark(line, len, &begin);
	if (k == LL_MARK_POWEROFF) {
		w->run->cpu_total = take(w, pid, t_ns).cpu;
	} else if (k >= 0 && begin) {
		w->begin[k] = take(w, pid, t_ns);
		w->begun[k] = true;
	} else if (k >= 0 && w->begun[k]) {
		struct snap s = take(w, pid, t_ns);
		struct ll_work_result *r = &w->run->work[k];
		r->window_s = s.t_s - w->begin[k].t_s;
		r->cpu.vcpu_s = s.cpu.vcpu_s - w->begin[k].cpu.vcpu_s;
		r->cpu.other_s = s.cpu.other_s - w->begin[k].cpu.other_s;
		for (unsigned x = 0; x < LL_NEXIT; x++)
			r->exits[x] = s.exits[x] - w->begin[k].exits[x];
	}
}

/* Looks at each complete console line once. */
static void watch_console(void *ctx, pid_t pid, const char *console, size_t len, uint64_t t_ns)
{
	struct watch *w = ctx;
	while (w->scanned < len) {
		const char *nl = memchr(console + w->scanned, '\n', len - w->scanned);
		if (!nl)
			break;
		size_t n = (size_t)(nl - (console + w->scanned));
		on_line(w, pid, console + w->scanned, n, t_ns);
		w->scanned += n + 1;
	}
}

/* --- one run */

static unsigned run_timeout_s(const struct ll_options *o, bool work)
{
	if (o->timeout_s)
		return o->timeout_s;
	/* a nested boot takes up to a minute; each workload 3x its length plus 20 s */
	return 240 + (work ? 3 * (3 * o->fio_s + 20) + 2 * (3 * o->iperf_s + 20) : 0);
}

static void first_error_line(const char *s, char *out, size_t len)
{
	while (s && *s == '\n')
		s++;
	size_t n = s ? strcspn(s, "\n") : 0;
	snprintf(out, len, "%.*s", (int)(n > 200 ? 200 : n), s ? s : "");
}

int ll_run_once(const struct ll_options *o, const struct ll_config *cfg, enum lab_vmm vmm,
		bool work, struct ll_run *run, int *signo)
{
	memset(run, 0, sizeof(*run));
	run->run_init_s = run->ready_s = NAN;
	run->cpu_total = (struct ll_cpu){ NAN, NAN };
	run->worked = work;
	for (unsigned k = 0; k < LL_NWORK; k++) {
		run->work[k].window_s = NAN;
		run->work[k].cpu = (struct ll_cpu){ NAN, NAN };
		for (unsigned e = 0; e < LL_NEXIT; e++)
			run->work[k].exits[e] = NAN;
	}
	/* Every run starts from an empty (sparse) disk and an empty stats file. */
	if (truncate(o->disk, 0) || truncate(o->disk, (off_t)o->disk_mib << 20) ||
	    (vmm == LAB_MSIVM && truncate(o->stats, 0))) {
		run->failed = true;
		run->status = -1;
		snprintf(run->error, sizeof(run->error), "msivm lab: cannot reset the scratch files: %s",
			 strerror(errno));
		return 0;
	}
	char cmdline[1024];
	guest_cmdline(o, cfg, work, cmdline, sizeof(cmdline));
	struct args *a = calloc(1, sizeof(*a));
	if (!a) {
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "msivm lab: out of memory");
		return 0;
	}
	if (vmm == LAB_MSIVM)
		msivm_args(o, cfg, cmdline, a);
	else
		qemu_args(o, cfg, cmdline, a);
	if (a->overflow) {
		free(a);
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "msivm lab: a path is too long for the command line");
		return 0;
	}
	struct watch w = { .run = run };
	struct lab_child ch = { .timeout_ns = (uint64_t)run_timeout_s(o, work) * 1000000000ULL,
				.watch = watch_console, .ctx = &w };
	struct rusage ru;
	struct lab_run cap = { 0 };
	int ret = lab_spawn(a->v, o->sigfd, &ch, &cap, &ru);
	free(a);
	if (ret) {
		run->failed = true;
		run->status = -1;
		snprintf(run->error, sizeof(run->error), "msivm lab: cannot start %s: %s",
			 vmm == LAB_QEMU ? o->qemu : "msivm", strerror(-ret));
		return 0;
	}
	run->console = cap.console;
	run->errout = cap.errout;
	run->status = cap.status;
	run->wall_s = cap.secs;
	if (ch.signo) {
		*signo = ch.signo;
		return -EINTR;
	}
	if (vmm == LAB_MSIVM)
		run->stats_json = lab_slurp(o->stats);
	ll_parse_console(run->console, cfg, work, run);
	if (ch.timed_out) {
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "timed out after %u s (the guest did not power off)",
			 run_timeout_s(o, work));
	} else if (vmm == LAB_MSIVM && run->status == 123) {
		/* msivm's warning names the cause: "triple fault (guest reset)", "ACPI reset register" */
		const char *why = run->errout ? strstr(run->errout, "warning: ") : NULL;
		char line[180];
		first_error_line(why ? why + 9 : "", line, sizeof(line));
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "the guest reset (msivm --no-reboot, exit 123)%s%s",
			 *line ? ": " : "", line);
	} else if (run->status != 0 && !run->failed) {
		char line[210];
		first_error_line(run->errout, line, sizeof(line));
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "exit status %d%s%s", run->status,
			 *line ? ": " : "", line);
	}
	return 0;
}

void ll_run_free(struct ll_run *run)
{
	free(run->console);
	free(run->errout);
	free(run->stats_json);
	free(run->irq_ready);
	for (unsigned k = 0; k < LL_NWORK; k++)
		free(run->work[k].irqs);
	run->console = run->errout = run->stats_json = NULL;
	run->irq_ready = NULL;
	for (unsigned k = 0; k < LL_NWORK; k++)
		run->work[k].irqs = NULL;
}
