/* main: command -> configuration (src/config) -> run (src/run) -> exit status; the only place that exits. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/api.h"
#include "config/config_cli.h"
#include "config/config_print.h"
#include "fc/fc.h"
#include "run/run_vm.h"
#include "util/log.h"
#include "vmm/kvm_host.h"
#include "vmm/seccomp.h"

/* Exit statuses of msivm itself; a guest's debug-exit byte V is returned as V. */
#define EXIT_MSIVM_ERROR 125 /* bad usage or host problem: nothing ran */
#define EXIT_GUEST_RESET 123 /* the guest reset (rebooted) and --no-reboot was given */
#define EXIT_GUEST_CRASH 126 /* the guest could not go on (KVM emulation or VM-entry failure) */
#define EXIT_VMM_ERROR 122   /* msivm itself failed while the guest ran (KVM_RUN, a thread, the loop) */

/* The exit status of a run's outcome (README and man page, EXIT STATUS). */
static int exit_status_of(struct run_outcome out)
{
	switch (out.end) {
	case RUN_NOT_STARTED:
		return EXIT_MSIVM_ERROR;
	case RUN_VMM_FAILED:
		return EXIT_VMM_ERROR;
	case RUN_POWEROFF:
		return 0;
	case RUN_GUEST_EXIT:
	case RUN_STOPPED:
		return out.value;
	case RUN_RESET:
		return EXIT_GUEST_RESET;
	case RUN_CRASHED:
		break;
	}
	return EXIT_GUEST_CRASH;
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
		config_usage_print(stdout);
		status = 0;
	} else if (action == CONFIG_PRINT) {
		status = print_config(c);
	} else {
		log_set_level(c->log_level);
		status = exit_status_of(run_vm(c));
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
	return kvm_host_report(dev);
}

/* `msivm lab ...`: the lab is its own program, msivm-lab beside this binary (built and installed
 * with it), so that the VMM carries none of its code. Returns only when it cannot be started. */
static int cmd_lab(char **argv)
{
	char self[4096], lab[4200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "msivm lab: cannot find msivm's own binary: %s\n", strerror(errno));
		return EXIT_MSIVM_ERROR;
	}
	self[n] = 0;
	snprintf(lab, sizeof(lab), "%s/msivm-lab", dirname(self));
	execv(lab, argv);
	fprintf(stderr, "msivm lab: cannot run the lab program '%s': %s (make builds it beside msivm; "
		"make install installs both)\n", lab, strerror(errno));
	return EXIT_MSIVM_ERROR;
}

/* The name msivm was started under, without its directory. */
static const char *program_name(const char *argv0)
{
	const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
	return slash ? slash + 1 : argv0 ? argv0 : "";
}

int main(int argc, char **argv)
{
	/* Started as "firecracker" (a symlink an engine's path= points at, or the copy Firecracker's
	 * jailer makes under the name it was given, as "firecracker-v1.10.0"): Firecracker's mode. */
	if (!strncmp(program_name(argv[0]), "firecracker", strlen("firecracker")))
		return fc_main(argc, argv, exit_status_of);
	if (argc < 2) {
		config_usage_print(stderr);
		return EXIT_MSIVM_ERROR;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		config_usage_print(stdout);
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
		return cmd_lab(argv + 1);
	if (!strcmp(cmd, "remote"))
		return api_client_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "firecracker"))
		return fc_main(argc - 1, argv + 1, exit_status_of);
	if (!strcmp(cmd, "host"))
		return cmd_host(argc - 1, argv + 1);
	fprintf(stderr, "msivm: unknown command '%s' (see msivm --help)\n", cmd);
	return EXIT_MSIVM_ERROR;
}
