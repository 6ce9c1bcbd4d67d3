/* CPUID: KVM's supported set -> per-vCPU filtered table -> KVM_SET_CPUID2. */
#include "arch/x86/cpuid.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define CPUID_MAX_ENTRIES 1024
#define CPUID1_ECX_HYPERVISOR (1u << 31)
#define CPUID1_EDX_HTT (1u << 28)

static size_t cpuid_bytes(uint32_t nent)
{
	return sizeof(struct kvm_cpuid2) + nent * sizeof(struct kvm_cpuid_entry2);
}

int cpuid_get_supported(int kvm_fd, struct kvm_cpuid2 **out, struct error *err)
{
	for (uint32_t nent = 128; nent <= CPUID_MAX_ENTRIES; nent *= 2) {
		struct kvm_cpuid2 *c = calloc(1, cpuid_bytes(nent));
		if (!c)
			return error_set(err, -ENOMEM, "out of memory for CPUID");
		c->nent = nent;
		if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0) {
			*out = c;
			return 0;
		}
		int e = errno;
		free(c);
		if (e != E2BIG)
			return error_set(err, -e, "KVM_GET_SUPPORTED_CPUID failed: %s", strerror(e));
	}
	return error_set(err, -E2BIG, "KVM reports more than %d CPUID entries", CPUID_MAX_ENTRIES);
}

void cpuid_filter(struct kvm_cpuid2 *c, uint32_t apic_id, uint32_t ncpus)
{
	for (uint32_t i = 0; i < c->nent; i++) {
		struct kvm_cpuid_entry2 *e = &c->entries[i];
		switch (e->function) {
		case 1:
			e->ebx = (e->ebx & 0x0000ffffu) | (apic_id << 24) | ((ncpus & 0xff) << 16);
			e->ecx |= CPUID1_ECX_HYPERVISOR;
			if (ncpus > 1)
				e->edx |= CPUID1_EDX_HTT;
			else
				e->edx &= ~CPUID1_EDX_HTT;
			break;
		case 0xb:
		case 0x1f:
			e->edx = apic_id; /* x2APIC ID, every level */
			break;
		default:
			break;
		}
	}
}

int cpuid_apply(int vcpu_fd, const struct kvm_cpuid2 *supported, uint32_t apic_id,
		uint32_t ncpus, struct error *err)
{
	size_t bytes = cpuid_bytes(supported->nent);
	struct kvm_cpuid2 *c = malloc(bytes);
	if (!c)
		return error_set(err, -ENOMEM, "out of memory for CPUID");
	memcpy(c, supported, bytes);
	cpuid_filter(c, apic_id, ncpus);
	int ret = ioctl(vcpu_fd, KVM_SET_CPUID2, c) ? -errno : 0;
	free(c);
	if (ret)
		return error_set(err, ret, "KVM_SET_CPUID2 failed for vCPU %u: %s", apic_id,
				 strerror(-ret));
	return 0;
}
