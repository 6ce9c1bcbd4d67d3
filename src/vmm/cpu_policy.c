/* CPU policy: pin spec parsing, dedicated-mode checks, KVM caps, thread affinity and SCHED_FIFO. */
#include "vmm/cpu_policy.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/log.h"
#include "util/parse.h"

void cpu_policy_init(struct cpu_policy *p)
{
	for (int i = 0; i < CPU_POLICY_MAX_VCPUS; i++)
		p->vcpu_cpu[i] = CPU_UNPINNED;
	p->io_cpu = CPU_UNPINNED;
	p->rt_prio = 0;
	p->dedicated = false;
	p->halt_poll_ns = -1;
}

static int host_cpu(const char *s, int *cpu, struct error *err)
{
	uint64_t v;
	cpu_set_t allowed;
	if (parse_uint(s, 0, CPU_SETSIZE - 1, &v))
		return error_set(err, -EINVAL, "bad host CPU '%s' in --cpu-pin", s);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) || !CPU_ISSET((int)v, &allowed))
		return error_set(err, -EINVAL, "host CPU %s in --cpu-pin is not available here "
				 "(this host has CPUs 0-%d)", s, CPU_COUNT(&allowed) - 1);
	*cpu = (int)v;
	return 0;
}

int cpu_policy_parse_pins(struct cpu_policy *p, const char *spec, uint32_t ncpus,
			  struct error *err)
{
	char buf[1024];
	if (snprintf(buf, sizeof(buf), "%s", spec) >= (int)sizeof(buf))
		return error_set(err, -EINVAL, "--cpu-pin value is too long");
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		if (!eq)
			return error_set(err, -EINVAL, "bad --cpu-pin item '%s': use vcpuN=CPU or io=CPU", t);
		*eq = 0;
		int cpu = CPU_UNPINNED, ret = host_cpu(eq + 1, &cpu, err);
		if (ret)
			return ret;
		uint64_t idx;
		if (!strcmp(t, "io")) {
			p->io_cpu = cpu;
		} else if (!strncmp(t, "vcpu", 4) && !parse_uint(t + 4, 0, CPU_POLICY_MAX_VCPUS - 1, &idx)) {
			if (idx >= ncpus)
				return error_set(err, -EINVAL, "--cpu-pin names vcpu%llu but the VM has %u vCPUs",
						 (unsigned long long)idx, ncpus);
			p->vcpu_cpu[idx] = cpu;
		} else {
			return error_set(err, -EINVAL, "bad --cpu-pin item '%s': use vcpuN=CPU or io=CPU", t);
		}
	}
	return 0;
}

int cpu_policy_check(const struct cpu_policy *p, uint32_t ncpus, struct error *err)
{
	if (!p->dedicated)
		return 0;
	for (uint32_t i = 0; i < ncpus; i++) {
		if (p->vcpu_cpu[i] == CPU_UNPINNED)
			return error_set(err, -EINVAL, "--dedicated needs every vCPU pinned "
					 "(vcpu%u is not; use --cpu-pin vcpu%u=CPU)", i, i);
		if (p->vcpu_cpu[i] == p->io_cpu)
			return error_set(err, -EINVAL, "--dedicated: vcpu%u shares host CPU %d with the "
					 "I/O thread", i, p->io_cpu);
		for (uint32_t j = 0; j < i; j++)
			if (p->vcpu_cpu[j] == p->vcpu_cpu[i])
				return error_set(err, -EINVAL, "--dedicated: vcpu%u and vcpu%u share host "
						 "CPU %d", j, i, p->vcpu_cpu[i]);
	}
	return 0;
}

static int enable_cap(int vm_fd, uint32_t cap, uint64_t arg, const char *name, struct error *err)
{
	struct kvm_enable_cap ec = { .cap = cap, .args = { arg } };
	if (ioctl(vm_fd, KVM_ENABLE_CAP, &ec))
		return error_set(err, -errno, "KVM_ENABLE_CAP %s failed: %s", name, strerror(errno));
	return 0;
}

/* SCHED_FIFO at `prio` is allowed with CAP_SYS_NICE or an RLIMIT_RTPRIO of at least `prio`
 * (sched(7)); asked without changing this thread, so a refusal comes before the VM runs. */
static bool rt_permitted(int prio)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_RTPRIO, &rl) == 0 && rl.rlim_cur >= (rlim_t)prio)
		return true;
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { { 0 } };
	if (syscall(SYS_capget, &hdr, data))
		return true; /* cannot tell: the thread's own attempt will say */
	return data[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32));
}

int cpu_policy_apply_vm(const struct cpu_policy *p, int vm_fd, struct error *err)
{
	int ret;
	if (p->rt_prio > 0 && !rt_permitted(p->rt_prio))
		return error_set(err, -EPERM, "--rt %d: not permitted to use SCHED_FIFO (run as root, "
				 "or grant CAP_SYS_NICE or an RLIMIT_RTPRIO of at least %d)",
				 p->rt_prio, p->rt_prio);
	if (p->dedicated) {
		int have = ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_X86_DISABLE_EXITS);
		uint64_t want = KVM_X86_DISABLE_EXITS_HLT | KVM_X86_DISABLE_EXITS_PAUSE;
		if (have < 0 || ((uint64_t)have & want) != want)
			return error_set(err, -ENOTSUP, "--dedicated: KVM cannot disable HLT and PAUSE "
					 "exits here (KVM_CAP_X86_DISABLE_EXITS = %d)", have);
		if ((ret = enable_cap(vm_fd, KVM_CAP_X86_DISABLE_EXITS, want,
				      "KVM_CAP_X86_DISABLE_EXITS", err)))
			return ret;
	}
	if (p->halt_poll_ns >= 0) {
		if (ioctl(vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_HALT_POLL) <= 0)
			return error_set(err, -ENOTSUP, "--halt-poll: KVM lacks KVM_CAP_HALT_POLL");
		if ((ret = enable_cap(vm_fd, KVM_CAP_HALT_POLL, (uint64_t)p->halt_poll_ns,
				      "KVM_CAP_HALT_POLL", err)))
			return ret;
	}
	return 0;
}

int cpu_policy_io_cpus(const struct cpu_policy *p, const cpu_set_t *allowed, cpu_set_t *out)
{
	cpu_set_t vcpus;
	CPU_ZERO(&vcpus);
	for (int i = 0; i < CPU_POLICY_MAX_VCPUS; i++)
		if (p->vcpu_cpu[i] != CPU_UNPINNED)
			CPU_SET(p->vcpu_cpu[i], &vcpus);
	if (CPU_COUNT(&vcpus) == 0)
		return 0;
	if (!p->dedicated && p->rt_prio == 0) {
		CPU_AND(out, &vcpus, allowed);
		return CPU_COUNT(out) ? 1 : 0;
	}
	CPU_ZERO(out);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, allowed) && !CPU_ISSET(c, &vcpus))
			CPU_SET(c, out);
	return CPU_COUNT(out) ? 1 : -1;
}

/* The affinity of the calling thread: vCPU `vcpu`, or the I/O thread (vcpu < 0). Returns 1
 * with *set filled, or 0 to leave the thread where it is. */
static int thread_cpus(const struct cpu_policy *p, int vcpu, cpu_set_t *set)
{
	int cpu = vcpu < 0 ? p->io_cpu : p->vcpu_cpu[vcpu];
	if (cpu != CPU_UNPINNED) {
		CPU_ZERO(set);
		CPU_SET(cpu, set);
		return 1;
	}
	cpu_set_t allowed;
	if (vcpu >= 0 || sched_getaffinity(0, sizeof(allowed), &allowed))
		return 0;
	int r = cpu_policy_io_cpus(p, &allowed, set);
	if (r < 0)
		log_warn("the I/O thread runs unpinned: every CPU msivm may use runs a %s vCPU; "
			 "give it one with --cpu-pin io=CPU", p->dedicated ? "dedicated" : "SCHED_FIFO");
	return r > 0;
}

int cpu_policy_apply_thread(const struct cpu_policy *p, int vcpu, struct error *err)
{
	const char *who = vcpu < 0 ? "the I/O thread" : "a vCPU thread";
	cpu_set_t set;
	if (thread_cpus(p, vcpu, &set)) {
		int ret = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		if (ret)
			return error_set(err, -ret, "cannot pin %s to its CPUs: %s", who, strerror(ret));
	}
	if (p->rt_prio > 0) {
		struct sched_param sp = { .sched_priority = p->rt_prio };
		int ret = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
		if (ret == EPERM)
			return error_set(err, -EPERM, "--rt %d: not permitted to use SCHED_FIFO (run as root, "
					 "or grant CAP_SYS_NICE or an RLIMIT_RTPRIO of at least %d)",
					 p->rt_prio, p->rt_prio);
		if (ret)
			return error_set(err, -ret, "--rt %d: cannot set SCHED_FIFO for %s: %s", p->rt_prio,
					 who, strerror(ret));
	}
	return 0;
}
