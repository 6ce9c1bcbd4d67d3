/* Seccomp filters compiled to BPF at build time (build/gen/seccomp_progs.c, from src/vmm/seccomp_rules.c). */
#ifndef MSIVM_VMM_SECCOMP_PROGS_H
#define MSIVM_VMM_SECCOMP_PROGS_H

#include <linux/filter.h>

#include "vmm/seccomp.h"

/* One thread kind's filter in one mode: `len` BPF instructions. */
struct seccomp_prog {
	const struct sock_filter *insns;
	unsigned short len;
};

/* [kind][0]: a forbidden call traps (SIGSYS; --seccomp on); [kind][1]: it is allowed and
 * logged (--seccomp log). What libseccomp made of seccomp_rules_build when msivm was built. */
extern const struct seccomp_prog seccomp_progs[SECCOMP_NKINDS][2];

#endif
