/* Host KVM detection: which module backs /dev/kvm and whether it can run a VM at all. */
#include "vmm/kvm_host.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/user_db.h"

static bool module_loaded(const char *name)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return !stat(path, &st);
}

/* True when /proc/cpuinfo's flags name `flag` ("vmx" or "svm"). */
static bool cpu_flag(const char *flag)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return false;
	size_t n = strlen(flag);
	while (!found && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		for (const char *p = strstr(line, flag); p && !found; p = strstr(p + 1, flag))
			found = (p[-1] == ' ' || p[-1] == '\t') && (p[n] == ' ' || p[n] == '\n');
		break;
	}
	fclose(f);
	return found;
}

/* The module behind the device: a vendor module on a CPU with its extension, else kvm_pvm. */
static void backing_module(struct kvm_host *h)
{
	if (module_loaded("kvm_intel") && cpu_flag("vmx"))
		snprintf(h->module, sizeof(h->module), "kvm_intel");
	else if (module_loaded("kvm_amd") && cpu_flag("svm"))
		snprintf(h->module, sizeof(h->module), "kvm_amd");
	else if (module_loaded("kvm_pvm"))
		snprintf(h->module, sizeof(h->module), "kvm_pvm");
}

static void set_none(struct kvm_host *h, const char *dev, const char *what, int e)
{
	h->kind = KVM_HOST_NONE;
	h->denied = e == EACCES || e == EPERM;
	if (e == ENOENT && strcmp(dev, "/dev/kvm"))
		snprintf(h->why, sizeof(h->why), "no %s", dev);
	else if (e == ENOENT)
		snprintf(h->why, sizeof(h->why), "no %s (%s)", dev,
			 module_loaded("kvm_pvm") ? "kvm_pvm is loaded but did not bind: is this host itself a PVM guest?"
			 : module_loaded("kvm") ? "kvm is loaded without a vendor module"
						: "no kvm module loaded");
	else
		snprintf(h->why, sizeof(h->why), "%s %s: %s", what, dev, strerror(e));
}

void kvm_host_probe(const char *dev, struct kvm_host *h)
{
	memset(h, 0, sizeof(*h));
	h->api = -1;
	dev = dev ? dev : "/dev/kvm";
	backing_module(h);
	const char *force = getenv("MSIVM_KVM_HOST");
	if (force && !strcmp(force, "none")) { /* to try the nested paths on a host with KVM */
		snprintf(h->why, sizeof(h->why), "taken as none (MSIVM_KVM_HOST=none; %s is there)", dev);
		return;
	}
	int fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		set_none(h, dev, "cannot open", errno);
		return;
	}
	h->api = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (h->api != KVM_API_VERSION) {
		int e = h->api < 0 ? errno : 0;
		h->kind = KVM_HOST_NONE;
		snprintf(h->why, sizeof(h->why), "%s answers KVM API %d%s%s (msivm needs %d)", dev, h->api,
			 e ? ": " : "", e ? strerror(e) : "", KVM_API_VERSION);
		close(fd);
		return;
	}
	int vm = ioctl(fd, KVM_CREATE_VM, 0);
	if (vm < 0) {
		set_none(h, dev, "KVM_CREATE_VM failed on", errno);
		close(fd);
		return;
	}
	close(vm);
	close(fd);
	if (!strcmp(h->module, "kvm_pvm")) {
		h->kind = KVM_HOST_PVM;
		snprintf(h->why, sizeof(h->why), "%s is PVM (kvm_pvm, KVM API %d): guest CPL0 code is "
			 "emulated and a stock Linux kernel does not boot", dev, h->api);
	} else {
		h->kind = KVM_HOST_HW;
		snprintf(h->why, sizeof(h->why), "%s is hardware KVM (%s, KVM API %d)", dev,
			 *h->module ? h->module : "a vendor module", h->api);
	}
}

bool kvm_host_is_pvm(void)
{
	struct kvm_host h = { .kind = KVM_HOST_NONE };
	backing_module(&h);
	return !strcmp(h.module, "kvm_pvm");
}

void kvm_host_access_why(const char *dev, char *buf, size_t len)
{
	struct stat st;
	buf[0] = '\0';
	if (stat(dev, &st))
		return;
	char owner[64], group[64];
	user_db_user_name(st.st_uid, owner, sizeof(owner));
	user_db_group_name(st.st_gid, group, sizeof(group));
	if (!owner[0])
		snprintf(owner, sizeof(owner), "uid %u", (unsigned)st.st_uid);
	if (!group[0])
		snprintf(group, sizeof(group), "gid %u", (unsigned)st.st_gid);
	unsigned mode = st.st_mode & 07777;
	bool group_rw = (mode & 060) == 060, other_rw = (mode & 06) == 06;
	int n = snprintf(buf, len, "owner %s, group %s, mode %04o; you are uid %u", owner, group,
			 mode, (unsigned)geteuid());
	if (n < 0 || (size_t)n >= len)
		return;
	if (group_rw && st.st_gid != 0)
		snprintf(buf + n, len - (size_t)n, ": join group %s (then log in again) or run as "
			 "root", group);
	else if (!other_rw)
		snprintf(buf + n, len - (size_t)n, ": only %s%s may open it: run as root, or have it "
			 "given a group of yours (chgrp GROUP %s; chmod 0660 %s) or an ACL "
			 "(setfacl -m u:USER:rw %s)", owner, group_rw ? " and root's group" : "", dev,
			 dev, dev);
}

int kvm_host_report(const char *dev)
{
	struct kvm_host h;
	kvm_host_probe(dev, &h);
	dev = dev ? dev : "/dev/kvm";
	if (!h.denied) {
		printf("%s: %s\n", kvm_host_kind_name(h.kind), h.why);
		return 0;
	}
	char who[400];
	kvm_host_access_why(dev, who, sizeof(who));
	const char *what = !strcmp(h.module, "kvm_pvm") ? "PVM (kvm_pvm)"
			   : h.module[0] ? "hardware KVM" : "a KVM device";
	printf("denied: %s is %s%s%s, but this user cannot open it (%s)\n", dev, what,
	       h.module[0] && strcmp(h.module, "kvm_pvm") ? " by " : "",
	       h.module[0] && strcmp(h.module, "kvm_pvm") ? h.module : "", who[0] ? who : h.why);
	return 1;
}

const char *kvm_host_kind_name(enum kvm_host_kind k)
{
	switch (k) {
	case KVM_HOST_HW: return "hardware";
	case KVM_HOST_PVM: return "pvm";
	default: return "none";
	}
}
