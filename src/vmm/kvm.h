/* KVM device: open /dev/kvm, check the API version and the capabilities msivm relies on. */
#ifndef MSIVM_VMM_KVM_H
#define MSIVM_VMM_KVM_H

#include <stdbool.h>

#include "util/error.h"

/* Opens the KVM device at `path` (normally /dev/kvm) and checks the API
 * version and every required capability. Returns the fd, or -errno with a
 * message naming the problem: a missing device, no permission, something
 * that is not KVM, or the first missing capability. */
int kvm_open(const char *path, struct error *err);

/* Checks the capabilities a VM needs beyond the device's (IRQCHIP, IRQFD...).
 * `pit` adds PIT2. Returns 0 or -ENOTSUP naming the first missing one. */
int kvm_check_vm_caps(int vm_fd, bool pit, struct error *err);

/* KVM_CHECK_EXTENSION on `fd` (device or VM); <= 0 means absent. */
int kvm_cap(int fd, long cap);

#endif
