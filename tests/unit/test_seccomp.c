/* Unit tests for the seccomp filters: each thread kind's filter stops a call it does not allow, names it, and lets its own calls through. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/vfio.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmm/seccomp.h"
#include "vmm/seccomp_progs.h"
#include "vmm/seccomp_rules.h"
#include "vmm/vm_dump.h"

/* The child's verdict when the forbidden call did not stop it. */
#define SURVIVED 42

typedef void (*probe_fn)(void);

/* Forks; the child installs `kind` in `mode` and runs `fn`, then exits
 * SURVIVED. Returns the wait status; *msg gets the child's stderr. */
static int in_child(enum seccomp_kind kind, enum seccomp_mode mode, probe_fn fn, char *msg,
		    size_t cap)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(p[1], STDERR_FILENO);
		close(p[0]);
		struct error err;
		if (seccomp_signals_init() || seccomp_install(kind, mode, "test-thread", &err))
			_exit(1);
		fn();
		_exit(SURVIVED);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(p[0], msg + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	msg[n] = 0;
	char rest[512]; /* the SIGSYS report's stack goes on: read to the end, or the child's
			 * next write would end it by SIGPIPE rather than SIGSYS */
	while (read(p[0], rest, sizeof(rest)) > 0)
		;
	close(p[0]);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static void expect_stopped(enum seccomp_kind kind, probe_fn fn, const char *call)
{
	char msg[512];
	int st = in_child(kind, SECCOMP_ON, fn, msg, sizeof(msg));
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGSYS)
		fail_msg("want death by SIGSYS for %s, got status 0x%x (stderr: %s)", call, st, msg);
	if (!strstr(msg, call) || !strstr(msg, "test-thread"))
		fail_msg("the SIGSYS line does not name '%s' and the thread: %s", call, msg);
}

static void expect_allowed(enum seccomp_kind kind, enum seccomp_mode mode, probe_fn fn)
{
	char msg[512];
	int st = in_child(kind, mode, fn, msg, sizeof(msg));
	if (!WIFEXITED(st) || WEXITSTATUS(st) != SURVIVED)
		fail_msg("want a normal exit, got status 0x%x (stderr: %s)", st, msg);
}

static void do_ptrace(void) { ptrace(PTRACE_TRACEME, 0, NULL, NULL); }
static void do_inet_socket(void) { socket(AF_INET, SOCK_STREAM, 0); }
static void do_open(void) { open("/dev/null", O_RDONLY); }
static void do_execve(void) { char *argv[] = { "true", NULL }; execve("/bin/true", argv, NULL); }
static void do_kvm_run(void) { ioctl(-1, KVM_RUN, 0); }
static void do_create_vm(void) { ioctl(-1, KVM_CREATE_VM, 0); }
static void do_irqfd(void) { if (ioctl(-1, KVM_IRQFD, NULL) != -1 || errno != EBADF) _exit(3); }
static void do_power_button(void)
{
	struct kvm_irqchip chip = { .chip_id = KVM_IRQCHIP_IOAPIC };
	struct kvm_irq_level l = { .irq = 5, .level = 1 };
	if (ioctl(-1, KVM_GET_IRQCHIP, &chip) != -1 || ioctl(-1, KVM_IRQ_LINE, &l) != -1)
		_exit(3);
}
/* VFIO: SET_IRQS (a guest's MSI-X enable) on vCPU threads; the setup requests on none of
 * the running threads; nothing VFIO on the I/O and API threads. */
static void do_vfio_set_irqs(void)
{
	if (ioctl(-1, VFIO_DEVICE_SET_IRQS, NULL) != -1 || errno != EBADF)
		_exit(3);
}
static void do_vfio_map_dma(void) { ioctl(-1, VFIO_IOMMU_MAP_DMA, NULL); }
static void do_vfio_reset(void) { if (ioctl(-1, VFIO_DEVICE_RESET) != -1 || errno != EBADF) _exit(3); }
static void do_write(void) { if (write(STDERR_FILENO, "", 0) != 0) _exit(3); }
static void do_unix_socket(void)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0)
		_exit(3);
	close(fd);
}

static void test_baseline(void **state)
{
	expect_stopped(SECCOMP_BASELINE, do_ptrace, "ptrace");
	expect_stopped(SECCOMP_BASELINE, do_execve, "execve");
	expect_stopped(SECCOMP_BASELINE, do_inet_socket, "socket");
	expect_allowed(SECCOMP_BASELINE, SECCOMP_ON, do_unix_socket);  /* the socket backend */
	expect_allowed(SECCOMP_BASELINE, SECCOMP_ON, do_open);
	expect_allowed(SECCOMP_BASELINE, SECCOMP_ON, do_vfio_reset); /* each boot's and exit's */
}

static void test_vcpu(void **state)
{
	expect_stopped(SECCOMP_VCPU, do_open, "open");
	expect_stopped(SECCOMP_VCPU, do_create_vm, "ioctl");  /* a setup request */
	expect_allowed(SECCOMP_VCPU, SECCOMP_ON, do_irqfd);    /* MSI-X unmask wires an irqfd */
	expect_allowed(SECCOMP_VCPU, SECCOMP_ON, do_write);
	expect_allowed(SECCOMP_VCPU, SECCOMP_ON, do_vfio_set_irqs);
	expect_stopped(SECCOMP_VCPU, do_vfio_map_dma, "ioctl");
}

static void test_io(void **state)
{
	expect_stopped(SECCOMP_IO, do_kvm_run, "ioctl");     /* only vCPU threads run the guest */
	expect_stopped(SECCOMP_IO, do_open, "open");
	expect_allowed(SECCOMP_IO, SECCOMP_ON, do_irqfd);
	expect_stopped(SECCOMP_IO, do_vfio_set_irqs, "ioctl");
}

static void test_control(void **state)
{
	expect_stopped(SECCOMP_CONTROL, do_irqfd, "ioctl");
	expect_allowed(SECCOMP_CONTROL, SECCOMP_ON, do_power_button); /* SIGTERM: the button */
	expect_stopped(SECCOMP_CONTROL, do_unix_socket, "socket");
	expect_allowed(SECCOMP_CONTROL, SECCOMP_ON, do_write);
}

/* PUT /vm/dump's files: a new file, write-only, exactly vm_dump_write's flags. */
static void do_dump_open(void)
{
	int fd = openat(AT_FDCWD, "/tmp/msivm-test-seccomp-dump", VM_DUMP_OPEN_FLAGS, 0600);
	if (fd < 0)
		_exit(3);
	close(fd);
}
static void do_rdwr_open(void) { openat(AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC); }

static void do_accept(void)
{
	if (accept4(-1, NULL, NULL, SOCK_CLOEXEC) != -1 || errno != EBADF)
		_exit(3);
}

/* The API thread: connections and the VM controls it serves, nothing that opens or runs. */
static void test_api(void **state)
{
	expect_allowed(SECCOMP_API, SECCOMP_ON, do_accept);
	expect_allowed(SECCOMP_API, SECCOMP_ON, do_power_button); /* PUT /vm/power-button */
	expect_allowed(SECCOMP_API, SECCOMP_ON, do_write);
	expect_stopped(SECCOMP_API, do_open, "open");
	expect_stopped(SECCOMP_API, do_rdwr_open, "open");      /* only the dump's own flags */
	expect_allowed(SECCOMP_API, SECCOMP_ON, do_dump_open);  /* PUT /vm/dump */
	unlink("/tmp/msivm-test-seccomp-dump");
	expect_stopped(SECCOMP_API, do_kvm_run, "ioctl");
	expect_stopped(SECCOMP_API, do_vfio_set_irqs, "ioctl");
	expect_stopped(SECCOMP_API, do_unix_socket, "socket");
	expect_stopped(SECCOMP_API, do_execve, "execve");
}

/* log: the kernel logs; the call goes through. off: nothing is installed. */
static void test_log_and_off_allow(void **state)
{
	expect_allowed(SECCOMP_CONTROL, SECCOMP_LOG, do_open);
	expect_allowed(SECCOMP_CONTROL, SECCOMP_OFF, do_inet_socket);
}

/* The filters msivm loads (compiled when it was built) are what libseccomp makes of the rules
 * now, instruction for instruction, in both modes: a stale or hand-edited program fails here. */
static void test_built_filters_are_the_rules(void **state)
{
	for (int k = 0; k < SECCOMP_NKINDS; k++) {
		for (int m = 0; m < 2; m++) {
			scmp_filter_ctx ctx = seccomp_init(m ? SCMP_ACT_LOG : SCMP_ACT_TRAP);
			assert_non_null(ctx);
			assert_int_equal(seccomp_rules_build(ctx, (enum seccomp_kind)k), 0);
			int fd = memfd_create("bpf", 0);
			assert_true(fd >= 0);
			assert_int_equal(seccomp_export_bpf(ctx, fd), 0);
			seccomp_release(ctx);
			off_t size = lseek(fd, 0, SEEK_END);
			const struct seccomp_prog *p = &seccomp_progs[k][m];
			if (size != (off_t)(p->len * sizeof(struct sock_filter)))
				fail_msg("kind %d mode %d: %lld bytes from libseccomp, %u instructions built",
					 k, m, (long long)size, p->len);
			struct sock_filter *now = malloc((size_t)size);
			assert_non_null(now);
			assert_int_equal(pread(fd, now, (size_t)size, 0), size);
			close(fd);
			if (memcmp(now, p->insns, (size_t)size))
				fail_msg("kind %d mode %d: the built filter differs from the rules", k, m);
			free(now);
		}
	}
}

static void test_mode_names(void **state)
{
	enum seccomp_mode m;
	assert_int_equal(seccomp_mode_parse("on", &m), 0);
	assert_int_equal(m, SECCOMP_ON);
	assert_int_equal(seccomp_mode_parse("log", &m), 0);
	assert_int_equal(m, SECCOMP_LOG);
	assert_int_equal(seccomp_mode_parse("off", &m), 0);
	assert_int_equal(m, SECCOMP_OFF);
	assert_int_equal(seccomp_mode_parse("yes", &m), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_baseline),
		cmocka_unit_test(test_vcpu),
		cmocka_unit_test(test_io),
		cmocka_unit_test(test_control),
		cmocka_unit_test(test_api),
		cmocka_unit_test(test_log_and_off_allow),
		cmocka_unit_test(test_built_filters_are_the_rules),
		cmocka_unit_test(test_mode_names),
	};
	return cmocka_run_group_tests_name("seccomp", tests, NULL, NULL);
}
