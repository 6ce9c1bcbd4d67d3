/* Kernel boot: pick the entry protocol for an image and prepare RAM and the boot vCPU. */
#ifndef MSIVM_VMM_BOOT_H
#define MSIVM_VMM_BOOT_H

#include "util/error.h"
#include "vmm/vm.h"

/* What to boot. */
struct x86_boot_spec {
	const char *kernel;   /* an ELF with a PVH entry note, a multiboot v1 ELF32, a bzImage */
	const char *cmdline;  /* NULL: empty */
	const char *initrd;   /* initial ramdisk file; NULL: none */
};

/* Loads the kernel (and initrd) into `vm`, writes the ACPI tables, the boot
 * data of the kernel's entry protocol and puts vCPU 0 at its entry: an ELF
 * with a PVH note enters through PVH (32-bit, hvm_start_info, initrd as
 * module 0), a multiboot v1 image through Multiboot (32-bit, multiboot_info,
 * initrd as module 0, ACPI tables written but not named), a bzImage through the Linux 64-bit boot protocol (long mode,
 * zero page). Both are given the RSDP. Returns 0, or -errno with a message
 * naming the file and the problem. */
int x86_boot(struct vm *vm, const struct x86_boot_spec *spec, struct error *err);

/* True when `path` is a Linux bzImage (a "HdrS" setup header), false otherwise or unreadable. */
bool x86_kernel_is_bzimage(const char *path);

#endif
