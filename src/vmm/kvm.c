/* KVM device: opening it and checking API version and capabilities. */
#include "vmm/kvm.h"
#include "vmm/kvm_host.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <string.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct cap_need {
	long cap;
	const char *name;
	const char *why;
};

#define CAP(c, why) { c, #c, why }

static const struct cap_need vm_caps[] = {
	CAP(KVM_CAP_USER_MEMORY, "guest RAM"),
	CAP(KVM_CAP_IRQCHIP, "the in-kernel LAPIC/IOAPIC"),
	CAP(KVM_CAP_SET_TSS_ADDR, "x86 real-mode TSS"),
	CAP(KVM_CAP_EXT_CPUID, "CPUID setup"),
	CAP(KVM_CAP_IMMEDIATE_EXIT, "stopping vCPUs without races"),
	CAP(KVM_CAP_IRQFD, "interrupt injection without a VM exit"),
	CAP(KVM_CAP_IOEVENTFD, "queue notifications without a user-space exit"),
	CAP(KVM_CAP_IRQ_ROUTING, "MSI routes"),
	CAP(KVM_CAP_SIGNAL_MSI, "MSI injection"),
};

static const struct cap_need pit_cap = CAP(KVM_CAP_PIT2, "the --pit timer");

int kvm_cap(int fd, long cap)
{
	return ioctl(fd, KVM_CHECK_EXTENSION, cap);
}

int kvm_open(const char *path, struct error *err)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return error_set(err, -e, "%s does not exist: is KVM available "
					 "(kvm module loaded, virtualization enabled)?", path);
		if (e == EACCES || e == EPERM) {
			char who[400];
			kvm_host_access_why(path, who, sizeof(who));
			return error_set(err, -e, "no permission to open %s (%s)", path,
					 who[0] ? who : strerror(e));
		}
		return error_set(err, -e, "cannot open %s: %s", path, strerror(e));
	}
	int version = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (version < 0) {
		close(fd);
		return error_set(err, -ENOTTY, "%s is not a KVM device", path);
	}
	if (version != KVM_API_VERSION) {
		close(fd);
		return error_set(err, -ENOTSUP, "%s speaks KVM API %d, msivm needs %d",
				 path, version, KVM_API_VERSION);
	}
	return fd;
}

static int check(int fd, const struct cap_need *c, struct error *err)
{
	if (kvm_cap(fd, c->cap) <= 0)
		return error_set(err, -ENOTSUP, "KVM lacks %s, which msivm needs for %s",
				 c->name, c->why);
	return 0;
}

int kvm_check_vm_caps(int vm_fd, bool pit, struct error *err)
{
	for (size_t i = 0; i < sizeof(vm_caps) / sizeof(vm_caps[0]); i++) {
		int ret = check(vm_fd, &vm_caps[i], err);
		if (ret)
			return ret;
	}
	return pit ? check(vm_fd, &pit_cap, err) : 0;
}
