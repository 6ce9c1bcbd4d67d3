/* Seccomp rules: each thread kind's allow-list as libseccomp rules, the source the build compiles to BPF (tools/seccomp_gen.c). */
#ifndef MSIVM_VMM_SECCOMP_RULES_H
#define MSIVM_VMM_SECCOMP_RULES_H

#include <seccomp.h>

#include "vmm/seccomp.h"

/* Adds the rules of `kind` (what that thread may call; everything else takes the context's
 * default action) to `ctx`. Returns 0 or libseccomp's -errno. */
int seccomp_rules_build(scmp_filter_ctx ctx, enum seccomp_kind kind);

#endif
