/* TSC: guest/host TSC offset from KVM, or estimated through IA32_TSC. */
#include "arch/x86/tsc.h"

#include <linux/kvm.h>
#include <sys/ioctl.h>

#define MSR_IA32_TSC 0x10

int64_t x86_tsc_offset(int vcpu_fd)
{
	uint64_t off = 0;
	struct kvm_device_attr a = { .group = KVM_VCPU_TSC_CTRL, .attr = KVM_VCPU_TSC_OFFSET,
				     .addr = (uint64_t)(uintptr_t)&off };
	if (ioctl(vcpu_fd, KVM_HAS_DEVICE_ATTR, &a) == 0 && ioctl(vcpu_fd, KVM_GET_DEVICE_ATTR, &a) == 0)
		return (int64_t)off;
	struct {
		struct kvm_msrs m;
		struct kvm_msr_entry e;
	} msrs = { .m = { .nmsrs = 1 }, .e = { .index = MSR_IA32_TSC } };
	uint64_t h0 = __builtin_ia32_rdtsc();
	if (ioctl(vcpu_fd, KVM_GET_MSRS, &msrs) != 1)
		return 0;
	uint64_t h1 = __builtin_ia32_rdtsc();
	return (int64_t)(msrs.e.data - (h0 + (h1 - h0) / 2));
}
