/* vCPU: KVM_RUN loop; port and MMIO exits go to the buses, fatal exits stop the VM. */
#include "vmm/vcpu.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "arch/x86/fault.h"
#include "util/clock.h"
#include "util/log.h"
#include "vmm/kvm_stats.h"
#include "vmm/seccomp.h"
#include "vmm/vm_state.h"
#include "vmm/vm_stop.h"

int vcpu_create(struct vcpu *cpu, struct vm *vm, uint32_t id, struct error *err)
{
	memset(cpu, 0, sizeof(*cpu));
	cpu->vm = vm;
	cpu->id = id;
	cpu->stats_fd = -1;
	cpu->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, (unsigned long)id);
	if (cpu->fd < 0)
		return error_set(err, -errno, "cannot create vCPU %u: %s", id, strerror(errno));
	cpu->stats_fd = kvm_stats_open(cpu->fd);
	cpu->run = mmap(NULL, (size_t)vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, cpu->fd, 0);
	if (cpu->run == MAP_FAILED) {
		int e = errno;
		if (cpu->stats_fd >= 0)
			close(cpu->stats_fd);
		close(cpu->fd);
		cpu->fd = cpu->stats_fd = -1;
		cpu->run = NULL;
		return error_set(err, -e, "cannot map vCPU %u state: %s", id, strerror(e));
	}
	return 0;
}

static void handle_io(struct vcpu *cpu)
{
	struct kvm_run *run = cpu->run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	for (uint32_t i = 0; i < run->io.count; i++, data += run->io.size) {
		if (run->io.direction == KVM_EXIT_IO_OUT)
			bus_write(&cpu->vm->pio, run->io.port, data, run->io.size);
		else
			bus_read(&cpu->vm->pio, run->io.port, data, run->io.size);
	}
}

static void handle_mmio(struct vcpu *cpu)
{
	struct kvm_run *run = cpu->run;
	if (run->mmio.is_write)
		bus_write(&cpu->vm->mmio, run->mmio.phys_addr, run->mmio.data, run->mmio.len);
	else
		bus_read(&cpu->vm->mmio, run->mmio.phys_addr, run->mmio.data, run->mmio.len);
}

/* Logs an exit that ends the VM with the guest's registers and instruction bytes. */
static void report_fault_level(struct vcpu *cpu, enum log_level level, const char *what)
{
	char where[256];
	x86_describe_fault(cpu->fd, &cpu->vm->mem, where, sizeof(where));
	log_msg(level, "vCPU %u: %s at %s", cpu->id, what, where);
}

static void report_fault(struct vcpu *cpu, const char *what)
{
	report_fault_level(cpu, LOG_ERROR, what);
}

/* A system event KVM raised for the guest (x86: rare; a crash report or a
 * hypervisor-interface reset/off). Returns false: the vCPU stops. */
static bool handle_system_event(struct vcpu *cpu)
{
	struct vm *vm = cpu->vm;
	uint32_t type = cpu->run->system_event.type;
	switch (type) {
	case KVM_SYSTEM_EVENT_SHUTDOWN:
		vm_request_stop_reason(vm, VM_END_POWEROFF, 0, "KVM system event: shutdown");
		break;
	case KVM_SYSTEM_EVENT_RESET:
		vm_request_stop_reason(vm, VM_END_RESET, 0, "KVM system event: reset");
		break;
	default:
		log_err("vCPU %u: guest system event %u (crash)", cpu->id, type);
		vm_request_stop_reason(vm, VM_END_SHUTDOWN, 0, "KVM system event: crash");
		break;
	}
	return false;
}

/* Handles one exit. Returns false when this vCPU should stop. */
static bool handle_exit(struct vcpu *cpu)
{
	struct kvm_run *run = cpu->run;
	struct vm *vm = cpu->vm;
	char what[96];

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		__atomic_store_n(&cpu->exits_io, cpu->exits_io + 1, __ATOMIC_RELAXED); /* read live (API) */
		handle_io(cpu);
		return true;
	case KVM_EXIT_MMIO:
		__atomic_store_n(&cpu->exits_mmio, cpu->exits_mmio + 1, __ATOMIC_RELAXED);
		handle_mmio(cpu);
		return true;
	case KVM_EXIT_INTR:
		return true;
	case KVM_EXIT_HLT:
		/* Only reached without an in-kernel LAPIC; msivm always has one. */
		log_warn("vCPU %u: halted with no in-kernel LAPIC", cpu->id);
		vm_request_stop(vm, VM_END_SHUTDOWN, 0);
		return false;
	case KVM_EXIT_SHUTDOWN:
		/* A triple fault resets a PC (Linux's reboot=t relies on it). On
		 * AMD, KVM has already reset this vCPU, so the registers show the
		 * reset vector. */
		report_fault_level(cpu, LOG_WARN, "triple fault (guest reset)");
		vm_request_stop_reason(vm, VM_END_RESET, 0, VM_REASON_TRIPLE_FAULT);
		return false;
	case KVM_EXIT_SYSTEM_EVENT:
		return handle_system_event(cpu);
	case KVM_EXIT_INTERNAL_ERROR:
		snprintf(what, sizeof(what), "KVM internal error (suberror %u%s)",
			 run->internal.suberror,
			 run->internal.suberror == KVM_INTERNAL_ERROR_EMULATION
				 ? ": instruction emulation failed" : "");
		report_fault(cpu, what);
		vm_request_stop(vm, VM_END_CRASH, 0);
		return false;
	case KVM_EXIT_FAIL_ENTRY:
		snprintf(what, sizeof(what), "VM entry failed (reason 0x%llx)",
			 (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		report_fault(cpu, what);
		vm_request_stop(vm, VM_END_CRASH, 0);
		return false;
	default:
		snprintf(what, sizeof(what), "unexpected exit reason %u", run->exit_reason);
		report_fault(cpu, what);
		vm_request_stop_reason(vm, VM_END_VMM_ERROR, 0, "KVM gave an exit msivm does not handle");
		return false;
	}
}

/* KVM_RUN answers EAGAIN when an application processor waiting for INIT/SIPI
 * wakes up without one: it blocked first, so that comes rarely. Back-to-back
 * EAGAINs are a failure KVM repeats (seen: it cannot create its NX-huge-page
 * recovery thread under RLIMIT_NPROC), which would otherwise spin forever. */
struct eagain_streak {
	uint64_t since_ns; /* CLOCK_MONOTONIC of the streak's first EAGAIN */
	uint32_t count;    /* EAGAINs since then with no exit in between */
};

#define EAGAIN_STUCK_COUNT 10000 /* this many within EAGAIN_STUCK_NS: stuck */
#define EAGAIN_STUCK_NS 1000000000ULL

static bool eagain_is_stuck(struct eagain_streak *s)
{
	uint64_t now = clock_now_ns();
	if (s->count == 0 || now - s->since_ns >= EAGAIN_STUCK_NS) {
		s->since_ns = now;
		s->count = 0;
	}
	return ++s->count >= EAGAIN_STUCK_COUNT;
}


/* Before each KVM_RUN: while the VM is paused (vm_control.c's vm_pause kicked this vCPU out of
 * KVM_RUN), parks the thread until resumed or the VM ends. Returns true when it parked. */
static bool park_while_paused(struct vm *vm, struct vcpu *cpu)
{
	if (!atomic_load(&vm->paused))
		return false;
	/* First the rest of the last exit's instruction: a port or MMIO read's value into its
	 * register, the rest of a string operation. KVM finishes it on the next KVM_RUN, which
	 * with immediate_exit set returns without entering the guest (KVM's API: how state is made
	 * consistent before it is saved). A snapshot or dump of a parked vCPU then never holds a
	 * half-done instruction that a restore would execute again (a second read of a
	 * read-to-clear register, such as the UART's IIR, would find its cause gone). */
	__atomic_store_n(&cpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 64 && ioctl(cpu->fd, KVM_RUN, 0) == 0; i++)
		if (!handle_exit(cpu))
			break;
	pthread_mutex_lock(&vm->pause_lock);
	vm->parked++;
	pthread_cond_broadcast(&vm->pause_cond);
	/* A stop does not signal the condition: look at vm->end every 100 ms. */
	while (atomic_load(&vm->paused) && atomic_load(&vm->end) == VM_RUNNING) {
		struct timespec t = clock_deadline_ms(100);
		pthread_cond_timedwait(&vm->pause_cond, &vm->pause_lock, &t);
	}
	vm->parked--;
	pthread_mutex_unlock(&vm->pause_lock);
	/* The kick that parked it set immediate_exit; a stop checks vm->end first. */
	__atomic_store_n(&cpu->run->immediate_exit, 0, __ATOMIC_SEQ_CST);
	return true;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *cpu = arg;
	struct vm *vm = cpu->vm;
	char name[16];
	snprintf(name, sizeof(name), vm->cfg.fc_thread_names ? "fc_vcpu %u" : "msivm-vcpu%u",
		 cpu->id);
	pthread_setname_np(pthread_self(), name);
	struct error err;
	if (cpu_policy_apply_thread(&vm->cfg.cpu, (int)cpu->id, &err) ||
	    seccomp_install(SECCOMP_VCPU, vm->cfg.seccomp, name, &err)) {
		log_err("vCPU %u: %s", cpu->id, err.msg);
		vm_request_stop_reason(vm, VM_END_VMM_ERROR, 0, "a vCPU thread could not be set up");
		return NULL;
	}

	struct eagain_streak streak = { 0, 0 };
	while (atomic_load(&vm->end) == VM_RUNNING) {
		if (park_while_paused(vm, cpu))
			continue;
		if (!__atomic_load_n(&vm->first_run_ns, __ATOMIC_RELAXED)) {
			uint64_t none = 0; /* the lab's "start to the guest's first instruction" */
			__atomic_compare_exchange_n(&vm->first_run_ns, &none, clock_now_ns(), false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		}
		if (ioctl(cpu->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || (errno == EAGAIN && !eagain_is_stuck(&streak)))
				continue;
			log_err("vCPU %u: KVM_RUN failed: %s%s", cpu->id, strerror(errno),
				errno == EAGAIN ? " (again and again: a host limit such as "
						  "RLIMIT_NPROC may keep KVM from starting its helper thread)" : "");
			vm_request_stop_reason(vm, VM_END_VMM_ERROR, 0, "KVM_RUN failed");
			break;
		}
		streak.count = 0;
		if (!handle_exit(cpu))
			break;
	}
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		cpu->cpu_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return NULL;
}

int vcpu_start(struct vcpu *cpu)
{
	int ret = pthread_create(&cpu->thread, NULL, vcpu_thread, cpu);
	if (ret)
		return -ret;
	cpu->started = true;
	return 0;
}

void vcpu_kick(struct vcpu *cpu)
{
	if (!cpu->started)
		return;
	/* immediate_exit covers the window between the loop's check of vm->end
	 * and KVM_RUN; the signal interrupts a KVM_RUN already in progress. */
	__atomic_store_n(&cpu->run->immediate_exit, 1, __ATOMIC_SEQ_CST);
	pthread_kill(cpu->thread, SIGUSR1);
}

void vcpu_join(struct vcpu *cpu)
{
	if (cpu->started) {
		pthread_join(cpu->thread, NULL);
		cpu->started = false;
	}
}

void vcpu_destroy(struct vcpu *cpu)
{
	vcpu_join(cpu);
	if (cpu->run)
		munmap(cpu->run, (size_t)cpu->vm->run_size);
	if (cpu->stats_fd >= 0)
		close(cpu->stats_fd);
	if (cpu->fd >= 0)
		close(cpu->fd);
	cpu->run = NULL;
	cpu->fd = cpu->stats_fd = -1;
}
