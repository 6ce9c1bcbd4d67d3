/* Which KVM this host offers (hardware, PVM or none): the one mode decision every harness and the lab use. */
#ifndef MSIVM_VMM_KVM_HOST_H
#define MSIVM_VMM_KVM_HOST_H

#include <stdbool.h>
#include <stddef.h>

enum kvm_host_kind {
	KVM_HOST_NONE, /* no usable KVM device: guests run only inside a nested host (QEMU TCG) */
	KVM_HOST_PVM,  /* kvm_pvm: the standard API, guest CPL0 code emulated; no stock kernel */
	KVM_HOST_HW,   /* kvm_intel or kvm_amd on a CPU with VMX/SVM */
};

struct kvm_host {
	enum kvm_host_kind kind;
	int api;           /* KVM_GET_API_VERSION, -1 when the device did not answer */
	bool denied;       /* NONE because this user may not open the device (a nested host would
			    * not help: the operator's permissions are the problem) */
	char module[16];   /* "kvm_intel", "kvm_amd", "kvm_pvm" or "" */
	char why[200];     /* one line: what backs the device, or why there is none */
};

/* Looks at `dev` (NULL: /dev/kvm), the loaded KVM modules and the CPU's VMX/SVM flags and
 * fills *h. The device counts as usable when it opens read-write, answers API version 12 and
 * creates a VM. Never fails: an unusable device is KVM_HOST_NONE with the reason in h->why.
 * MSIVM_KVM_HOST=none in the environment makes any host KVM_HOST_NONE (to try the nested
 * paths where KVM exists; scripts/nested/run.sh does not pass it into the nested host). */
void kvm_host_probe(const char *dev, struct kvm_host *h);

/* Who may open `dev`, for a permission error: "owner root, group kvm, mode 0660; you are uid
 * 1000: join group kvm ..." and what would give this user access. Into buf (always
 * terminated); "" when `dev` cannot be looked at. */
void kvm_host_access_why(const char *dev, char *buf, size_t len);

/* `msivm host`: prints the kind and why (one line) and returns 0; for a device this user may
 * not open, says what backs it and who may open it, and returns 1. */
int kvm_host_report(const char *dev);

/* True when kvm_pvm backs this host's KVM (no vendor module on a CPU with VMX/SVM): a stock
 * Linux kernel does not boot there. Looks at /sys/module and /proc/cpuinfo only. */
bool kvm_host_is_pvm(void);

/* "hardware", "pvm" or "none": the word `msivm host` prints first and the scripts match. */
const char *kvm_host_kind_name(enum kvm_host_kind k);

#endif
