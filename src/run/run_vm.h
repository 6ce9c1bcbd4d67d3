/* msivm run: the host ends (files, sockets, terminal), the API, and the boot loop of one VM, ending in an outcome main maps to an exit status. */
#ifndef MSIVM_RUN_RUN_VM_H
#define MSIVM_RUN_RUN_VM_H

#include "config/run_config.h"

/* How a run ended. */
enum run_end {
	RUN_NOT_STARTED,  /* a host problem before the guest ran (a line on stderr says which) */
	RUN_VMM_FAILED,   /* msivm itself failed while the guest ran (a line on stderr says which) */
	RUN_POWEROFF,     /* the guest powered off (ACPI S5) */
	RUN_GUEST_EXIT,   /* the guest wrote `value` to the debug-exit port */
	RUN_STOPPED,      /* the operator stopped it: `value` is 128 + the signal number */
	RUN_RESET,        /* the guest reset and could not or should not reboot (--no-reboot, jail) */
	RUN_CRASHED,      /* the guest could not go on (KVM emulation or VM-entry failure) */
};

struct run_outcome {
	enum run_end end;
	int value;        /* RUN_GUEST_EXIT: the byte; RUN_STOPPED: 128 + signal */
};

/*
 * Runs the VM c describes until it ends, building it again after each guest reset unless
 * --no-reboot, a jail or the operator's stop says otherwise. Opens and closes what the run
 * needs on the host: --stats-json and --log-file, the serial console (--serial), console
 * sockets and input files (kept across reboots), the API socket. Prints --stats per boot.
 * Needs c finished (run_config_finish) and the log level set.
 */
struct run_outcome run_vm(struct run_config *c);

struct api_target;
struct api_server;

/* run_vm with an API server the caller started and keeps (Firecracker mode: its socket serves
 * before the VM exists and after it ends): `api` gets each boot's VM, the configuration JSON
 * and the dump directory for the run; the server's thread is started at the first boot if it
 * is not running yet. c->api_socket is not opened again, and c->jail's inherited descriptors
 * are the caller's to note (jail_note_inherited, before it opened anything). With api NULL it
 * is run_vm. */
struct run_outcome run_vm_served(struct run_config *c, struct api_target *api,
				 struct api_server *api_srv);

#endif
