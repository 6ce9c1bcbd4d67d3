/* CPUID: KVM's supported set -> per-vCPU filtered table (APIC IDs, hidden features) -> KVM_SET_CPUID2. */
#include "arch/x86/cpuid.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>

#define CPUID_MAX_ENTRIES 1024
#define CPUID1_ECX_HYPERVISOR (1u << 31)
#define CPUID1_ECX_TSC_DEADLINE (1u << 24)
#define CPUID1_EDX_HTT (1u << 28)

static size_t cpuid_bytes(uint32_t nent)
{
	return sizeof(struct kvm_cpuid2) + nent * sizeof(struct kvm_cpuid_entry2);
}

void cpuid_add_tsc_deadline(struct kvm_cpuid2 *c, bool have)
{
	for (uint32_t i = 0; have && i < c->nent; i++)
		if (c->entries[i].function == 1)
			c->entries[i].ecx |= CPUID1_ECX_TSC_DEADLINE;
}

int cpuid_get_supported(int kvm_fd, struct kvm_cpuid2 **out, struct error *err)
{
	for (uint32_t nent = 128; nent <= CPUID_MAX_ENTRIES; nent *= 2) {
		struct kvm_cpuid2 *c = calloc(1, cpuid_bytes(nent));
		if (!c)
			return error_set(err, -ENOMEM, "out of memory for CPUID");
		c->nent = nent;
		if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0) {
			cpuid_add_tsc_deadline(c, ioctl(kvm_fd, KVM_CHECK_EXTENSION,
							KVM_CAP_TSC_DEADLINE_TIMER) > 0);
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

enum cpuid_reg { EAX, EBX, ECX, EDX };

struct cpuid_bit {
	uint32_t leaf;   /* subleaf 0 */
	uint8_t reg;     /* enum cpuid_reg */
	uint8_t bit;
};

#define HIDE_MAX_BITS 7

/* A hideable feature: the bits it clears and, for xsave, a leaf emptied. */
struct cpuid_feature {
	const char *name;
	uint8_t nbits;
	struct cpuid_bit bits[HIDE_MAX_BITS];
	uint32_t empty_leaf; /* 0: none */
};

#define B(l, r, b) { (l), (r), (b) }
static const struct cpuid_feature features[] = {
	{ "cmpxchg16b", 1, { B(1, ECX, 13) }, 0 },
	{ "pcid", 1, { B(1, ECX, 17) }, 0 },
	{ "x2apic", 1, { B(1, ECX, 21) }, 0 },
	{ "movbe", 1, { B(1, ECX, 22) }, 0 },
	{ "tsc-deadline", 1, { B(1, ECX, 24) }, 0 },
	/* XSAVE plus what cannot work without XSAVE-managed state. */
	{ "xsave", 7, { B(1, ECX, 26), B(1, ECX, 27), B(1, ECX, 28), B(1, ECX, 12),
			B(1, ECX, 29), B(7, EBX, 5), B(7, EBX, 16) }, 0xd },
	{ "osxsave", 1, { B(1, ECX, 27) }, 0 },
	{ "avx", 5, { B(1, ECX, 28), B(1, ECX, 12), B(1, ECX, 29), B(7, EBX, 5),
		      B(7, EBX, 16) }, 0 },
	{ "rdrand", 1, { B(1, ECX, 30) }, 0 },
	{ "fsgsbase", 1, { B(7, EBX, 0) }, 0 },
	{ "smep", 1, { B(7, EBX, 7) }, 0 },
	{ "invpcid", 1, { B(7, EBX, 10) }, 0 },
	{ "rdseed", 1, { B(7, EBX, 18) }, 0 },
	{ "smap", 1, { B(7, EBX, 20) }, 0 },
	{ "umip", 1, { B(7, ECX, 2) }, 0 },
	{ "pku", 2, { B(7, ECX, 3), B(7, ECX, 4) }, 0 },
	{ "la57", 1, { B(7, ECX, 16) }, 0 },
};
#undef B
#define NFEATURES (sizeof(features) / sizeof(features[0]))
_Static_assert(NFEATURES <= 64, "one bit per feature in cpuid_hide_t");

const char *cpuid_feature_name(unsigned i)
{
	return i < NFEATURES ? features[i].name : NULL;
}

int cpuid_hide_parse(const char *list, cpuid_hide_t *hide, struct error *err)
{
	cpuid_hide_t mask = 0;
	const char *p = list ? list : "";
	while (*p) {
		size_t n = strcspn(p, ",");
		bool found = n == 0;
		for (unsigned i = 0; i < NFEATURES && !found; i++) {
			if (strlen(features[i].name) == n && !strncasecmp(features[i].name, p, n)) {
				mask |= 1ULL << i;
				found = true;
			}
		}
		if (!found) {
			char known[200];
			size_t k = 0;
			known[0] = 0;
			for (unsigned i = 0; i < NFEATURES && k < sizeof(known); i++)
				k += (size_t)snprintf(known + k, sizeof(known) - k, "%s%s",
						      i ? ", " : "", features[i].name);
			return error_set(err, -EINVAL, "unknown CPUID feature '%.*s' (known: %s)",
					 (int)(n > 40 ? 40 : n), p, known);
		}
		p += n;
		if (*p == ',')
			p++;
	}
	*hide = mask;
	return 0;
}

static uint32_t *entry_reg(struct kvm_cpuid_entry2 *e, uint8_t reg)
{
	switch (reg) {
	case EAX: return &e->eax;
	case EBX: return &e->ebx;
	case ECX: return &e->ecx;
	default:  return &e->edx;
	}
}

static void hide_features(struct kvm_cpuid_entry2 *e, cpuid_hide_t hide)
{
	for (unsigned i = 0; i < NFEATURES; i++) {
		if (!(hide & (1ULL << i)))
			continue;
		const struct cpuid_feature *f = &features[i];
		if (f->empty_leaf && e->function == f->empty_leaf) {
			e->eax = e->ebx = e->ecx = e->edx = 0;
			continue;
		}
		for (unsigned b = 0; b < f->nbits; b++)
			if (e->function == f->bits[b].leaf && e->index == 0)
				*entry_reg(e, f->bits[b].reg) &= ~(1u << f->bits[b].bit);
	}
}

void cpuid_filter(struct kvm_cpuid2 *c, uint32_t apic_id, uint32_t ncpus, cpuid_hide_t hide)
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
		if (hide)
			hide_features(e, hide);
	}
}

void cpuid_add_timing_leaf(struct kvm_cpuid2 *c, uint32_t tsc_khz)
{
	struct kvm_cpuid_entry2 *base = NULL;
	for (uint32_t i = 0; i < c->nent; i++) {
		if (c->entries[i].function == CPUID_TIMING_LEAF)
			return; /* KVM already describes it */
		if (c->entries[i].function == 0x40000000)
			base = &c->entries[i];
	}
	if (!base || tsc_khz == 0)
		return;
	if (base->eax < CPUID_TIMING_LEAF)
		base->eax = CPUID_TIMING_LEAF;
	c->entries[c->nent++] = (struct kvm_cpuid_entry2){
		.function = CPUID_TIMING_LEAF, .eax = tsc_khz, .ebx = CPUID_APIC_BUS_KHZ,
	};
}

int cpuid_apply_hide(int vcpu_fd, const struct kvm_cpuid2 *supported, uint32_t apic_id,
		     uint32_t ncpus, cpuid_hide_t hide, struct error *err)
{
	size_t bytes = cpuid_bytes(supported->nent);
	struct kvm_cpuid2 *c = malloc(cpuid_bytes(supported->nent + 1)); /* + the timing leaf */
	if (!c)
		return error_set(err, -ENOMEM, "out of memory for CPUID");
	memcpy(c, supported, bytes);
	cpuid_filter(c, apic_id, ncpus, hide);
	int khz = ioctl(vcpu_fd, KVM_GET_TSC_KHZ, 0);
	cpuid_add_timing_leaf(c, khz > 0 ? (uint32_t)khz : 0);
	int ret = ioctl(vcpu_fd, KVM_SET_CPUID2, c) ? -errno : 0;
	free(c);
	if (ret)
		return error_set(err, ret, "KVM_SET_CPUID2 failed for vCPU %u: %s", apic_id,
				 strerror(-ret));
	return 0;
}

int cpuid_apply(int vcpu_fd, const struct kvm_cpuid2 *supported, uint32_t apic_id,
		uint32_t ncpus, struct error *err)
{
	return cpuid_apply_hide(vcpu_fd, supported, apic_id, ncpus, 0, err);
}
