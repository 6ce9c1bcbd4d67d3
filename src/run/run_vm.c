/* msivm run: host ends (stats, log, serial, consoles) -> API -> build, boot and run the VM, again after guest resets -> outcome. */
#include "run/run_vm.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "api/api.h"
#include "config/config_print.h"
#include "util/log.h"
#include "util/unix_socket.h"
#include "vmm/boot.h"
#include "vmm/jail.h"
#include "vmm/kvm_host.h"
#include "vmm/seccomp.h"
#include "vmm/vm.h"
#include "util/clock.h"
#include "vmm/vm_dump.h"
#include "vmm/vm_snapshot.h"
#include "vmm/vm_stats.h"

/* What the run holds open on the host, released by close_ends. */
struct host_ends {
	FILE *stats_out;          /* --stats-json, or stdout for "-" */
	bool stats_stdout;
	int log_fd;               /* --log-file, or -1 */
	struct termios saved_tty; /* the terminal before --serial tty made it raw */
	bool tty_raw;
	int dump_dir;             /* --dump-on-crash, or -1 */
};

static struct run_outcome not_started(void) { return (struct run_outcome){ RUN_NOT_STARTED, 0 }; }

/* --serial (run_config_serial's forms). Returns false after a line on stderr. */
static bool open_serial(struct run_config *c, struct host_ends *h)
{
	const char *path;
	struct error err;
	switch (run_config_serial(c, &path)) {
	case SERIAL_STDOUT:
		return true;
	case SERIAL_OFF:
		c->vm.serial_fd = -1;
		return true;
	case SERIAL_TTY:
		c->vm.serial_in_fd = STDIN_FILENO;
		c->vm.serial_escape = isatty(STDIN_FILENO);
		if (c->vm.serial_escape && !tcgetattr(STDIN_FILENO, &h->saved_tty)) {
			struct termios t = h->saved_tty;
			cfmakeraw(&t);
			t.c_oflag |= OPOST | ONLCR; /* guest output stays readable */
			if (!tcsetattr(STDIN_FILENO, TCSAFLUSH, &t)) {
				h->tty_raw = true;
				fprintf(stderr, "msivm: serial console on this terminal; Ctrl-a x quits\r\n");
			}
		}
		return true;
	case SERIAL_SOCKET: /* one client, both ways, before the guest boots */
		fprintf(stderr, "msivm: serial console: waiting for a connection on %s\n", path);
		c->vm.serial_fd = c->vm.serial_in_fd = unix_accept_one(path, "--serial socket=", &err);
		if (c->vm.serial_fd < 0)
			fprintf(stderr, "msivm: %s\n", err.msg);
		return c->vm.serial_fd >= 0;
	case SERIAL_FILE:
		c->vm.serial_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (c->vm.serial_fd < 0)
			fprintf(stderr, "msivm: cannot open serial output '%s': %s\n", path, strerror(errno));
		return c->vm.serial_fd >= 0;
	}
	return false;
}

/* --console socket=PATH: waits for each console's client before the guest boots; --console
 * in=PATH: opens the input. Both are kept across guest reboots (each boot dups them): input
 * read before a reboot is not read again after it. Returns false after a line on stderr. */
static bool open_console_ends(struct vm_config *vm)
{
	for (uint32_t i = 0; i < vm->ndevices; i++) {
		struct virtio_console_opts *o = &vm->devices[i].console;
		struct error err;
		if (vm->devices[i].type != VM_DEV_CONSOLE)
			continue;
		if (o->in_path[0]) {
			if ((o->in_fd = virtio_console_open_input(o->in_path, &err)) < 0) {
				fprintf(stderr, "msivm: %s\n", err.msg);
				return false;
			}
			o->in_open = true;
		}
		if (!o->sock_path[0])
			continue;
		fprintf(stderr, "msivm: virtio-console: waiting for a connection on %s\n", o->sock_path);
		if ((o->sock_fd = unix_accept_one(o->sock_path, "--console socket=", &err)) < 0) {
			fprintf(stderr, "msivm: %s\n", err.msg);
			return false;
		}
		o->sock_open = true;
	}
	return true;
}

/* --mem-file: the RAM file, created at --mem's size or of exactly that size, locked so that no
 * second msivm shares it by mistake. Returns false after a line on stderr. */
static bool open_mem_file(struct vm_config *vm)
{
	struct stat st;
	vm->mem_fd = open(vm->mem_file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	const char *why = vm->mem_fd < 0 ? strerror(errno) : NULL;
	if (!why && flock(vm->mem_fd, LOCK_EX | LOCK_NB))
		why = errno == EWOULDBLOCK ? "another process holds it (a second msivm?)" : strerror(errno);
	if (!why && fstat(vm->mem_fd, &st))
		why = strerror(errno);
	if (!why && !S_ISREG(st.st_mode))
		why = "not a regular file";
	if (!why && st.st_size == 0 && ftruncate(vm->mem_fd, (off_t)vm->mem_size))
		why = strerror(errno);
	/* A snapshot's trailer after the RAM: a VM that runs on the file changes the RAM, so the
	 * state file that named it no longer matches it (its restore then refuses the file). */
	if (!why && (uint64_t)st.st_size == vm->mem_size + VM_SNAPSHOT_MEM_TRAILER &&
	    ftruncate(vm->mem_fd, (off_t)vm->mem_size) == 0)
		st.st_size = (off_t)vm->mem_size;
	if (!why && st.st_size != 0 && (uint64_t)st.st_size != vm->mem_size) {
		fprintf(stderr, "msivm: --mem-file '%s' is %lld bytes and the guest's RAM %llu: give "
			"--mem %lldK or another file\n", vm->mem_file, (long long)st.st_size,
			(unsigned long long)vm->mem_size, (long long)st.st_size / 1024);
		return false;
	}
	if (why)
		fprintf(stderr, "msivm: --mem-file '%s': %s\n", vm->mem_file, why);
	return !why;
}

/* --stats-json and --log-file (before the jail: they may lie outside it), the serial console,
 * the consoles' host ends, signal handling. Returns false after a line on stderr. */
static bool open_ends(struct run_config *c, struct host_ends *h)
{
	h->stats_stdout = c->stats_json && !strcmp(c->stats_json, "-");
	if (h->stats_stdout)
		h->stats_out = stdout;
	else if (c->stats_json && !(h->stats_out = fopen(c->stats_json, "we"))) {
		fprintf(stderr, "msivm: cannot open statistics file '%s': %s\n", c->stats_json,
			strerror(errno));
		return false;
	}
	if (c->log_file) {
		h->log_fd = open(c->log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (h->log_fd < 0) {
			fprintf(stderr, "msivm: cannot open log file '%s': %s\n", c->log_file,
				strerror(errno));
			return false;
		}
		log_set_fd(h->log_fd);
	}
	if (c->dump_dir &&
	    (h->dump_dir = open(c->dump_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "msivm: --dump-on-crash '%s': %s\n", c->dump_dir, strerror(errno));
		return false;
	}
	if (c->mem_file && !open_mem_file(&c->vm))
		return false;
	char *abs = c->mem_file ? realpath(c->mem_file, NULL) : NULL;
	if (abs) { /* a snapshot that leaves its RAM there names it for any working directory */
		free(c->mem_file);
		c->mem_file = abs;
		c->vm.mem_file = abs;
	}
	if (!open_serial(c, h) || !open_console_ends(&c->vm))
		return false;
	if (vm_signals_init() || seccomp_signals_init()) {
		fprintf(stderr, "msivm: cannot set up signal handling\n");
		return false;
	}
	return true;
}

static void close_ends(struct run_config *c, struct host_ends *h)
{
	if (c->vm.serial_fd > 2)
		close(c->vm.serial_fd);
	if (h->tty_raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &h->saved_tty);
	if (h->stats_out && !h->stats_stdout)
		fclose(h->stats_out);
	if (h->log_fd >= 0)
		close(h->log_fd);
	if (h->dump_dir >= 0)
		close(h->dump_dir);
	if (c->vm.mem_file && c->vm.mem_fd >= 0)
		close(c->vm.mem_fd);
}

/* --dump-on-crash: a boot that ended in a guest panic, crash or triple fault leaves
 * msivm-PID-bootN.{core,json} in the directory (vCPUs stopped, VM not yet destroyed). */
static void dump_if_crashed(const struct run_config *c, struct vm *vm, unsigned boot,
			    const struct host_ends *h)
{
	enum vm_end end = (enum vm_end)atomic_load(&vm->end);
	bool triple = end == VM_END_RESET && vm->end_reason &&
		      !strcmp(vm->end_reason, VM_REASON_TRIPLE_FAULT);
	if (h->dump_dir < 0 || !(end == VM_END_CRASH || end == VM_END_SHUTDOWN || triple))
		return;
	char stem[64];
	struct error err;
	snprintf(stem, sizeof(stem), "msivm-%d-boot%u", (int)getpid(), boot);
	if (vm_dump_write(vm, h->dump_dir, stem, &err))
		log_err("crash dump: %s", err.msg);
	else
		log_warn("crash dump (%s): %s/%s.core and %s.json", vm->end_reason ? vm->end_reason
			 : "the guest crashed", c->dump_dir, stem, stem);
}

/* --stats: one block per boot, headed by its number and what ended it. */
static void print_boot_stats(struct vm *vm, unsigned boot)
{
	fprintf(stderr, "stats of boot %u (it ended: %s):\n", boot,
		vm->end_reason ? vm->end_reason : "see the exit status");
	vm_stats_print(vm, stderr);
}

/* What ended a VM that ran, as a run outcome. */
static struct run_outcome outcome_of(const struct vm *vm)
{
	switch ((enum vm_end)atomic_load(&vm->end)) {
	case VM_END_GUEST_EXIT:
		return (struct run_outcome){ RUN_GUEST_EXIT, vm->exit_status };
	case VM_END_SIGNAL:
		return (struct run_outcome){ RUN_STOPPED, vm->exit_status };
	case VM_END_POWEROFF:
		return (struct run_outcome){ RUN_POWEROFF, 0 };
	case VM_END_RESET:
		return (struct run_outcome){ RUN_RESET, 0 };
	case VM_END_VMM_ERROR:
		return (struct run_outcome){ RUN_VMM_FAILED, 0 };
	default:
		return (struct run_outcome){ RUN_CRASHED, 0 };
	}
}

/* A boot whose guest reset: true when the VM is to be built again (the reset is logged). */
static bool reboots(const struct run_config *c, const struct vm *vm, unsigned boot, int stop)
{
	if (stop) { /* the guest reset as the operator stopped it */
		log_info("guest reset (%s) after the operator's stop: not rebooting", vm->end_reason);
		return false;
	}
	if (c->no_reboot)
		return false;
	if (jail_confines(&c->jail)) {
		log_warn("guest reset (%s): msivm runs jailed (--user/--chroot) and cannot build the VM "
			 "again; stopping", vm->end_reason);
		return false;
	}
	log_info("guest reset (%s): reboot %u", vm->end_reason, boot);
	return true;
}

/* --restore: the snapshot into the VM just built; with `paused`, its vCPUs wait for the API. */
static int restore(const struct run_config *c, struct vm *vm, struct error *err)
{
	int fd = open(c->restore_mem, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, -errno, "cannot open the snapshot's memory file '%s': %s",
				 c->restore_mem, strerror(errno));
	uint64_t t0 = clock_now_ns();
	int ret = vm_snapshot_restore(vm, c->restore_root, fd, c->restore_copy, err);
	close(fd); /* the private mapping keeps the file (a copy needs it no more) */
	if (ret) {
		char why[sizeof(err->msg)];
		memcpy(why, err->msg, sizeof(why));
		return error_set(err, ret, "cannot restore %s with the memory file %s: %s",
				 c->restore_state, c->restore_mem, why);
	}
	if (c->restore_paused)
		atomic_store(&vm->paused, true);
	log_info("restored %s (%.3f ms, RAM %s %s)%s", c->restore_state,
		 (double)(clock_now_ns() - t0) / 1e6, c->restore_copy ? "read from" : "mapped from",
		 c->restore_mem, c->restore_paused ? ", paused" : "");
	return 0;
}

/* Builds, boots and runs the VM until a boot ends for good; *err says why when the outcome
 * is RUN_NOT_STARTED or RUN_VMM_FAILED. */
static struct run_outcome boot_loop(struct run_config *c, struct vm *vm, struct api_target *api,
				    struct api_server *api_srv, const struct host_ends *h,
				    struct error *err)
{
	_Atomic int operator_stop = 0; /* a signal or the API asked to stop: no reboot after it */
	c->vm.operator_stop = &operator_stop;
	if (!c->restore_root && x86_kernel_is_bzimage(c->kernel) && kvm_host_is_pvm())
		log_warn("this host's KVM is PVM (kvm_pvm): a stock Linux bzImage does not boot on it "
			 "(its CPL0 code is emulated): expect no output. A stock kernel runs on hardware "
			 "KVM or nested in QEMU (make check-linux, msivm lab --guest linux do that)");
	for (unsigned boot = 1; vm_create(vm, &c->vm, err) == 0; boot++) {
		struct x86_boot_spec spec = { c->kernel, c->cmdline, c->initrd };
		/* The process-wide filter goes on once the first VM is built; it still lets this
		 * thread build the next one after a guest reboot. The API thread starts inside the
		 * jail, under that filter. A --restore puts the snapshot in the first VM instead of
		 * a kernel (a guest reboot later boots the kernel of its configuration). */
		bool restoring = boot == 1 && c->restore_root;
		if ((restoring ? restore(c, vm, err) : x86_boot(vm, &spec, err)) ||
		    (boot == 1 && (jail_enter(&c->jail, err) ||
				   seccomp_install(SECCOMP_BASELINE, c->vm.seccomp, "main", err) ||
				   (api_srv && api_server_run(api_srv, err))))) {
			vm_destroy(vm);
			return not_started();
		}
		api_set_vm(api, vm, boot);
		int run_err = vm_run(vm, err);
		api_set_vm(api, NULL, boot);
		if (run_err) {
			vm_destroy(vm);
			return (struct run_outcome){ RUN_VMM_FAILED, 0 };
		}
		dump_if_crashed(c, vm, boot, h);
		struct run_outcome out = outcome_of(vm);
		int stop = atomic_load(&operator_stop);
		bool again = out.end == RUN_RESET && reboots(c, vm, boot, stop);
		if (out.end == RUN_RESET && stop)
			out = (struct run_outcome){ RUN_STOPPED, stop - 1 };
		if (!again && vm->end_reason && out.end != RUN_POWEROFF && out.end != RUN_VMM_FAILED)
			log_info("guest stopped: %s", vm->end_reason);
		if (c->stats)
			print_boot_stats(vm, boot);
		if (!again && h->stats_out && vm_stats_write_json(vm, h->stats_out, c->stats_json, err))
			fprintf(stderr, "msivm: %s\n", err->msg);
		if (out.end == RUN_VMM_FAILED) /* the log may be a file: say it where the operator looks */
			error_set(err, -EIO, "msivm failed while the guest ran: %s (the log says more)",
				  vm->end_reason ? vm->end_reason : "see the log");
		vm_destroy(vm);
		if (!again)
			return out;
		for (uint32_t i = 0; i < c->vm.ndevices; i++) /* later boots append to console files */
			if (c->vm.devices[i].type == VM_DEV_CONSOLE)
				c->vm.devices[i].console.append = true;
	}
	return not_started();
}

struct run_outcome run_vm_served(struct run_config *c, struct api_target *api,
				 struct api_server *api_srv)
{
	struct host_ends h = { .log_fd = -1, .dump_dir = -1 };
	bool served = api != NULL; /* the caller's server: it stays up after the run */
	if (!served) /* before msivm opens anything of its own (a caller with a server did it) */
		jail_note_inherited(&c->jail);
	struct vm *vm = NULL;
	struct run_outcome out = not_started();
	struct api_target own = { .lock = PTHREAD_MUTEX_INITIALIZER, .dump_dir = -1 };
	char *config_json = NULL; /* GET /vm shows what --print-config prints */
	struct error err = { "" };
	if (!served)
		api = &own;
	if (!open_ends(c, &h)) {
		close_ends(c, &h);
		return out;
	}
	if (!(vm = calloc(1, sizeof(*vm))))
		error_set(&err, -ENOMEM, "out of memory");
	else if ((c->api_socket || served) &&
		 !(config_json = config_print(c, &err)))
		; /* err says why */
	else if (!served && c->api_socket &&
		 api_server_start(&api_srv, c->api_socket, api, c->vm.seccomp, &err))
		; /* err says why */
	else {
		pthread_mutex_lock(&api->lock);
		api->dump_dir = h.dump_dir;
		api->config_json = config_json;
		pthread_mutex_unlock(&api->lock);
		out = boot_loop(c, vm, api, api_srv, &h, &err);
		pthread_mutex_lock(&api->lock);
		api->dump_dir = -1;
		api->config_json = NULL;
		pthread_mutex_unlock(&api->lock);
	}
	if (!served)
		api_server_stop(api_srv);
	free(config_json);
	if (out.end == RUN_NOT_STARTED || out.end == RUN_VMM_FAILED)
		fprintf(stderr, "msivm: %s\n", err.msg);
	free(vm);
	close_ends(c, &h);
	return out;
}

struct run_outcome run_vm(struct run_config *c)
{
	return run_vm_served(c, NULL, NULL);
}
