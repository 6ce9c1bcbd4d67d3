/* main: command -> configuration (src/config) -> build, boot and run the VM; the only place that exits. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "api/api.h"
#include "vmm/boot.h"
#include "config/config_cli.h"
#include "config/config_print.h"
#include "lab/lab.h"
#include "util/log.h"
#include "util/unix_socket.h"
#include "vmm/jail.h"
#include "vmm/kvm_host.h"
#include "vmm/seccomp.h"
#include "vmm/vm.h"
#include "vmm/vm_stats.h"

/* Exit statuses of msivm itself; a guest's debug-exit byte V is returned as V. */
#define EXIT_MSIVM_ERROR 125 /* bad usage or host problem: nothing ran */
#define EXIT_GUEST_RESET 123 /* the guest reset (rebooted) and --no-reboot was given */
#define EXIT_GUEST_CRASH 126 /* the guest could not go on (KVM emulation or VM-entry failure) */
#define EXIT_VMM_ERROR 122   /* msivm itself failed while the guest ran (KVM_RUN, a thread, the loop) */

static int exit_status_of(const struct vm *vm)
{
	switch ((enum vm_end)atomic_load(&vm->end)) {
	case VM_END_GUEST_EXIT:
	case VM_END_SIGNAL:
		return vm->exit_status;
	case VM_END_POWEROFF:
		return 0;
	case VM_END_RESET:
		return EXIT_GUEST_RESET;
	case VM_END_VMM_ERROR:
		return EXIT_VMM_ERROR;
	default:
		return EXIT_GUEST_CRASH;
	}
}

/* --stats: one block per boot, headed by its number and what ended it. */
static void print_boot_stats(struct vm *vm, unsigned boot)
{
	fprintf(stderr, "stats of boot %u (it ended: %s):\n", boot,
		vm->end_reason ? vm->end_reason : "see the exit status");
	vm_stats_print(vm, stderr);
}

/* --serial as the configuration keeps it: "file=FILE" (output to a file), "tty" (standard
 * output, and standard input in raw mode with Ctrl-a x to quit when it is a terminal), "off";
 * NULL: standard output. Returns -1 on success (with *raw and *saved set when the terminal
 * was switched to raw mode) or an exit status. */
static int open_serial(struct run_config *o, struct termios *saved, bool *raw)
{
	const char *v = o->serial;
	if (!v)
		return -1;
	if (!strcmp(v, "off")) {
		o->vm.serial_fd = -1;
		return -1;
	}
	if (!strcmp(v, "tty")) {
		o->vm.serial_in_fd = STDIN_FILENO;
		o->vm.serial_escape = isatty(STDIN_FILENO);
		if (o->vm.serial_escape && !tcgetattr(STDIN_FILENO, saved)) {
			struct termios t = *saved;
			cfmakeraw(&t);
			t.c_oflag |= OPOST | ONLCR; /* guest output stays readable */
			if (!tcsetattr(STDIN_FILENO, TCSAFLUSH, &t)) {
				*raw = true;
				fprintf(stderr, "msivm: serial console on this terminal; Ctrl-a x quits\r\n");
			}
		}
		return -1;
	}
	if (!strncmp(v, "socket=", 7)) { /* one client, both ways, before the guest boots */
		struct error err;
		fprintf(stderr, "msivm: serial console: waiting for a connection on %s\n", v + 7);
		int fd = unix_accept_one(v + 7, "--serial socket=", &err);
		if (fd < 0) {
			fprintf(stderr, "msivm: %s\n", err.msg);
			return EXIT_MSIVM_ERROR;
		}
		o->vm.serial_fd = o->vm.serial_in_fd = fd;
		return -1;
	}
	if (!strncmp(v, "file=", 5))
		v += 5;
	o->vm.serial_fd = open(v, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->vm.serial_fd < 0) {
		fprintf(stderr, "msivm: cannot open serial output '%s': %s\n", v, strerror(errno));
		return EXIT_MSIVM_ERROR;
	}
	return -1;
}

/* --console socket=PATH: waits for each console's client before the guest
 * boots; --console in=PATH: opens the input. Both are kept across guest
 * reboots (each boot dups them): input read before a reboot is not read
 * again after it. Returns -1 on success or an exit status. */
static int open_console_host_ends(struct vm_config *vm)
{
	for (uint32_t i = 0; i < vm->ndevices; i++) {
		struct virtio_console_opts *o = &vm->devices[i].console;
		if (vm->devices[i].type != VM_DEV_CONSOLE)
			continue;
		struct error err;
		if (o->in_path[0]) {
			if ((o->in_fd = virtio_console_open_input(o->in_path, &err)) < 0) {
				fprintf(stderr, "msivm: %s\n", err.msg);
				return EXIT_MSIVM_ERROR;
			}
			o->in_open = true;
		}
		if (!o->sock_path[0])
			continue;
		fprintf(stderr, "msivm: virtio-console: waiting for a connection on %s\n", o->sock_path);
		o->sock_fd = unix_accept_one(o->sock_path, "--console socket=", &err);
		if (o->sock_fd < 0) {
			fprintf(stderr, "msivm: %s\n", err.msg);
			return EXIT_MSIVM_ERROR;
		}
		o->sock_open = true;
	}
	return -1;
}

/* After a guest reboot the VM is built again from the same config; console
 * output files then grow instead of starting over. */
static void keep_console_output(struct vm_config *cfg)
{
	for (uint32_t i = 0; i < cfg->ndevices; i++)
		if (cfg->devices[i].type == VM_DEV_CONSOLE)
			cfg->devices[i].console.append = true;
}

/* --print-config: the configuration on standard output. */
static int print_config(const struct run_config *c)
{
	struct error err;
	char *text = config_print(c, &err);
	if (!text) {
		fprintf(stderr, "msivm: %s\n", err.msg);
		return EXIT_MSIVM_ERROR;
	}
	fputs(text, stdout);
	free(text);
	return fflush(stdout) ? EXIT_MSIVM_ERROR : 0;
}

/* Builds, boots and runs the VM of c until it ends (again after guest reboots). */
static int run_vm(struct run_config *c)
{
	int status;
	jail_note_inherited(&c->jail); /* before msivm opens anything of its own */
	FILE *stats_out = NULL;
	bool stats_stdout = c->stats_json && !strcmp(c->stats_json, "-");
	if (stats_stdout)
		stats_out = stdout;
	else if (c->stats_json && !(stats_out = fopen(c->stats_json, "we"))) {
		fprintf(stderr, "msivm: cannot open statistics file '%s': %s\n", c->stats_json,
			strerror(errno));
		return EXIT_MSIVM_ERROR;
	}
	int log_fd = -1;
	if (c->log_file) {
		log_fd = open(c->log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (log_fd < 0) {
			fprintf(stderr, "msivm: cannot open log file '%s': %s\n", c->log_file,
				strerror(errno));
			return EXIT_MSIVM_ERROR;
		}
		log_set_fd(log_fd);
	}
	struct termios saved_tty;
	bool tty_raw = false;
	int st = open_serial(c, &saved_tty, &tty_raw);
	if (st >= 0)
		return st;
	if ((st = open_console_host_ends(&c->vm)) >= 0)
		return st;
	if (vm_signals_init() || seccomp_signals_init()) {
		fprintf(stderr, "msivm: cannot set up signal handling\n");
		return EXIT_MSIVM_ERROR;
	}
	struct vm *vm = calloc(1, sizeof(*vm));
	struct error err = { "" };
	if (!vm) {
		fprintf(stderr, "msivm: out of memory\n");
		return EXIT_MSIVM_ERROR;
	}
	status = EXIT_MSIVM_ERROR;
	_Atomic int operator_stop = 0; /* a signal or the API asked to stop: no reboot after it */
	c->vm.operator_stop = &operator_stop;
	struct api_target api = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct api_server *api_srv = NULL;
	char *config_json = NULL; /* GET /vm shows what --print-config prints */
	if (c->api_socket && (!(api.config_json = config_json = config_print(c, &err)) ||
			      api_server_start(&api_srv, c->api_socket, &api, c->vm.seccomp, &err))) {
		fprintf(stderr, "msivm: %s\n", err.msg);
		free(config_json);
		free(vm);
		return EXIT_MSIVM_ERROR;
	}
	for (unsigned boot = 1; vm_create(vm, &c->vm, &err) == 0; boot++) {
		struct x86_boot_spec boot_spec = { c->kernel, c->cmdline, c->initrd };
		/* The process-wide filter goes on once the first VM is built; it
		 * still lets this thread build the next one after a guest reboot.
		 * The API thread starts inside the jail, under that filter. */
		if (x86_boot(vm, &boot_spec, &err) ||
		    (boot == 1 && (jail_enter(&c->jail, &err) ||
				   seccomp_install(SECCOMP_BASELINE, c->vm.seccomp, "main", &err) ||
				   (api_srv && api_server_run(api_srv, &err))))) {
			vm_destroy(vm);
			break;
		}
		api_set_vm(&api, vm, boot);
		int run_err = vm_run(vm, &err);
		api_set_vm(&api, NULL, boot);
		if (run_err) {
			status = EXIT_VMM_ERROR;
			vm_destroy(vm);
			break;
		}
		bool reset = atomic_load(&vm->end) == VM_END_RESET;
		int stop = atomic_load(&operator_stop);
		if (reset && stop) /* the guest reset as the operator stopped it */
			log_info("guest reset (%s) after the operator's stop: not rebooting",
				 vm->end_reason);
		else if (reset && !c->no_reboot && jail_confines(&c->jail))
			log_warn("guest reset (%s): msivm runs jailed (--user/--chroot) and cannot "
				 "build the VM again; stopping", vm->end_reason);
		else if (reset && !c->no_reboot) {
			log_info("guest reset (%s): reboot %u", vm->end_reason, boot);
			if (c->stats)
				print_boot_stats(vm, boot);
			vm_destroy(vm);
			keep_console_output(&c->vm);
			continue;
		}
		status = reset && stop ? stop - 1 : exit_status_of(vm);
		if (vm->end_reason && status != 0 && status != EXIT_VMM_ERROR)
			log_info("guest stopped: %s", vm->end_reason);
		if (c->stats)
			print_boot_stats(vm, boot);
		if (stats_out && vm_stats_write_json(vm, stats_out, c->stats_json, &err))
			fprintf(stderr, "msivm: %s\n", err.msg);
		if (status == EXIT_VMM_ERROR) /* the log may be a file: say it where the operator looks */
			error_set(&err, -EIO, "msivm failed while the guest ran: %s (the log says more)",
				  vm->end_reason ? vm->end_reason : "see the log");
		vm_destroy(vm);
		break;
	}
	api_server_stop(api_srv);
	free(config_json);
	if (status == EXIT_MSIVM_ERROR || status == EXIT_VMM_ERROR)
		fprintf(stderr, "msivm: %s\n", err.msg);
	free(vm);
	if (c->vm.serial_fd > 2)
		close(c->vm.serial_fd);
	if (tty_raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
	if (stats_out && !stats_stdout)
		fclose(stats_out);
	if (log_fd >= 0)
		close(log_fd);
	return status;
}

static int cmd_run(int argc, char **argv)
{
	struct run_config *c = malloc(sizeof(*c));
	struct error err;
	enum config_action action;
	if (!c) {
		fprintf(stderr, "msivm: out of memory\n");
		return EXIT_MSIVM_ERROR;
	}
	run_config_init(c);
	int status;
	if (config_cli_parse(argc, argv, c, &action, &err)) {
		fprintf(stderr, "msivm: %s\n", err.msg);
		status = EXIT_MSIVM_ERROR;
	} else if (action == CONFIG_HELP) {
		fputs(config_usage(), stdout);
		status = 0;
	} else if (action == CONFIG_PRINT) {
		status = print_config(c);
	} else {
		log_set_level(c->log_level);
		status = run_vm(c);
	}
	run_config_free(c);
	free(c);
	return status;
}

/* msivm host [--kvm-device PATH]: "KIND: what backs the KVM device, or why there is none" (KIND:
 * hardware, pvm or none; the harnesses match it). Status 0 whatever the kind, 125 on bad usage. */
static int cmd_host(int argc, char **argv)
{
	const char *dev = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--kvm-device") && i + 1 < argc) {
			dev = argv[++i];
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			puts("usage: msivm host [--kvm-device PATH]\n"
			     "Prints which KVM this host offers: 'hardware: ...' (kvm_intel or kvm_amd), "
			     "'pvm: ...'\n(kvm_pvm: the probe runs, a stock Linux kernel does not) or "
			     "'none: why' (guests run\nonly in a nested host: make check and msivm lab "
			     "start one).");
			return 0;
		} else {
			fprintf(stderr, "msivm host: unknown argument '%s' (see msivm host --help)\n", argv[i]);
			return EXIT_MSIVM_ERROR;
		}
	}
	struct kvm_host h;
	kvm_host_probe(dev, &h);
	printf("%s: %s\n", kvm_host_kind_name(h.kind), h.why);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(config_usage(), stderr);
		return EXIT_MSIVM_ERROR;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(config_usage(), stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("msivm %s%s\n", MSIVM_VERSION,
		       seccomp_default_mode() == SECCOMP_OFF ? " (sanitizer build: --seccomp off by default)"
							     : "");
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "lab"))
		return lab_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "remote"))
		return api_client_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "host"))
		return cmd_host(argc - 1, argv + 1);
	fprintf(stderr, "msivm: unknown command '%s' (see msivm --help)\n", cmd);
	return EXIT_MSIVM_ERROR;
}
