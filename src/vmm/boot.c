/* Kernel boot: image file -> format dispatch (PVH ELF, multiboot v1 or bzImage) -> ACPI, boot data -> boot vCPU registers. */
#include "vmm/boot.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "arch/x86/acpi.h"
#include "arch/x86/boot_regs.h"
#include "arch/x86/bzimage.h"
#include "arch/x86/initrd.h"
#include "arch/x86/layout.h"
#include "arch/x86/multiboot.h"
#include "arch/x86/pvh.h"
#include "arch/x86/reset_stub.h"
#include "devices/pm_timer.h"
#include "irq/irqchip.h"
#include "util/file.h"
#include "vmm/vcpu.h"

static int is_elf(const struct mapped_file *f)
{
	return f->size >= SELFMAG && memcmp(f->data, ELFMAG, SELFMAG) == 0;
}

static int is_elf64(const struct mapped_file *f)
{
	return is_elf(f) && f->size > EI_CLASS && f->data[EI_CLASS] == ELFCLASS64;
}

static int is_bzimage(const struct mapped_file *f)
{
	return f->size >= 0x206 && memcmp(f->data + 0x202, "HdrS", 4) == 0;
}

bool x86_kernel_is_bzimage(const char *path)
{
	struct mapped_file k;
	struct error ignored;
	if (!path || file_map(path, "kernel", &k, &ignored))
		return false;
	bool bz = is_bzimage(&k);
	file_unmap(&k);
	return bz;
}

static int boot_pvh(struct vm *vm, const struct x86_boot_spec *s, const struct mapped_file *k,
		    const struct mapped_file *rd, uint64_t rsdp, struct error *err)
{
	struct pvh_image img;
	struct error why;
	int ret = pvh_load_elf(&vm->mem, k->data, k->size, &img, &why);
	if (ret)
		return error_set(err, ret, "kernel '%s': %s", s->kernel, why.msg);
	uint64_t rd_addr = 0;
	if (rd->data) {
		ret = initrd_place(&vm->mem, rd->size, img.load_end, UINT64_MAX, &rd_addr, &why);
		if (ret)
			return error_set(err, ret, "initrd '%s': %s", s->initrd, why.msg);
		memcpy(gm_ptr(&vm->mem, rd_addr, rd->size), rd->data, rd->size);
	}
	ret = pvh_write_start_info(&vm->mem, s->cmdline, err);
	if (!ret)
		ret = pvh_set_boot_extras(&vm->mem, rsdp, rd_addr, rd->data ? rd->size : 0, err);
	if (ret)
		return ret;
	return x86_set_pvh_entry(vm->vcpus[0].fd, img.entry, (uint32_t)PVH_START_INFO, err);
}

static int boot_multiboot(struct vm *vm, const struct x86_boot_spec *s,
			  const struct mapped_file *k, const struct mapped_file *rd,
			  struct error *err)
{
	struct multiboot_args args = {
		.name = s->kernel, .cmdline = s->cmdline, .module = rd->data,
		.module_size = rd->data ? rd->size : 0,
	};
	struct multiboot_loaded out;
	struct error why;
	int ret = multiboot_load(&vm->mem, k->data, k->size, &args, &out, &why);
	if (ret)
		return error_set(err, ret, "multiboot kernel '%s': %s", s->kernel, why.msg);
	/* A multiboot kernel expects what a BIOS-booted loader leaves, the PICs included. */
	if ((ret = irqchip_pic_bios_bases(vm->vm_fd, err)))
		return ret;
	return x86_set_multiboot_entry(vm->vcpus[0].fd, out.entry, (uint32_t)MB_INFO_ADDR, err);
}

static int boot_bzimage(struct vm *vm, const struct x86_boot_spec *s, const struct mapped_file *k,
			const struct mapped_file *rd, uint64_t rsdp, struct error *err)
{
	struct bzimage_args args = {
		.cmdline = s->cmdline, .initrd = rd->data, .initrd_size = rd->data ? rd->size : 0,
		.rsdp = rsdp,
	};
	struct bzimage_loaded out;
	struct error why;
	int ret = bzimage_load(&vm->mem, k->data, k->size, &args, &out, &why);
	if (ret)
		return error_set(err, ret, "kernel '%s'%s%s%s: %s", s->kernel,
				 s->initrd ? " with initrd '" : "", s->initrd ? s->initrd : "",
				 s->initrd ? "'" : "", why.msg);
	return x86_set_long_mode_entry(vm->vcpus[0].fd, out.entry, out.zero_page, err);
}

int x86_boot(struct vm *vm, const struct x86_boot_spec *spec, struct error *err)
{
	struct mapped_file k, rd = { 0 };
	int ret = file_map(spec->kernel, "kernel", &k, err);
	if (ret)
		return ret;
	if (spec->initrd && (ret = file_map(spec->initrd, "initrd", &rd, err))) {
		file_unmap(&k);
		return ret;
	}
	/* The tables first: a kernel may not load over them (the PVH loader
	 * refuses such segments; a bzImage loads at 1 MiB). */
	ret = acpi_build(&vm->mem, vm->ncpus, vm->cfg.testdev ? PM_TIMER_PORT : 0, err);
	uint64_t rsdp = ret >= 0 ? (uint64_t)ret : 0;
	if (ret >= 0)
		ret = x86_write_reset_stub(&vm->mem, err);
	if (ret == 0) {
		uint32_t mb_flags;
		if (is_elf64(&k))
			ret = boot_pvh(vm, spec, &k, &rd, rsdp, err);
		else if (multiboot_find(k.data, k.size, &mb_flags))
			ret = boot_multiboot(vm, spec, &k, &rd, err);
		else if (is_elf(&k))
			ret = boot_pvh(vm, spec, &k, &rd, rsdp, err);
		else if (is_bzimage(&k))
			ret = boot_bzimage(vm, spec, &k, &rd, rsdp, err);
		else
			ret = error_set(err, -ENOEXEC, "kernel '%s': not an ELF file, a multiboot kernel or a Linux "
					"bzImage (no ELF magic, no multiboot header, no \"HdrS\" setup "
					"header)", spec->kernel);
	}
	if (rd.data)
		file_unmap(&rd);
	file_unmap(&k);
	return ret;
}
