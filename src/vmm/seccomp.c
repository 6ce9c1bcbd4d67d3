/* Seccomp: per-thread allow-lists (libseccomp) with ioctl requests filtered, and the SIGSYS report. */
#include "vmm/seccomp.h"
#include "vmm/vm_dump.h"
#include "vmm/vm_snapshot.h"

#include <errno.h>
#include <execinfo.h>
#include <malloc.h>
#include <linux/kvm.h>
#include <linux/fs.h>
#include <linux/if_tun.h>
#include <linux/vhost.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#define NAME_TABLE 512

/* Syscall names for the SIGSYS line, filled once in seccomp_signals_init
 * (before any thread exists) because the handler may not allocate. */
static const char *syscall_names[NAME_TABLE];
/* The filter kind of the calling thread, for the SIGSYS line. */
static __thread const char *thread_filter;

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
	SCMP_SYS(msync), /* the API thread's snapshot of --mem-file RAM */
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
};
/* ... and the vCPU thread itself: running, fault reports. */
static const unsigned long vcpu_ioctls[] = {
	KVM_RUN, KVM_GET_REGS, KVM_GET_SREGS, KVM_TRANSLATE,
};
/* ... and setup (main thread). */
static const unsigned long setup_ioctls[] = {
	KVM_GET_IRQCHIP, /* and the control thread's: is the guest listening for its power button */
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
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

_Static_assert(VM_SNAPSHOT_OPEN_FLAGS == VM_DUMP_OPEN_FLAGS,
	       "the API thread's openat rule allows one set of flags");

int seccomp_mode_parse(const char *s, enum seccomp_mode *out)
{
	if (!strcmp(s, "on"))
		*out = SECCOMP_ON;
	else if (!strcmp(s, "log"))
		*out = SECCOMP_LOG;
	else if (!strcmp(s, "off"))
		*out = SECCOMP_OFF;
	else
		return -EINVAL;
	return 0;
}

enum seccomp_mode seccomp_default_mode(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
	return SECCOMP_OFF;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	return SECCOMP_OFF;
#else
	return SECCOMP_ON;
#endif
#else
	return SECCOMP_ON;
#endif
}

/* write(2) of a NUL-terminated string: async-signal-safe. */
static void say(const char *s)
{
	size_t n = strlen(s);
	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int nr = si->si_syscall;
	char num[16];
	int i = (int)sizeof(num) - 1;
	num[i] = 0;
	unsigned v = nr < 0 ? 0 : (unsigned)nr;
	do {
		num[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v && i > 0);
	say("msivm: seccomp: the ");
	say(thread_filter ? thread_filter : "?");
	say(" thread made a forbidden system call: ");
	say(nr >= 0 && nr < NAME_TABLE && syscall_names[nr] ? syscall_names[nr] : "?");
	say(" (");
	say(num + i);
	say("); stopping (--seccomp log or off to allow it); the call's stack (addr2line -e msivm "
	    "OFFSET):\n");
	/* backtrace() was called once in seccomp_signals_init: its library is loaded, so it
	 * neither allocates nor opens anything here */
	void *frames[24];
	backtrace_symbols_fd(frames, backtrace(frames, 24), STDERR_FILENO);
	/* Stop the process by the signal itself (status 128 + SIGSYS). */
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

int seccomp_signals_init(void)
{
	void *warm[1];
	(void)backtrace(warm, 1); /* loads libgcc_s now, not in the SIGSYS handler */
	/* glibc reads /proc/sys/vm/overcommit_memory (openat) the first time it shrinks a
	 * thread's heap in free(): the I/O thread did when a Linux guest closed 64 vsock
	 * connections at once (256 KiB buffers each) and seccomp stopped msivm. Buffers of
	 * 128 KiB and more are mmap'd (freed by munmap), and heaps are never trimmed, so free()
	 * opens nothing on any thread. (Under a sanitizer's allocator mallopt does nothing and
	 * returns 0: glibc's heaps are not used there.) */
	(void)mallopt(M_MMAP_THRESHOLD, 128 << 10);
	(void)mallopt(M_TRIM_THRESHOLD, 1 << 30);
	for (int nr = 0; nr < NAME_TABLE; nr++)
		syscall_names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGSYS, &sa, NULL) ? -errno : 0;
}

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

static int build(scmp_filter_ctx ctx, enum seccomp_kind kind)
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
	if (!ret && kind == SECCOMP_API) {
		/* Connections on the API socket; pause (tgkill is in the runtime
		 * list), the power button and live metrics. */
		static const int api_calls[] = { SCMP_SYS(accept4), SCMP_SYS(shutdown),
						 SCMP_SYS(getsockopt), SCMP_SYS(setsockopt),
						 SCMP_SYS(fcntl), SCMP_SYS(ftruncate),
						 SCMP_SYS(msync) /* a snapshot of --mem-file RAM */ };
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
		if (!ret)
			ret = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
					       SCMP_A2(SCMP_CMP_EQ, VM_DUMP_OPEN_FLAGS));
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

static const char *const kind_names[] = {
	[SECCOMP_BASELINE] = "main", [SECCOMP_VCPU] = "vcpu", [SECCOMP_IO] = "io",
	[SECCOMP_CONTROL] = "control", [SECCOMP_API] = "api",
};

int seccomp_install(enum seccomp_kind kind, enum seccomp_mode mode, const char *name,
		    struct error *err)
{
	if (mode == SECCOMP_OFF)
		return 0;
	scmp_filter_ctx ctx = seccomp_init(mode == SECCOMP_LOG ? SCMP_ACT_LOG : SCMP_ACT_TRAP);
	if (!ctx)
		return error_set(err, -ENOMEM, "seccomp: cannot create the %s filter",
				 kind_names[kind]);
	int ret = build(ctx, kind);
	if (!ret)
		ret = seccomp_load(ctx);
	seccomp_release(ctx);
	if (ret)
		return error_set(err, ret, "seccomp: cannot install the %s filter for %s: %s",
				 kind_names[kind], name, strerror(-ret));
	/* The innermost filter names the thread (the baseline only the main one). */
	thread_filter = name;
	return 0;
}
