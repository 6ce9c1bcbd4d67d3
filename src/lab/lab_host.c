/* Lab host description for the report: kernel, CPU model and count, the KVM module, API version and mode. */
#include "lab/lab.h"

#include <errno.h>
#include <sched.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

static void cpu_model(char *buf, size_t len)
{
	char line[512];
	snprintf(buf, len, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10))
			continue;
		const char *p = strchr(line, ':');
		if (!p)
			continue;
		p += strspn(p + 1, " \t") + 1;
		snprintf(buf, len, "%.*s", (int)strcspn(p, "\n"), p);
		break;
	}
	fclose(f);
}

/* The KVM modules present: a loaded module (or one built in with parameters)
 * has a directory in /sys/module. */
static void kvm_modules(char *buf, size_t len)
{
	static const char *const mods[] = { "kvm", "kvm_intel", "kvm_amd", "kvm_pvm" };
	size_t k = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < sizeof(mods) / sizeof(mods[0]) && k < len; i++) {
		char path[64];
		struct stat st;
		snprintf(path, sizeof(path), "/sys/module/%s", mods[i]);
		if (!stat(path, &st))
			k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? " " : "", mods[i]);
	}
}

void lab_host_probe(struct lab_host *h, const char *kvm_device)
{
	struct utsname u;
	memset(h, 0, sizeof(*h));
	snprintf(h->kernel, sizeof(h->kernel), "%s", uname(&u) ? "unknown" : u.release);
	cpu_model(h->cpu, sizeof(h->cpu));
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	h->cpus = n > 0 ? (unsigned)n : 1;
	kvm_modules(h->kvm_modules, sizeof(h->kvm_modules));
	struct kvm_host k;
	kvm_host_probe(kvm_device, &k);
	lab_kvm_mode(&k, h->kvm_mode, sizeof(h->kvm_mode), h->kvm_mode_detail, sizeof(h->kvm_mode_detail));
	const char *dev = kvm_device ? kvm_device : "/dev/kvm";
	h->kvm_api = -1;
	int fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(h->kvm_error, sizeof(h->kvm_error), "cannot open %s: %s", dev, strerror(errno));
		return;
	}
	int v = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (v < 0)
		snprintf(h->kvm_error, sizeof(h->kvm_error), "%s is not a KVM device: %s", dev,
			 strerror(errno));
	else
		h->kvm_api = v;
	close(fd);
}

bool lab_rt_possible(char *why, size_t len)
{
	why[0] = 0;
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(why, len, "cannot test SCHED_FIFO: fork: %s", strerror(errno));
		return false;
	}
	if (!pid) { /* the child only asks; its status carries the errno */
		struct sched_param sp = { .sched_priority = 1 };
		_exit(sched_setscheduler(0, SCHED_FIFO, &sp) ? (errno & 0x7f) : 0);
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return true;
	snprintf(why, len, "not possible here: SCHED_FIFO refused (%s)",
		 WIFEXITED(st) ? strerror(WEXITSTATUS(st)) : "the test child died");
	return false;
}
