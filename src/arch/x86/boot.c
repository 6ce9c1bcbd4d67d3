/* Kernel boot: image file -> PVH loader -> start_info -> boot vCPU registers. */
#include "arch/x86/boot.h"

#include <stdio.h>

#include "arch/x86/boot_regs.h"
#include "arch/x86/layout.h"
#include "arch/x86/pvh.h"
#include "util/file.h"
#include "vmm/vcpu.h"

int x86_boot_kernel(struct vm *vm, const char *path, const char *cmdline, struct error *err)
{
	struct mapped_file f;
	int ret = file_map(path, "kernel", &f, err);
	if (ret)
		return ret;
	struct pvh_image img;
	struct error why;
	ret = pvh_load_elf(&vm->mem, f.data, f.size, &img, &why);
	file_unmap(&f);
	if (ret)
		return error_set(err, ret, "kernel '%s': %s", path, why.msg);
	ret = pvh_write_start_info(&vm->mem, cmdline, err);
	if (ret)
		return ret;
	return x86_set_pvh_entry(vm->vcpus[0].fd, img.entry, (uint32_t)PVH_START_INFO, err);
}
