/* KVM statistics: named counters (VM exits by reason, halts, ...) read from a binary stats fd. */
#ifndef MSIVM_VMM_KVM_STATS_H
#define MSIVM_VMM_KVM_STATS_H

#include <stdint.h>

struct kvm_stat {
	char name[48];
	uint64_t value;
};

#define KVM_STATS_MAX 128

struct kvm_stats {
	uint32_t n;
	struct kvm_stat s[KVM_STATS_MAX];
};

/* Opens the binary stats fd of a vCPU or VM fd (KVM_GET_STATS_FD). Do it
 * before the vCPU runs: vCPU ioctls wait for KVM_RUN to return, reading the
 * stats fd does not. Returns the fd or -errno. */
int kvm_stats_open(int fd);

/* Reads every single-valued counter from a stats fd and adds it into *out,
 * matching by name, so calling it for each vCPU sums them. Never blocks on
 * a running vCPU. Returns 0 or -errno. */
int kvm_stats_accumulate(int stats_fd, struct kvm_stats *out);

/* Value of the counter `name`, 0 if absent. */
uint64_t kvm_stats_get(const struct kvm_stats *st, const char *name);

#endif
