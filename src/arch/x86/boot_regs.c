/* Boot registers: PVH and multiboot 32-bit protected-mode and Linux 64-bit long-mode entry state for the boot vCPU. */
#include "arch/x86/boot_regs.h"

#include <errno.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>

#include "arch/x86/layout.h"
#include "arch/x86/longmode.h"
#include "arch/x86/multiboot.h"

#define CR0_PE 0x1ULL
#define CR0_ET 0x10ULL
#define CR0_PG 0x80000000ULL
#define CR4_PAE 0x20ULL
#define EFER_LME 0x100ULL
#define EFER_LMA 0x400ULL
#define SEG_TYPE_CODE_RX_ACCESSED 0xb
#define SEG_TYPE_DATA_RW_ACCESSED 0x3
#define SEG_TYPE_TSS32_BUSY       0xb
#define SEG_TYPE_TSS64_BUSY       0xb

static struct kvm_segment flat_segment(uint16_t selector, uint8_t type)
{
	return (struct kvm_segment){
		.base = 0, .limit = 0xffffffff, .selector = selector, .type = type,
		.present = 1, .dpl = 0, .db = 1, .s = 1, .l = 0, .g = 1,
	};
}

/* 32-bit protected mode, paging off, flat segments, IF clear; %eax, %ebx given. */
static int set_protected_entry(int vcpu_fd, uint32_t entry, uint32_t eax, uint32_t ebx,
			       struct error *err)
{
	struct kvm_sregs sregs;
	if (ioctl(vcpu_fd, KVM_GET_SREGS, &sregs))
		return error_set(err, -errno, "KVM_GET_SREGS failed: %s", strerror(errno));

	sregs.cs = flat_segment(0x8, SEG_TYPE_CODE_RX_ACCESSED);
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss =
		flat_segment(0x10, SEG_TYPE_DATA_RW_ACCESSED);
	sregs.tr = (struct kvm_segment){
		.base = 0, .limit = 0x67, .selector = 0x18, .type = SEG_TYPE_TSS32_BUSY,
		.present = 1, .s = 0,
	};
	sregs.cr0 = CR0_PE | CR0_ET;
	sregs.cr4 = 0;
	sregs.efer = 0;
	if (ioctl(vcpu_fd, KVM_SET_SREGS, &sregs))
		return error_set(err, -errno, "KVM_SET_SREGS failed: %s", strerror(errno));

	struct kvm_regs regs;
	memset(&regs, 0, sizeof(regs));
	regs.rip = entry;
	regs.rax = eax;
	regs.rbx = ebx;
	regs.rflags = 0x2; /* reserved bit 1; IF and VM clear */
	if (ioctl(vcpu_fd, KVM_SET_REGS, &regs))
		return error_set(err, -errno, "KVM_SET_REGS failed: %s", strerror(errno));
	return 0;
}

int x86_set_pvh_entry(int vcpu_fd, uint32_t entry, uint32_t start_info, struct error *err)
{
	return set_protected_entry(vcpu_fd, entry, 0, start_info, err);
}

int x86_set_multiboot_entry(int vcpu_fd, uint32_t entry, uint32_t info, struct error *err)
{
	return set_protected_entry(vcpu_fd, entry, MULTIBOOT_BOOT_MAGIC, info, err);
}

int x86_set_long_mode_entry(int vcpu_fd, uint64_t entry, uint64_t rsi, struct error *err)
{
	struct kvm_sregs sregs;
	if (ioctl(vcpu_fd, KVM_GET_SREGS, &sregs))
		return error_set(err, -errno, "KVM_GET_SREGS failed: %s", strerror(errno));

	sregs.cs = flat_segment(LM_SEL_CODE64, SEG_TYPE_CODE_RX_ACCESSED);
	sregs.cs.l = 1;
	sregs.cs.db = 0; /* required with L=1 */
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss =
		flat_segment(LM_SEL_DATA, SEG_TYPE_DATA_RW_ACCESSED);
	sregs.tr = (struct kvm_segment){
		.base = 0, .limit = 0x67, .selector = LM_SEL_TSS, .type = SEG_TYPE_TSS64_BUSY,
		.present = 1, .s = 0,
	};
	sregs.gdt = (struct kvm_dtable){ .base = BOOT_GDT, .limit = LM_GDT_BYTES - 1 };
	sregs.idt = (struct kvm_dtable){ .base = 0, .limit = 0 };
	sregs.cr0 = CR0_PE | CR0_ET | CR0_PG;
	sregs.cr3 = BOOT_PML4;
	sregs.cr4 = CR4_PAE;
	sregs.efer = EFER_LME | EFER_LMA;
	if (ioctl(vcpu_fd, KVM_SET_SREGS, &sregs))
		return error_set(err, -errno, "KVM_SET_SREGS (long mode) failed: %s", strerror(errno));

	struct kvm_regs regs;
	memset(&regs, 0, sizeof(regs));
	regs.rip = entry;
	regs.rsi = rsi;
	regs.rflags = 0x2; /* reserved bit 1; IF clear */
	if (ioctl(vcpu_fd, KVM_SET_REGS, &regs))
		return error_set(err, -errno, "KVM_SET_REGS failed: %s", strerror(errno));
	return 0;
}
