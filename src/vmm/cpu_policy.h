/* CPU policy: where msivm's threads run and at what priority, and the dedicated-CPU KVM settings. */
#ifndef MSIVM_VMM_CPU_POLICY_H
#define MSIVM_VMM_CPU_POLICY_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

#define CPU_POLICY_MAX_VCPUS 255
#define CPU_UNPINNED (-1)

struct cpu_policy {
	int vcpu_cpu[CPU_POLICY_MAX_VCPUS]; /* host CPU per vCPU, or CPU_UNPINNED */
	int io_cpu;                         /* host CPU of the event-loop thread, or CPU_UNPINNED
					     * (then placed by cpu_policy_io_cpus) */
	int rt_prio;                        /* SCHED_FIFO priority 1-99, 0: normal scheduling */
	bool dedicated;                     /* disable HLT and PAUSE exits */
	int64_t halt_poll_ns;               /* -1: KVM's default */
};

/* A policy that changes nothing. */
void cpu_policy_init(struct cpu_policy *p);

/* Parses "vcpu0=2,vcpu1=3,io=1" into p. Checks each CPU exists on this host
 * (is in the process's allowed set) and each vCPU index is < ncpus. Returns
 * 0 or -EINVAL with a message naming the bad item. */
int cpu_policy_parse_pins(struct cpu_policy *p, const char *spec, uint32_t ncpus,
			  struct error *err);

/* Checks the combination: --dedicated needs every vCPU pinned to a CPU of its
 * own (not shared with another vCPU or the I/O thread). Returns 0 or -EINVAL. */
int cpu_policy_check(const struct cpu_policy *p, uint32_t ncpus, struct error *err);

/* Enables the VM-wide KVM settings (KVM_CAP_X86_DISABLE_EXITS for HLT and
 * PAUSE, KVM_CAP_HALT_POLL) and refuses --rt up front (-EPERM) when this
 * process may not use SCHED_FIFO at that priority. Must run before any vCPU
 * exists: KVM refuses DISABLE_EXITS afterwards. Returns 0 or -errno with a
 * message. */
int cpu_policy_apply_vm(const struct cpu_policy *p, int vm_fd, struct error *err);

/* Where the I/O thread may run when io= was not given, out of `allowed` (the CPUs the process
 * may use). No vCPU pinned: anywhere (returns 0, *out untouched). vCPUs pinned: on the vCPUs'
 * CPUs, the ones the operator gave this VM (as libvirt keeps emulator threads on the vCPUs'
 * cpuset), which is also where it costs least here (README, "Where the I/O thread runs");
 * returns 1 (0 if none of those CPUs is allowed). With --dedicated or --rt, off the vCPUs' CPUs instead: a vCPU that never exits
 * on HLT, or runs SCHED_FIFO, would keep a woken I/O thread waiting or be preempted by it;
 * returns 1, or -1 if no allowed CPU is left (then it stays unpinned). */
int cpu_policy_io_cpus(const struct cpu_policy *p, const cpu_set_t *allowed, cpu_set_t *out);

/* Applies affinity and real-time priority to the calling thread, which is
 * vCPU `vcpu` (or the I/O thread when vcpu < 0). Returns 0 or -errno with a
 * message (EPERM for SCHED_FIFO says what permission is missing). */
int cpu_policy_apply_thread(const struct cpu_policy *p, int vcpu, struct error *err);

#endif
