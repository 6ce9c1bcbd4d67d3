/* Kernel boot: pick the entry protocol for an image and prepare RAM and the boot vCPU. */
#ifndef MSIVM_ARCH_X86_BOOT_H
#define MSIVM_ARCH_X86_BOOT_H

#include "util/error.h"
#include "vmm/vm.h"

/* Loads the kernel at `path` into `vm` with `cmdline` (NULL: empty) and puts
 * vCPU 0 at its entry. Today: ELF images with a PVH note. Returns 0, or
 * -errno with a message naming the file and the problem. */
int x86_boot_kernel(struct vm *vm, const char *path, const char *cmdline, struct error *err);

#endif
