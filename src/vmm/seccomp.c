/* Seccomp: installs the per-thread filters compiled at build time (seccomp_progs.h), and the SIGSYS report. */
#include "vmm/seccomp.h"
#include "vmm/seccomp_progs.h"

#include <errno.h>
#include <execinfo.h>
#include <malloc.h>
#include <seccomp.h>
#include <signal.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NAME_TABLE 512

/* Syscall names for the SIGSYS line, filled once in seccomp_signals_init
 * (before any thread exists) because the handler may not allocate. */
static const char *syscall_names[NAME_TABLE];
/* The filter kind of the calling thread, for the SIGSYS line. */
static __thread const char *thread_filter;

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
	for (int nr = 0; nr < NAME_TABLE; nr++) /* once: a second call (Firecracker mode) keeps them */
		if (!syscall_names[nr])
			syscall_names[nr] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGSYS, &sa, NULL) ? -errno : 0;
}

static const char *const kind_names[] = {
	[SECCOMP_BASELINE] = "main", [SECCOMP_VCPU] = "vcpu", [SECCOMP_IO] = "io",
	[SECCOMP_CONTROL] = "control", [SECCOMP_API] = "api", [SECCOMP_FC_API] = "fc-api",
};

int seccomp_install(enum seccomp_kind kind, enum seccomp_mode mode, const char *name,
		    struct error *err)
{
	if (mode == SECCOMP_OFF)
		return 0;
	const struct seccomp_prog *p = &seccomp_progs[kind][mode == SECCOMP_LOG];
	struct sock_fprog prog = { .len = p->len, .filter = (struct sock_filter *)p->insns };
	/* No new privileges first: what lets an unprivileged process install a filter, and
	 * what libseccomp's own load did. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return error_set(err, -errno, "seccomp: cannot install the %s filter for %s: %s",
				 kind_names[kind], name, strerror(errno));
	/* The innermost filter names the thread (the baseline only the main one). */
	thread_filter = name;
	return 0;
}
