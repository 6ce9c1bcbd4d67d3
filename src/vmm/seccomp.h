/* System call filters: one allow-list per thread kind, installed before the guest runs. */
#ifndef MSIVM_VMM_SECCOMP_H
#define MSIVM_VMM_SECCOMP_H

#include "util/error.h"

enum seccomp_mode {
	SECCOMP_ON,    /* a forbidden call stops msivm (SIGSYS) with a line naming it */
	SECCOMP_LOG,   /* forbidden calls are allowed and logged by the kernel (audit) */
	SECCOMP_OFF,
};

/* The thread kinds. Every thread inherits the process baseline (installed
 * by the main thread, which also builds the VM again on a guest reboot) and
 * adds its own, narrower list. */
enum seccomp_kind {
	SECCOMP_BASELINE, /* whole process: setup and runtime, no exec, fork, ptrace, mount ... */
	SECCOMP_VCPU,     /* KVM_RUN loop and the devices reached by exits */
	SECCOMP_IO,       /* event loop: kicks, backends, timers, interrupts */
	SECCOMP_CONTROL,  /* signals */
	SECCOMP_API,      /* the API socket: accept, HTTP, VM controls */
	SECCOMP_FC_API,   /* Firecracker mode's API socket: started before the VM (so without the
			   * baseline), it also opens what PATCH /drives, the logger and metrics
			   * name and builds a disk's backend as the main thread does */
};
#define SECCOMP_NKINDS (SECCOMP_FC_API + 1)

/* Parses "on", "log" or "off". Returns 0 or -EINVAL. */
int seccomp_mode_parse(const char *s, enum seccomp_mode *out);

/* The default: on, except in a sanitizer build (ASan's leak check at exit
 * needs ptrace and clone, which no filter allows). */
enum seccomp_mode seccomp_default_mode(void);

/* Installs the SIGSYS handler that names a forbidden call and stops the
 * process with SIGSYS (status 159). Call once in main, before any thread
 * exists. Returns 0 or -errno. */
int seccomp_signals_init(void);

/* Adds the filter of `kind` to the calling thread (threads it creates later
 * inherit it). `name` names the thread in the SIGSYS line. A no-op with
 * SECCOMP_OFF. Returns 0 or -errno with a message. */
int seccomp_install(enum seccomp_kind kind, enum seccomp_mode mode, const char *name,
		    struct error *err);

#endif
