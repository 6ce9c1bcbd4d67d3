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
#include "lab/lab_threads.h"

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

/* lab-init's lab.work= for a run with workloads: fio,iperf[,vsock], or the configuration's own
 * list of fio workloads ("fio-qd1,fio-qd32"). */
static void work_list(const struct ll_config *cfg, enum ll_vsock vsock, char *buf, size_t len)
{
	size_t k = 0;
	buf[0] = 0;
	if (!cfg->works) {
		snprintf(buf, len, "%s", vsock ? "fio,iperf,vsock" : "fio,iperf");
		return;
	}
	for (unsigned w = 0; w < LL_NWORK && k < len; w++)
		if (cfg->works & LL_WORK_BIT(w))
			k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? "," : "",
					      ll_work_name((enum ll_work)w));
}

static void guest_cmdline(const struct ll_options *o, const struct ll_config *cfg, bool work,
			  enum ll_vsock vsock, char *buf, size_t len)
{
	char works[128];
	work_list(cfg, vsock, works, sizeof(works));
	snprintf(buf, len,
		 "console=ttyS0 loglevel=5 panic=-1 rdinit=/lab-init lab.work=%s lab.fio=%u lab.iperf=%u "
		 "lab.host=%s lab.ip=%s lab.port=%u%s%s%s",
		 !work ? "none" : works, o->fio_s, o->iperf_s, o->host_ip, o->guest_ip, o->port,
		 cfg->passthrough ? " lab.disk=/dev/nvme0n1" : "", *cfg->guest_extra ? " " : "",
		 cfg->guest_extra);
}

enum ll_vsock ll_vsock_backend(const struct ll_options *o, const struct ll_config *cfg,
			       enum lab_vmm vmm)
{
	if (vmm == LAB_MSIVM && !cfg->vsock_vhost)
		return LL_VSOCK_UNIX;
	return o->vhost_vsock ? LL_VSOCK_VHOST : LL_VSOCK_NONE;
}

static void msivm_args(const struct ll_options *o, const struct ll_config *cfg, const char *cmdline,
		       enum ll_vsock vsock, struct args *a)
{
	add(a, "%s", o->msivm);
	add(a, "run"); /* warnings kept: they name a reset's cause */
	add(a, "--no-reboot"); /* a guest reset ends the run (status 123), as -no-reboot in QEMU */
	opt(a, "--kernel", "%s", o->kernel);
	opt(a, "--initrd", "%s", o->initrd);
	opt(a, "--cmdline", "%s", cmdline);
	opt(a, "--cpus", "%u", o->cpus);
	opt(a, "--mem", "%uM", o->mem_mib);
	opt(a, "--disk", "path=%s,irq=%s%s", o->disk, cfg->irq, cfg->disk_extra ? cfg->disk_extra : "");
	opt(a, "--net", "backend=%s,ifname=%s,irq=%s", cfg->vhost ? "vhost" : "tap", o->tap, cfg->irq);
	if (vsock == LL_VSOCK_UNIX)
		opt(a, "--vsock", "cid=%u,irq=%s,path=%s", LL_VSOCK_CID, cfg->irq, o->vsock_path);
	else if (vsock == LL_VSOCK_VHOST)
		opt(a, "--vsock", "cid=%u,irq=%s,backend=vhost", LL_VSOCK_CID, cfg->irq);
	if (cfg->passthrough)
		opt(a, "--device", "path=%s,id=nvme,irq=msix%s", o->vfio,
		    cfg->vfio_extra ? cfg->vfio_extra : "");
	if (cfg->dedicated) { /* vCPU i alone on host CPU i+1, I/O on CPU 0, HLT and PAUSE exits off */
		char pin[256];
		size_t k = 0;
		for (unsigned i = 0; i < o->cpus && k < sizeof(pin); i++)
			k += (size_t)snprintf(pin + k, sizeof(pin) - k, "vcpu%u=%u,", i, i + 1);
		opt(a, "--cpu-pin", "%sio=0", pin);
		add(a, "--dedicated");
	}
	opt(a, "--stats-json", "%s", o->stats);
	if (o->cpuid_hide)
		opt(a, "--cpuid-hide", "%s", o->cpuid_hide);
}

static void qemu_args(const struct ll_options *o, const struct ll_config *cfg, const char *cmdline,
		      enum ll_vsock vsock, struct args *a)
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
	opt(a, "-device", "virtio-blk-pci,drive=d0,disable-legacy=on%s", cfg->qemu_vectors);
	opt(a, "-netdev", "tap,id=n0,ifname=%s,script=no,downscript=no%s", o->tap,
	    cfg->vhost ? ",vhost=on" : "");
	opt(a, "-device", "virtio-net-pci,netdev=n0,disable-legacy=on,romfile=%s", cfg->qemu_vectors);
	/* vhost-vsock-pci's default of 3 vectors makes Linux share one among its 3 queues and
	 * config: 4 give each its own, as msivm does */
	if (vsock)
		opt(a, "-device", "vhost-vsock-pci,guest-cid=%u,disable-legacy=on%s", LL_VSOCK_CID,
		    *cfg->qemu_vectors ? cfg->qemu_vectors : ",vectors=4");
	if (cfg->passthrough) { /* host=DDDD:BB:DD.F, the path's last component */
		const char *bdf = strrchr(o->vfio, '/');
		opt(a, "-device", "vfio-pci,host=%s,rombar=0%s", bdf ? bdf + 1 : o->vfio,
		    cfg->qemu_vfio_extra ? cfg->qemu_vfio_extra : "");
	}
}

/* --- the watcher: VMM CPU by thread kind and KVM exits at the guest's marks */

struct snap {
	double t_s;
	struct lab_cpu_snap cpu;
	double exits[LL_NEXIT];
};

struct watch {
	struct ll_run *run;
	pid_t pid;
	uint64_t t_ns;             /* of the console chunk being looked at */
	size_t scanned;            /* console bytes already looked at */
	struct snap begin[LL_NWORK];
	bool begun[LL_NWORK];
	struct snap now;           /* scratch for the end of a window */
	char kvm_dir[300];         /* the VM's KVM debugfs directory, "" if none (yet) */
	bool kvm_looked;
};

/* VMM CPU from a's threads to b's: vCPU threads, and every other thread. */
static struct ll_cpu cpu_between(const struct lab_cpu_snap *a, const struct lab_cpu_snap *b)
{
	struct ll_cpu c = { NAN, NAN };
	if (!a->ok || !b->ok)
		return c;
	struct lab_cpu_window w;
	lab_cpu_window(a, b, &w);
	c.vcpu_s = w.vcpu_ns / 1e9;
	c.other_s = (w.vmm_ns + w.kvm_ns) / 1e9;
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

static void take(struct watch *w, struct snap *s)
{
	s->t_s = (double)w->t_ns / 1e9;
	lab_cpu_snap_take(w->pid, &s->cpu);
	find_kvm_dir(w, w->pid);
	read_exits(w, s->exits);
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

static void on_line(void *ctx, const char *line, size_t len)
{
	struct watch *w = ctx;
	bool begin = false;
	int k = ll_mark(line, len, &begin);
	if (k == LL_MARK_POWEROFF) {
		static const struct lab_cpu_snap none = { .ok = true };
		take(w, &w->now);
		w->run->cpu_total = cpu_between(&none, &w->now.cpu);
	} else if (k >= 0 && begin) {
		take(w, &w->begin[k]);
		w->begun[k] = true;
	} else if (k >= 0 && w->begun[k]) {
		take(w, &w->now);
		const struct snap *s = &w->now, *b = &w->begin[k];
		struct ll_work_result *r = &w->run->work[k];
		r->window_s = s->t_s - b->t_s;
		r->cpu = cpu_between(&b->cpu, &s->cpu);
		for (unsigned x = 0; x < LL_NEXIT; x++)
			r->exits[x] = s->exits[x] - b->exits[x];
	}
}

/* Looks at each complete console line once. */
static void watch_console(void *ctx, pid_t pid, const char *console, size_t len, uint64_t t_ns)
{
	struct watch *w = ctx;
	w->pid = pid;
	w->t_ns = t_ns;
	lab_console_lines(console, len, &w->scanned, on_line, w);
}

/* --- one run */

static unsigned run_timeout_s(const struct ll_options *o, bool work)
{
	if (o->timeout_s)
		return o->timeout_s;
	/* a nested boot takes up to a minute; each fio (5) and iperf (2) workload 3x its length
	 * plus 20 s; the vsock
	 * workloads (2000 round trips, 16 MiB) took 8 s together under nested TCG */
	return 240 + (work ? 5 * (3 * o->fio_s + 20) + 2 * (3 * o->iperf_s + 20) + 120 : 0);
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
	run->vsock = work && !cfg->works ? ll_vsock_backend(o, cfg, vmm) : LL_VSOCK_NONE;
	run->asked = !work ? 0 : cfg->works ? cfg->works : ll_works_default(run->vsock);
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
	guest_cmdline(o, cfg, work, run->vsock, cmdline, sizeof(cmdline));
	struct args *a = calloc(1, sizeof(*a));
	if (!a) {
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "msivm lab: out of memory");
		return 0;
	}
	if (vmm == LAB_MSIVM)
		msivm_args(o, cfg, cmdline, run->vsock, a);
	else
		qemu_args(o, cfg, cmdline, run->vsock, a);
	if (a->overflow) {
		free(a);
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "msivm lab: a path is too long for the command line");
		return 0;
	}
	struct watch *w = calloc(1, sizeof(*w));
	if (!w) {
		free(a);
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "msivm lab: out of memory");
		return 0;
	}
	w->run = run;
	struct ll_vsock_srv *srv = NULL;
	struct error verr = { "" };
	if (run->vsock) {
		unlink(o->vsock_path); /* msivm makes it, and refuses one that exists */
		if (!(srv = ll_vsock_start(run->vsock, o->vsock_path, &verr))) {
			free(a);
			free(w);
			run->failed = true;
			run->status = -1;
			snprintf(run->error, sizeof(run->error), "%s", verr.msg);
			return 0;
		}
	}
	struct lab_child ch = { .timeout_ns = (uint64_t)run_timeout_s(o, work) * 1000000000ULL,
				.watch = watch_console, .ctx = w };
	struct rusage ru;
	struct lab_run cap = { 0 };
	int ret = lab_spawn(a->v, o->sigfd, &ch, &cap, &ru);
	ll_vsock_stop(srv);
	free(a);
	free(w);
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
