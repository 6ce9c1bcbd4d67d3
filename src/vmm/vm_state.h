/* VM state: struct vm and its configuration, what every part of the VM (vCPUs, control, statistics, devices' assembly) shares. */
#ifndef MSIVM_VMM_VM_STATE_H
#define MSIVM_VMM_VM_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus/bus.h"
#include "devices/acpi_pm.h"
#include "devices/debug_exit.h"
#include "devices/device_type.h"
#include "devices/i8042.h"
#include "devices/lab_marker.h"
#include "devices/pvpanic.h"
#include "devices/serial_input.h"
#include "devices/uart8250.h"
#include "irq/gsi_routes.h"
#include "pci/pci_host.h"
#include "util/error.h"
#include "arch/x86/cpuid.h"
#include "vmm/cpu_policy.h"
#include "core/evloop.h"
#include "core/guest_mem.h"
#include "vmm/seccomp.h"

struct vcpu;
struct vm_testdev;

/* Devices on the PCI bus: every slot but the host bridge's (Firecracker's PCI mode takes as
 * many; Kata's Firecracker driver asks for 11: a root disk, 8 placeholder drives, vsock, a NIC). */
#define VM_MAX_DEVICES 31

struct vm_config {
	const char *kvm_path;   /* normally "/dev/kvm" */
	uint64_t mem_size;      /* bytes */
	const char *mem_file;   /* --mem-file: RAM is this file, mapped shared from mem_fd; NULL: anonymous */
	int mem_fd;             /* the open --mem-file (run_vm.c opens it once); only with mem_file */
	uint32_t ncpus;
	bool pit;               /* create the in-kernel PIT */
	bool testdev;           /* --testdev: kvm-unit-tests' devices (vmm/vm_testdev.c) and QEMU's debug-exit status */
	int serial_fd;          /* where COM1 output goes (-1: nowhere) */
	int serial_in_fd;       /* what COM1 receives (-1: nothing), e.g. the terminal */
	bool serial_escape;     /* Ctrl-a x on serial_in_fd stops the VM */
	struct cpu_policy cpu;  /* pinning, priority, dedicated mode, halt polling */
	cpuid_hide_t cpuid_hide; /* CPUID features hidden from the guest */
	enum seccomp_mode seccomp; /* filters of the vCPU, I/O and control threads */
	uint32_t shutdown_timeout_ms; /* SIGINT/SIGTERM: power button, then hard stop after this (0: at once) */
	bool fc_thread_names;   /* vCPU threads named "fc_vcpu N" as Firecracker's (Kata finds them
				 * by that name), not "msivm-vcpuN" */
	/* The operator's stop (SIGINT/SIGTERM, the API's shutdown) as its exit
	 * status + 1, kept by the caller across guest reboots: a reset that wins
	 * the race with the stop (the first reason recorded wins) must not
	 * reboot the guest. NULL: not kept. */
	_Atomic int *operator_stop;
	struct vm_device_spec devices[VM_MAX_DEVICES];
	uint32_t ndevices;
};

/* vm->end_reason of a triple fault (a VM_END_RESET that --dump-on-crash dumps). */
#define VM_REASON_TRIPLE_FAULT "triple fault"

/* Why a VM stopped; the first reason recorded wins. */
enum vm_end {
	VM_RUNNING = 0,
	VM_END_GUEST_EXIT,   /* the guest wrote to the debug-exit port */
	VM_END_SIGNAL,       /* SIGINT/SIGTERM */
	VM_END_POWEROFF,     /* the guest powered off (ACPI S5) */
	VM_END_RESET,        /* the guest reset: ACPI reset register, i8042 pulse, triple fault */
	VM_END_SHUTDOWN,     /* the guest stopped unrecoverably (crash system event, HLT without LAPIC) */
	VM_END_CRASH,        /* the guest could not go on: it panicked (pvpanic), KVM emulation or VM-entry failure */
	VM_END_VMM_ERROR,    /* msivm itself failed: KVM_RUN, a thread's setup, the event loop */
};

struct vm {
	struct vm_config cfg;
	int kvm_fd;
	int vm_fd;
	int run_size;              /* mmap size of struct kvm_run */
	struct guest_mem mem;
	struct bus pio;
	struct bus mmio;
	uint32_t ncpus;
	struct vcpu *vcpus;

	struct evloop loop;        /* runs on the thread that calls vm_run */
	int stop_fd;               /* eventfd: a vCPU asks the loop to stop the VM */
	int signal_fd;             /* SIGINT/SIGTERM (stop), SIGWINCH, SIGUSR2: the control thread */
	int ctl_quit_fd;           /* eventfd: the control thread ends */
	int host_event_fd;         /* eventfd: the control thread has host events for the loop */
	_Atomic unsigned host_events; /* VM_HOST_EV_* waiting for the loop */
	struct evloop_handler stop_handler, host_event_handler;

	/* Pause (API): while `paused`, vCPU threads park outside KVM_RUN (vm_pause). */
	pthread_mutex_t pause_lock;
	pthread_cond_t pause_cond;  /* a vCPU parked, or the VM resumed */
	_Atomic bool paused;
	uint32_t parked;            /* vCPUs parked, under pause_lock */
	bool pause_ready;           /* pause_lock and pause_cond exist */
	/* I/O park (snapshots): the I/O thread quiesces the devices and waits, under pause_lock. */
	int park_fd;                /* eventfd: the I/O thread is asked to park */
	struct evloop_handler park_handler;
	bool io_park_req;           /* asked to park / stay parked */
	bool io_parked;             /* parked in vm_io_park's handler */

	uint64_t io_cpu_ns;        /* CPU time of the event-loop (I/O) thread, at the end */
	uint64_t first_run_ns;     /* CLOCK_MONOTONIC of the first KVM_RUN into the guest, 0 before */
	pthread_t io_thread;       /* the thread running the event loop ("msivm-io") */
	int io_error;              /* -errno if the I/O thread failed */
	uint64_t start_ns;         /* CLOCK_MONOTONIC when vm_create began */
	int64_t tsc_offset;        /* guest TSC - host TSC (vCPU 0), for latency stamps */
	_Atomic int end;           /* enum vm_end */
	int exit_status;           /* valid once end != VM_RUNNING */
	const char *end_reason;    /* static text for the log, or NULL; valid once end != VM_RUNNING */

	bool buses_ready;          /* pio/mmio initialised */
	bool com1_ready;
	struct uart8250 com1;
	struct serial_input serial_in;
	struct debug_exit dbg;
	struct vm_testdev *testdev; /* --testdev's devices, NULL without it */
	struct pvpanic panic;      /* port 0x505: the guest's panic event */
	struct acpi_pm pm;         /* FADT sleep control/status and reset registers */
	struct i8042 kbc;          /* reset pulse only */
	struct lab_marker marker;
	/* Counters at the last workload start (marker 2) and end (marker 3). */
	struct vm_snapshot {
		uint64_t kvm_exits, msivm_io, msivm_mmio, isr_reads;
		uint64_t cpu_ns;           /* CPU time of the vCPU threads and the I/O thread */
		bool taken;
	} work_start, work_end;

	bool pci_ready;
	struct gsi_routes routes;
	struct pci_host pci;
	uint64_t pci_next_bar;     /* BAR allocator inside the PCI window */
	uint64_t pci_next_io;      /* I/O BAR allocator, from PCI_IO_START */
	struct vm_device devs[VM_MAX_DEVICES]; /* in PCI slot order (devices/device_type.h) */
	uint32_t ndevs;
};

#define VM_HOST_EV_WINCH DEVICE_EV_WINCH /* SIGWINCH: the terminal changed size (consoles) */
#define VM_HOST_EV_DISKS DEVICE_EV_DISKS /* SIGUSR2 or the API: disk images may have grown or shrunk */

#endif
