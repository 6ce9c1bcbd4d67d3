/* vCPU: one thread per vCPU running KVM_RUN and dispatching exits to the buses. */
#ifndef MSIVM_VMM_VCPU_H
#define MSIVM_VMM_VCPU_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

struct vm;

struct vcpu {
	struct vm *vm;
	uint32_t id;
	int fd;
	int stats_fd;             /* KVM binary stats, opened before the vCPU runs; -1 if absent */
	struct kvm_run *run;
	pthread_t thread;
	bool started;
	/* Exits that reached msivm, by reason (the vCPU thread writes them;
	 * read after it has been joined). */
	uint64_t exits_io, exits_mmio;
	uint64_t cpu_ns;          /* the thread's CPU time, taken when it ends */
};

/* Creates vCPU `id` of `vm` and maps its kvm_run. Returns 0 or -errno. */
int vcpu_create(struct vcpu *cpu, struct vm *vm, uint32_t id, struct error *err);

/* Starts the vCPU thread. Returns 0 or -errno. */
int vcpu_start(struct vcpu *cpu);

/* Makes a running vCPU leave KVM_RUN soon (immediate_exit plus SIGUSR1). */
void vcpu_kick(struct vcpu *cpu);

/* Waits for a kicked vCPU thread to finish; the vCPU fd stays open. */
void vcpu_join(struct vcpu *cpu);

/* Waits for the thread to finish (after a kick) and releases the vCPU. */
void vcpu_destroy(struct vcpu *cpu);

#endif
