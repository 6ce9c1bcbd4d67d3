/* VM: creation order (KVM, irqchip, RAM, devices, vCPUs), the run loop and stopping. */
#include "vmm/vm.h"
#include "vmm/vm_stats.h"

#include <errno.h>
#include <poll.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/tsc.h"
#include "arch/x86/layout.h"
#include "vmm/pci_devices.h"
#include "irq/irqchip.h"
#include "util/log.h"
#include "vmm/kvm.h"
#include "vmm/kvm_stats.h"
#include "vmm/seccomp.h"
#include "vmm/vcpu.h"
#include "vmm/vm_control.h"
#include "vmm/vm_testdev.h"
#include "util/clock.h"

#define TSS_ADDR 0xfffbd000UL /* three pages at the top of the MMIO hole */

static void kick_handler(int sig) { (void)sig; }

/* Host events the control thread forwards to the event loop. */

/* The signals the control thread reads: SIGINT/SIGTERM stop the VM, SIGWINCH and SIGUSR2 are
 * host events. */
static void host_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGWINCH);
	sigaddset(set, SIGUSR2);
}

int vm_signals_init(void)
{
	sigset_t set;
	host_signals(&set);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -EINVAL;
	/* A console reader that went away must not kill the VM: writes fail
	 * with EPIPE instead and the device logs it once. */
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		return -errno;
	struct sigaction sa = { .sa_handler = kick_handler }; /* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGUSR1, &sa, NULL) ? -errno : 0;
}

static void on_stop_fd(void *opaque, uint32_t events)
{
	struct vm *vm = opaque;
	uint64_t v;
	if (read(vm->stop_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("stop eventfd: %s", strerror(errno));
}


/* SIGINT/SIGTERM: the first presses the guest's power button when the guest
 * listens for it and a grace period is set, and returns the poll timeout
 * (ms) until the hard stop; otherwise (or for a second signal) it stops the
 * VM at once and returns -1. */
static int on_stop_signal(struct vm *vm, unsigned sig, bool pressed)
{
	uint32_t grace = vm->cfg.shutdown_timeout_ms;
	int listening = pressed || !grace ? 0 : vm_power_button(vm);
	if (listening == 1) {
		log_warn("signal %u: pressed the guest's power button; stopping it in %u.%u s "
			 "unless it powers off (a second signal stops it now)",
			 sig, grace / 1000, grace % 1000 / 100);
		vm_operator_stop(vm, 128 + (int)sig, false, NULL); /* a reset now ends it too */
		return (int)grace;
	}
	if (pressed)
		log_info("signal %u again: stopping the VM now", sig);
	else if (grace)
		log_info("signal %u: the guest %s its power button: stopping the VM", sig,
			 listening < 0 ? "cannot be asked whether it listens for" : "does not listen for");
	else
		log_info("received signal %u, stopping the VM", sig);
	vm_operator_stop(vm, 128 + (int)sig, true, NULL);
	return -1;
}

/* The control thread: SIGINT/SIGTERM are served here, apart from the I/O
 * thread, so no amount of guest work delays the operator's signal (the power
 * button and the grace period too: on_stop_signal). SIGWINCH and SIGUSR2
 * become host events for the I/O thread (on_host_event). It ends when
 * ctl_quit_fd is written (vm_run, at the end of the VM). */
static void *control_thread(void *arg)
{
	struct vm *vm = arg;
	pthread_setname_np(pthread_self(), "msivm-ctl");
	struct error err;
	if (seccomp_install(SECCOMP_CONTROL, vm->cfg.seccomp, "msivm-ctl", &err)) {
		log_err("control thread: %s", err.msg);
		vm_request_stop_reason(vm, VM_END_VMM_ERROR, 0, "the control thread could not be set up");
		return NULL;
	}
	struct pollfd fds[2] = { { .fd = vm->signal_fd, .events = POLLIN },
				 { .fd = vm->ctl_quit_fd, .events = POLLIN } };
	uint64_t deadline = 0; /* CLOCK_MONOTONIC ns of the hard stop after a button press */
	unsigned pressed_sig = 0;
	for (;;) {
		int timeout = -1;
		if (deadline) {
			uint64_t now = clock_now_ns();
			timeout = now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
		}
		int n = poll(fds, 2, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_err("control thread: poll: %s", strerror(errno));
			vm_request_stop_reason(vm, VM_END_VMM_ERROR, 0, "the control thread failed");
			return NULL;
		}
		if (n == 0 && deadline) {
			log_warn("the guest did not power off within %u ms of its power button: "
				 "stopping it", vm->cfg.shutdown_timeout_ms);
			vm_operator_stop(vm, 128 + (int)pressed_sig, true, NULL);
			deadline = 0;
			continue;
		}
		if (fds[1].revents)
			return NULL;
		struct signalfd_siginfo si;
		if (!fds[0].revents || read(vm->signal_fd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGWINCH || si.ssi_signo == SIGUSR2) {
			vm_post_host_event(vm, si.ssi_signo == SIGWINCH ? VM_HOST_EV_WINCH
									: VM_HOST_EV_DISKS);
			continue;
		}
		int grace = on_stop_signal(vm, si.ssi_signo, pressed_sig != 0);
		if (grace >= 0) {
			pressed_sig = si.ssi_signo;
			deadline = clock_now_ns() + (uint64_t)grace * 1000000;
		} else {
			deadline = 0;
		}
	}
}

/* Host events on the I/O thread: the devices re-read what changed on the host. */
static void on_host_event(void *opaque, uint32_t events)
{
	struct vm *vm = opaque;
	uint64_t v;
	if (read(vm->host_event_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("host event eventfd: %s", strerror(errno));
	unsigned ev = atomic_exchange(&vm->host_events, 0u);
	for (unsigned bit = VM_HOST_EV_WINCH; bit <= VM_HOST_EV_DISKS; bit <<= 1) {
		if (!(ev & bit))
			continue;
		unsigned changed = 0, concerned = 0;
		for (uint32_t i = 0; i < vm->ndevs; i++) {
			const struct vm_device *d = &vm->devs[i];
			int r = d->type->host_event ? d->type->host_event(d->dev, bit) : -1;
			concerned += r >= 0;
			changed += r == 1;
		}
		if (bit == VM_HOST_EV_DISKS)
			log_info("SIGUSR2: %u of %u disks changed size", changed, concerned);
	}
}

static int setup_loop(struct vm *vm, struct error *err)
{
	int ret = evloop_init(&vm->loop);
	if (ret)
		return error_set(err, ret, "epoll_create1: %s", strerror(-ret));
	vm->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->stop_fd < 0)
		return error_set(err, -errno, "eventfd: %s", strerror(errno));
	sigset_t set;
	host_signals(&set);
	vm->signal_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (vm->signal_fd < 0)
		return error_set(err, -errno, "signalfd: %s", strerror(errno));
	vm->ctl_quit_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->ctl_quit_fd < 0)
		return error_set(err, -errno, "eventfd: %s", strerror(errno));
	vm->stop_handler = (struct evloop_handler){ on_stop_fd, vm };
	if ((ret = evloop_add(&vm->loop, vm->stop_fd, EPOLLIN, &vm->stop_handler)))
		return error_set(err, ret, "epoll_ctl: %s", strerror(-ret));
	vm->host_event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->host_event_fd < 0)
		return error_set(err, -errno, "eventfd: %s", strerror(errno));
	vm->park_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (vm->park_fd < 0)
		return error_set(err, -errno, "eventfd: %s", strerror(errno));
	vm->park_handler = (struct evloop_handler){ vm_io_park_handler, vm };
	if ((ret = evloop_add(&vm->loop, vm->park_fd, EPOLLIN, &vm->park_handler)))
		return error_set(err, ret, "epoll_ctl: %s", strerror(-ret));
	vm->host_event_handler = (struct evloop_handler){ on_host_event, vm };
	if ((ret = evloop_add(&vm->loop, vm->host_event_fd, EPOLLIN, &vm->host_event_handler)))
		return error_set(err, ret, "epoll_ctl: %s", strerror(-ret));
	return 0;
}

static int setup_kvm(struct vm *vm, struct error *err)
{
	vm->kvm_fd = kvm_open(vm->cfg.kvm_path, err);
	if (vm->kvm_fd < 0)
		return vm->kvm_fd;
	vm->run_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (vm->run_size < (int)sizeof(struct kvm_run))
		return error_set(err, -EINVAL, "KVM_GET_VCPU_MMAP_SIZE failed");
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0)
		return error_set(err, -errno, "KVM_CREATE_VM failed: %s", strerror(errno));
	int ret = kvm_check_vm_caps(vm->vm_fd, vm->cfg.pit, err);
	if (ret)
		return ret;
	int max = kvm_cap(vm->vm_fd, KVM_CAP_MAX_VCPUS);
	if (max > 0 && vm->cfg.ncpus > (uint32_t)max)
		return error_set(err, -EINVAL, "%u vCPUs requested; KVM allows %d", vm->cfg.ncpus, max);
	if (ioctl(vm->vm_fd, KVM_SET_TSS_ADDR, TSS_ADDR))
		return error_set(err, -errno, "KVM_SET_TSS_ADDR failed: %s", strerror(errno));
	/* The irqchip goes first: creating it after the memory slots is slower. */
	ret = irqchip_create(vm->vm_fd, err);
	if (ret)
		return ret;
	/* Before any vCPU exists: KVM refuses to disable exits afterwards. */
	if ((ret = cpu_policy_check(&vm->cfg.cpu, vm->cfg.ncpus, err)) ||
	    (ret = cpu_policy_apply_vm(&vm->cfg.cpu, vm->vm_fd, err)))
		return ret;
	if (vm->cfg.pit) {
		struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
		if (ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit))
			return error_set(err, -errno, "KVM_CREATE_PIT2 failed: %s", strerror(errno));
	}
	return 0;
}

static int setup_memory(struct vm *vm, struct error *err)
{
	int ret = guest_mem_map_file(&vm->mem, vm->cfg.mem_file ? vm->cfg.mem_fd : -1,
				     vm->cfg.mem_size, MMIO_HOLE_START, MMIO_HOLE_END);
	if (ret)
		return error_set(err, ret, "cannot map %llu MiB of guest RAM: %s",
				 (unsigned long long)(vm->cfg.mem_size >> 20), strerror(-ret));
	for (uint32_t i = 0; i < vm->mem.nregions; i++) {
		const struct guest_mem_region *r = &vm->mem.regions[i];
		struct kvm_userspace_memory_region slot = {
			.slot = i, .guest_phys_addr = r->gpa, .memory_size = r->size,
			.userspace_addr = (uintptr_t)r->host,
		};
		if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &slot))
			return error_set(err, -errno, "KVM_SET_USER_MEMORY_REGION failed: %s",
					 strerror(errno));
	}
	return 0;
}

static void debug_exit_stop(void *opaque, int status)
{
	vm_request_stop(opaque, VM_END_GUEST_EXIT, status);
}

static void power_request(void *opaque, enum power_request what, const char *why)
{
	struct vm *vm = opaque;
	log_info("guest %s: %s", what == POWER_OFF ? "power off" : "reset", why);
	vm_request_stop_reason(vm, what == POWER_OFF ? VM_END_POWEROFF : VM_END_RESET, 0, why);
}

/* pvpanic: the guest says it panicked; it will do nothing useful any more. */
static void guest_panicked(void *opaque)
{
	vm_request_stop_reason(opaque, VM_END_CRASH, 0, "the guest panicked (pvpanic)");
}

/* Ctrl-a x on the serial input: the operator stops the VM (status as for SIGINT). */
static void serial_quit(void *opaque)
{
	vm_request_stop_reason(opaque, VM_END_SIGNAL, 130, "Ctrl-a x on the serial console");
}

static int setup_devices(struct vm *vm, struct error *err)
{
	int ret;
	if ((ret = bus_init(&vm->pio, "pio")))
		return error_set(err, ret, "cannot set up the port bus");
	if ((ret = bus_init(&vm->mmio, "mmio"))) {
		bus_destroy(&vm->pio);
		return error_set(err, ret, "cannot set up the MMIO bus");
	}
	vm->buses_ready = true;
	struct irq_line com1_irq = { irqchip_set_level, &vm->vm_fd, UART_COM1_IRQ };
	if ((ret = uart8250_init(&vm->com1, vm->cfg.serial_fd, com1_irq)))
		return error_set(err, ret, "cannot set up COM1");
	vm->com1_ready = true;
	if (vm->cfg.serial_in_fd >= 0 &&
	    (ret = serial_input_init(&vm->serial_in, &vm->com1, vm->cfg.serial_in_fd,
				     vm->cfg.serial_escape, &vm->loop, serial_quit, vm, err)))
		return ret;
	vm->dbg = (struct debug_exit){ .request_exit = debug_exit_stop, .opaque = vm,
				      .qemu_status = vm->cfg.testdev };
	vm->panic = (struct pvpanic){ .on_panic = guest_panicked, .opaque = vm };
	struct power_sink sink = { power_request, vm };
	vm->pm.sink = sink;
	vm->kbc.sink = sink;
	vm->marker.origin_ns = vm->start_ns;
	vm->marker.on_mark = vm_stats_mark;
	vm->marker.opaque = vm;
	if ((ret = bus_register(&vm->pio, UART_COM1_BASE, UART_NREGS, &uart8250_ops, &vm->com1,
				"com1")) ||
	    (ret = bus_register(&vm->pio, DEBUG_EXIT_PORT, DEBUG_EXIT_SIZE, &debug_exit_ops,
				&vm->dbg, "debug-exit")) ||
	    (ret = bus_register(&vm->pio, PVPANIC_PORT, PVPANIC_SIZE, &pvpanic_ops, &vm->panic,
				"pvpanic")) ||
	    (ret = bus_register(&vm->pio, LAB_MARKER_PORT, LAB_MARKER_SIZE, &lab_marker_ops,
				&vm->marker, "lab-marker")) ||
	    (ret = bus_register(&vm->pio, ACPI_PM_PORT, ACPI_PM_SIZE, &acpi_pm_ops, &vm->pm,
				"acpi-pm")) ||
	    (ret = bus_register(&vm->pio, I8042_DATA_PORT, 1, &i8042_data_ops, &vm->kbc,
				"i8042-data")) ||
	    (ret = bus_register(&vm->pio, I8042_COMMAND_PORT, 1, &i8042_command_ops, &vm->kbc,
				"i8042-command")))
		return error_set(err, ret, "cannot register legacy devices: %s", strerror(-ret));
	return 0;
}

static int setup_vcpus(struct vm *vm, struct error *err)
{
	struct kvm_cpuid2 *cpuid = NULL;
	int ret = cpuid_get_supported(vm->kvm_fd, &cpuid, err);
	if (ret)
		return ret;
	vm->vcpus = calloc(vm->cfg.ncpus, sizeof(*vm->vcpus));
	if (!vm->vcpus) {
		free(cpuid);
		return error_set(err, -ENOMEM, "out of memory for vCPUs");
	}
	for (uint32_t i = 0; i < vm->cfg.ncpus && !ret; i++) {
		ret = vcpu_create(&vm->vcpus[i], vm, i, err);
		if (!ret) {
			vm->ncpus++;
			ret = cpuid_apply_hide(vm->vcpus[i].fd, cpuid, i, vm->cfg.ncpus,
					       vm->cfg.cpuid_hide, err);
		}
	}
	free(cpuid);
	if (!ret)
		vm->tsc_offset = x86_tsc_offset(vm->vcpus[0].fd);
	return ret;
}

int vm_create(struct vm *vm, const struct vm_config *cfg, struct error *err)
{
	memset(vm, 0, sizeof(*vm));
	vm->cfg = *cfg;
	vm->kvm_fd = vm->vm_fd = vm->stop_fd = vm->signal_fd = vm->ctl_quit_fd = -1;
	vm->host_event_fd = vm->park_fd = -1;
	vm->loop.epfd = -1;
	atomic_init(&vm->end, VM_RUNNING);
	vm->start_ns = clock_now_ns();

	int ret;
	if ((ret = vm_control_init(vm)))
		return error_set(err, ret, "cannot create the pause lock: %s", strerror(-ret));
	if ((ret = setup_loop(vm, err)) || (ret = setup_kvm(vm, err)) ||
	    (ret = setup_memory(vm, err)) || (ret = setup_devices(vm, err)) ||
	    (ret = vm_testdev_create(vm, err)) ||
	    (ret = pci_devices_create(vm, err)) || (ret = vm_testdev_attach_pci(vm, err)) ||
	    (ret = setup_vcpus(vm, err))) {
		vm_destroy(vm);
		return ret;
	}
	return 0;
}

void vm_destroy(struct vm *vm)
{
	if (vm->vcpus) {
		for (uint32_t i = 0; i < vm->ncpus; i++)
			vcpu_kick(&vm->vcpus[i]);
		for (uint32_t i = 0; i < vm->ncpus; i++)
			vcpu_destroy(&vm->vcpus[i]);
		free(vm->vcpus);
		vm->vcpus = NULL;
	}
	pci_devices_destroy(vm);
	vm_testdev_destroy(vm);
	if (vm->com1_ready) {
		serial_input_destroy(&vm->serial_in);
		uart8250_destroy(&vm->com1);
	}
	if (vm->buses_ready) {
		bus_destroy(&vm->pio);
		bus_destroy(&vm->mmio);
	}
	vm->com1_ready = vm->buses_ready = false;
	guest_mem_free(&vm->mem);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	evloop_destroy(&vm->loop);
	if (vm->stop_fd >= 0)
		close(vm->stop_fd);
	if (vm->signal_fd >= 0)
		close(vm->signal_fd);
	if (vm->ctl_quit_fd >= 0)
		close(vm->ctl_quit_fd);
	if (vm->host_event_fd >= 0)
		close(vm->host_event_fd);
	if (vm->park_fd >= 0)
		close(vm->park_fd);
	vm->vm_fd = vm->kvm_fd = vm->stop_fd = vm->signal_fd = vm->ctl_quit_fd = -1;
	vm->host_event_fd = vm->park_fd = -1;
	vm_control_destroy(vm);
}

static void control_stop(struct vm *vm, pthread_t ctl)
{
	uint64_t one = 1;
	if (write(vm->ctl_quit_fd, &one, sizeof(one)) != sizeof(one))
		log_err("cannot stop the control thread: %s", strerror(errno));
	pthread_join(ctl, NULL);
}

/* The I/O thread: the event loop (kicks, backends, timers, interrupts)
 * until the VM ends. Sets vm->io_error on a failure. */
static void *io_thread_main(void *arg)
{
	struct vm *vm = arg;
	pthread_setname_np(pthread_self(), "msivm-io");
	struct error err;
	if (cpu_policy_apply_thread(&vm->cfg.cpu, -1, &err) ||
	    seccomp_install(SECCOMP_IO, vm->cfg.seccomp, "msivm-io", &err)) {
		log_err("I/O thread: %s", err.msg);
		vm->io_error = -EPERM;
		vm_request_stop_reason(vm, VM_END_VMM_ERROR, 0, "the I/O thread could not be set up");
		return NULL;
	}
	while (atomic_load(&vm->end) == VM_RUNNING) {
		int n = evloop_run_once(&vm->loop, -1);
		if (n < 0) {
			log_err("event loop failed: %s", strerror(-n));
			vm->io_error = n;
			vm_request_stop_reason(vm, VM_END_VMM_ERROR, 0, "the event loop failed");
		}
	}
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
		vm->io_cpu_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return NULL;
}

int vm_run(struct vm *vm, struct error *err)
{
	pthread_t ctl;
	int pret = pthread_create(&ctl, NULL, control_thread, vm);
	if (pret) {
		vm_request_stop(vm, VM_END_VMM_ERROR, 0);
		return error_set(err, -pret, "cannot start the control thread: %s", strerror(pret));
	}
	int ret = 0;
	pret = pthread_create(&vm->io_thread, NULL, io_thread_main, vm);
	if (pret) {
		vm_request_stop(vm, VM_END_VMM_ERROR, 0);
		control_stop(vm, ctl);
		return error_set(err, -pret, "cannot start the I/O thread: %s", strerror(pret));
	}
	for (uint32_t i = 0; i < vm->ncpus && !ret; i++) {
		ret = vcpu_start(&vm->vcpus[i]);
		if (ret) {
			error_set(err, ret, "cannot start vCPU %u: %s", i, strerror(-ret));
			vm_request_stop(vm, VM_END_VMM_ERROR, 0);
		}
	}
	pthread_join(vm->io_thread, NULL);
	for (uint32_t i = 0; i < vm->ncpus; i++)
		vcpu_kick(&vm->vcpus[i]);
	for (uint32_t i = 0; i < vm->ncpus; i++)
		vcpu_join(&vm->vcpus[i]);
	control_stop(vm, ctl);
	if (!ret && vm->io_error)
		ret = error_set(err, vm->io_error, "the I/O thread failed (see the log above)");
	return ret;
}
