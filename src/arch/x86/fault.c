/* Fault reports: vCPU registers and instruction bytes for fatal-exit log lines. */
#include "arch/x86/fault.h"

#include <linux/kvm.h>
#include <stdio.h>
#include <sys/ioctl.h>

#define INSN_BYTES 15

void x86_describe_fault(int vcpu_fd, const struct guest_mem *gm, char *buf, size_t len)
{
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	if (ioctl(vcpu_fd, KVM_GET_REGS, &regs) || ioctl(vcpu_fd, KVM_GET_SREGS, &sregs)) {
		snprintf(buf, len, "an unknown address (registers unreadable)");
		return;
	}
	int n = snprintf(buf, len, "rip 0x%llx (cs.l=%u cpl=%u cr0=0x%llx)",
			 (unsigned long long)regs.rip, sregs.cs.l, sregs.cs.dpl,
			 (unsigned long long)sregs.cr0);
	if (n < 0 || (size_t)n >= len)
		return;
	if (regs.rip == 0xfff0 && sregs.cs.base == 0xffff0000 && !(sregs.cr0 & 1)) {
		/* The power-on state: on AMD, KVM resets a vCPU that shut down
		 * before it exits, so where the guest faulted is gone. */
		snprintf(buf + n, len - (size_t)n, ", the reset state: KVM reset the vCPU "
			 "before reporting (AMD), where the guest faulted is not known");
		return;
	}

	struct kvm_translation tr = { .linear_address = sregs.cs.base + regs.rip };
	const uint8_t *p = NULL;
	if (ioctl(vcpu_fd, KVM_TRANSLATE, &tr) == 0 && tr.valid)
		p = gm_ptr(gm, tr.physical_address, INSN_BYTES);
	if (!p) {
		snprintf(buf + n, len - (size_t)n, " bytes: unreadable");
		return;
	}
	n += snprintf(buf + n, len - (size_t)n, " bytes:");
	for (int i = 0; i < INSN_BYTES && (size_t)n < len; i++)
		n += snprintf(buf + n, len - (size_t)n, " %02x", p[i]);
}
