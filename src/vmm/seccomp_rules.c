/* Seccomp rules: each thread kind's allow-list (system calls, ioctl requests) as libseccomp rules; compiled to BPF at build time. */
#include "vmm/seccomp_rules.h"
#include "vmm/vm_dump.h"
#include "vmm/vm_snapshot.h"

#include <linux/kvm.h>
#include <linux/fs.h>
#include <linux/if_tun.h>
#include <linux/vfio.h>
#include <linux/vhost.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <termios.h>

/* Calls every msivm thread may make once the guest runs: device back ends
 * (files, io_uring, sockets, eventfds, timers), memory, locks, time, logging. */
static const int runtime_calls[] = {
	SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(readv), SCMP_SYS(writev),
	SCMP_SYS(pread64), SCMP_SYS(pwrite64), SCMP_SYS(preadv), SCMP_SYS(pwritev),
	SCMP_SYS(preadv2), SCMP_SYS(pwritev2), SCMP_SYS(lseek), SCMP_SYS(close),
	SCMP_SYS(fdatasync), SCMP_SYS(fsync), SCMP_SYS(fallocate), SCMP_SYS(fstat),
	SCMP_SYS(newfstatat), SCMP_SYS(io_uring_enter), SCMP_SYS(getrandom),
	SCMP_SYS(sendto), SCMP_SYS(recvfrom), SCMP_SYS(sendmsg), SCMP_SYS(recvmsg),
	SCMP_SYS(epoll_ctl), SCMP_SYS(epoll_wait), SCMP_SYS(epoll_pwait), SCMP_SYS(poll),
	SCMP_SYS(ppoll), SCMP_SYS(timerfd_settime), SCMP_SYS(timerfd_gettime),
	SCMP_SYS(futex), SCMP_SYS(sched_yield), SCMP_SYS(clock_gettime),
	SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep), SCMP_SYS(gettimeofday),
	SCMP_SYS(mmap), SCMP_SYS(munmap), SCMP_SYS(mprotect), SCMP_SYS(mremap),
	SCMP_SYS(madvise), SCMP_SYS(brk), SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn),
	SCMP_SYS(rt_sigtimedwait), SCMP_SYS(sigaltstack), SCMP_SYS(restart_syscall),
	SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(tgkill), SCMP_SYS(rseq),
	SCMP_SYS(exit), SCMP_SYS(exit_group),
	SCMP_SYS(shutdown), /* vsock: the guest's half-close, on the socket it already has */
	SCMP_SYS(seccomp), /* a thread adds its own, narrower filter (never removes one) */
};

/* What the main thread needs on top to build a VM (again, after a guest
 * reboot) and to start threads. */
static const int setup_calls[] = {
	SCMP_SYS(openat), SCMP_SYS(open), SCMP_SYS(access), SCMP_SYS(faccessat),
	SCMP_SYS(faccessat2), SCMP_SYS(statx), SCMP_SYS(fcntl), SCMP_SYS(flock),
	SCMP_SYS(ftruncate), SCMP_SYS(unlink), SCMP_SYS(unlinkat), SCMP_SYS(readlink),
	SCMP_SYS(bind), SCMP_SYS(listen), /* vsock's PATH, made again at each boot */
	SCMP_SYS(connect), SCMP_SYS(setsockopt), SCMP_SYS(getsockopt),
	SCMP_SYS(getsockname), SCMP_SYS(eventfd2), SCMP_SYS(epoll_create1),
	SCMP_SYS(signalfd4), SCMP_SYS(timerfd_create), SCMP_SYS(io_uring_setup),
	SCMP_SYS(io_uring_register), SCMP_SYS(clone3), SCMP_SYS(clone),
	SCMP_SYS(set_robust_list), SCMP_SYS(rt_sigaction), SCMP_SYS(sched_getaffinity),
	SCMP_SYS(sched_setaffinity), SCMP_SYS(sched_setscheduler), SCMP_SYS(sched_getparam),
	SCMP_SYS(sched_getscheduler), SCMP_SYS(prlimit64), SCMP_SYS(getuid), SCMP_SYS(geteuid),
	SCMP_SYS(getgid), SCMP_SYS(getegid), SCMP_SYS(dup), SCMP_SYS(dup3), SCMP_SYS(uname),
	SCMP_SYS(sysinfo), SCMP_SYS(membarrier),
	SCMP_SYS(getdents64), /* --device: its IOMMU group's devices, listed at each boot */
	SCMP_SYS(msync), /* the API thread's snapshot of --mem-file RAM */
	SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2), /* its overwrite */
	SCMP_SYS(accept4), SCMP_SYS(shutdown), /* the API thread (inherits this filter) */
};

/* ioctl requests guest-facing threads make: interrupts and routes (MSI-X
 * table writes and deliveries), notify moves (BAR writes), tap offloads. */
static const unsigned long device_ioctls[] = {
	KVM_IRQFD, KVM_SET_GSI_ROUTING, KVM_SIGNAL_MSI, KVM_IRQ_LINE, KVM_IOEVENTFD,
	TUNSETOFFLOAD, BLKDISCARD, BLKZEROOUT,
	/* backend=vhost: rings handed over at DRIVER_OK (a vCPU's MMIO write), taken back at reset */
	VHOST_SET_FEATURES, VHOST_SET_VRING_NUM, VHOST_SET_VRING_BASE, VHOST_GET_VRING_BASE,
	VHOST_SET_VRING_ADDR, VHOST_SET_VRING_KICK, VHOST_SET_VRING_CALL, VHOST_SET_VRING_ERR,
	VHOST_NET_SET_BACKEND, VHOST_VSOCK_SET_RUNNING,
	TIOCGWINSZ, BLKGETSIZE64, /* host events: a console's terminal size, a disk's new size */
	TUNGETIFF, /* a tap's write failed with EIO: deleted, or only down (net_tap.c) */
};
/* ... and the vCPU thread itself: running, fault reports. */
static const unsigned long vcpu_ioctls[] = {
	KVM_RUN, KVM_GET_REGS, KVM_GET_SREGS, KVM_TRANSLATE,
	/* a passed-through device (vfio/): the guest's config writes switch its interrupts
	 * (MSI-X/MSI/INTx enable) and its BAR moves move the KVM slots of the BAR's pages */
	VFIO_DEVICE_SET_IRQS, KVM_SET_USER_MEMORY_REGION,
};
/* ... and setup (main thread). */
static const unsigned long setup_ioctls[] = {
	KVM_GET_IRQCHIP, /* and the control thread's: is the guest listening for its power button */
	KVM_SET_IRQCHIP, /* a multiboot boot (also a reboot's): the 8259s as a BIOS leaves them */
	KVM_GET_API_VERSION, KVM_CHECK_EXTENSION, KVM_CREATE_VM, KVM_GET_VCPU_MMAP_SIZE,
	KVM_CREATE_VCPU, KVM_CREATE_IRQCHIP, KVM_CREATE_PIT2, KVM_SET_TSS_ADDR,
	KVM_SET_USER_MEMORY_REGION, KVM_ENABLE_CAP, KVM_GET_SUPPORTED_CPUID, KVM_SET_CPUID2,
	KVM_GET_TSC_KHZ, KVM_GET_STATS_FD, KVM_HAS_DEVICE_ATTR, KVM_GET_DEVICE_ATTR,
	KVM_GET_MSRS, KVM_SET_REGS, KVM_SET_SREGS, KVM_GET_REGS, KVM_GET_SREGS, KVM_RUN,
	KVM_TRANSLATE, TUNSETIFF, TUNGETIFF, TUNSETVNETHDRSZ, TUNGETFEATURES,
	VHOST_SET_OWNER, VHOST_GET_FEATURES, VHOST_SET_MEM_TABLE, VHOST_VSOCK_SET_GUEST_CID,
	BLKGETSIZE64, BLKSSZGET, BLKPBSZGET, BLKALIGNOFF, BLKIOMIN, BLKIOOPT, TCGETS, TCSETS,
	TCSETSW, TCSETSF, TIOCGWINSZ, FIONBIO, FIOCLEX, SIOCGIFMTU,
	/* the API thread's snapshot (its own filter narrows this one down) */
	KVM_GET_XSAVE, KVM_GET_XSAVE2, KVM_GET_XCRS, KVM_GET_LAPIC, KVM_GET_VCPU_EVENTS,
	KVM_GET_DEBUGREGS, KVM_GET_MP_STATE, KVM_GET_MSR_INDEX_LIST, KVM_GET_CPUID2, KVM_GET_CLOCK,
	KVM_GET_PIT2,
	/* VFIO (vfio/vfio_host.c): the container, group and device opened at each boot, DMA
	 * mapped and unmapped, interrupts off and a reset at the end (vCPUs: SET_IRQS only) */
	VFIO_GET_API_VERSION, VFIO_CHECK_EXTENSION, VFIO_SET_IOMMU, VFIO_GROUP_GET_STATUS,
	VFIO_GROUP_SET_CONTAINER, VFIO_GROUP_UNSET_CONTAINER, VFIO_GROUP_GET_DEVICE_FD,
	VFIO_DEVICE_GET_INFO, VFIO_DEVICE_GET_REGION_INFO, VFIO_DEVICE_GET_IRQ_INFO,
	VFIO_DEVICE_SET_IRQS, VFIO_DEVICE_RESET, VFIO_IOMMU_MAP_DMA, VFIO_IOMMU_UNMAP_DMA,
};

#define N(a) (sizeof(a) / sizeof((a)[0]))


static int allow_calls(scmp_filter_ctx ctx, const int *calls, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (calls[i] < 0)
			continue; /* not a system call on this architecture */
		int ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, calls[i], 0);
		if (ret)
			return ret;
	}
	return 0;
}

static int allow_ioctls(scmp_filter_ctx ctx, const unsigned long *reqs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		/* The request is an int in the kernel: compare the low 32 bits. */
		int ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
					   SCMP_A1_32(SCMP_CMP_EQ, (uint32_t)reqs[i]));
		if (ret)
			return ret;
	}
	return 0;
}

/* prctl only to name a thread, read its name, or drop privileges (libseccomp
 * sets PR_SET_NO_NEW_PRIVS before loading the next thread's filter). */
static int allow_prctl_names(scmp_filter_ctx ctx)
{
	static const int ops[] = { PR_SET_NAME, PR_GET_NAME, PR_SET_NO_NEW_PRIVS };
	for (size_t i = 0; i < N(ops); i++) {
		int ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
					   SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)ops[i]));
		if (ret)
			return ret;
	}
	return 0;
}

int seccomp_rules_build(scmp_filter_ctx ctx, enum seccomp_kind kind)
{
	int ret = allow_prctl_names(ctx);
	if (kind == SECCOMP_CONTROL) {
		static const int control_calls[] = {
			SCMP_SYS(poll), SCMP_SYS(ppoll), SCMP_SYS(read), SCMP_SYS(write),
			SCMP_SYS(futex), SCMP_SYS(madvise), SCMP_SYS(munmap), SCMP_SYS(rt_sigprocmask),
			SCMP_SYS(rt_sigreturn), SCMP_SYS(clock_gettime), SCMP_SYS(exit),
			SCMP_SYS(exit_group), SCMP_SYS(sigaltstack), SCMP_SYS(mmap),
			SCMP_SYS(getpid), SCMP_SYS(gettid), SCMP_SYS(tgkill),
		};
		/* SIGINT/SIGTERM press the guest's power button (devices/power_button.c). */
		static const unsigned long control_ioctls[] = { KVM_GET_IRQCHIP, KVM_IRQ_LINE };
		if (!ret)
			ret = allow_calls(ctx, control_calls, N(control_calls));
		return ret ? ret : allow_ioctls(ctx, control_ioctls, N(control_ioctls));
	}
	if (!ret)
		ret = allow_calls(ctx, runtime_calls, N(runtime_calls));
	if (!ret)
		ret = allow_ioctls(ctx, device_ioctls, N(device_ioctls));
	if (!ret && kind == SECCOMP_FC_API) {
		ret = allow_calls(ctx, setup_calls, N(setup_calls));
		if (!ret)
			ret = allow_ioctls(ctx, setup_ioctls, N(setup_ioctls));
		if (!ret)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
					       SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	}
	if (!ret && (kind == SECCOMP_API || kind == SECCOMP_FC_API)) {
		/* Connections on the API socket; pause (tgkill is in the runtime
		 * list), the power button and live metrics. */
		static const int api_calls[] = { SCMP_SYS(accept4), SCMP_SYS(shutdown),
						 SCMP_SYS(getsockopt), SCMP_SYS(setsockopt),
						 SCMP_SYS(fcntl), SCMP_SYS(ftruncate),
						 SCMP_SYS(msync) /* a snapshot of --mem-file RAM */,
						 /* a snapshot's overwrite (rename), a failed one's files */
						 SCMP_SYS(rename), SCMP_SYS(renameat), SCMP_SYS(renameat2),
						 SCMP_SYS(unlink), SCMP_SYS(unlinkat) };
		/* ... and PUT /vm/dump: the parked vCPUs' registers, and new files in the dump
		 * directory (openat with exactly vm_dump_write's flags: it cannot read a file) */
		static const unsigned long api_ioctls[] = { KVM_GET_IRQCHIP, KVM_IRQ_LINE,
							    KVM_GET_REGS, KVM_GET_SREGS, KVM_GET_MSRS,
			/* ... and PUT /vm/snapshot: the rest of each vCPU's and the VM's state (and
			 * the XSAVE area's size, KVM_CAP_XSAVE2) */
			KVM_CHECK_EXTENSION, KVM_GET_XSAVE, KVM_GET_XSAVE2, KVM_GET_XCRS,
			KVM_GET_LAPIC, KVM_GET_VCPU_EVENTS, KVM_GET_DEBUGREGS, KVM_GET_MP_STATE, KVM_GET_MSR_INDEX_LIST, KVM_GET_CPUID2,
			KVM_GET_CLOCK, KVM_GET_PIT2 };
		ret = allow_calls(ctx, api_calls, N(api_calls));
		if (!ret)
			ret = allow_ioctls(ctx, api_ioctls, N(api_ioctls));
		if (!ret && kind == SECCOMP_API)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
					       SCMP_A2(SCMP_CMP_EQ, VM_DUMP_OPEN_FLAGS));
		if (!ret) /* ... and a snapshot's new files (O_EXCL: it cannot read one either) */
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
					       SCMP_A2(SCMP_CMP_EQ, VM_SNAPSHOT_OPEN_FLAGS));
	}
	if (!ret && kind == SECCOMP_VCPU)
		ret = allow_ioctls(ctx, vcpu_ioctls, N(vcpu_ioctls));
	if (!ret && kind == SECCOMP_IO) {
		/* vsock: host clients accepted on PATH, the guest's connects to PATH_P (unix
		 * sockets only), both on the I/O thread alone */
		static const int io_calls[] = { SCMP_SYS(accept4), SCMP_SYS(connect) };
		ret = allow_calls(ctx, io_calls, N(io_calls));
		if (!ret)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
					       SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	}
	if (!ret && kind == SECCOMP_BASELINE) {
		ret = allow_calls(ctx, setup_calls, N(setup_calls));
		if (!ret)
			ret = allow_ioctls(ctx, setup_ioctls, N(setup_ioctls));
		/* Sockets: the unix-socket network backend only. */
		if (!ret)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
					       SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	}
	return ret;
}

