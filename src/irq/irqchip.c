/* Irqchip: in-kernel interrupt controller creation and level-triggered GSI lines. */
#include "irq/irqchip.h"

#include <errno.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/ioctl.h>

#include "util/log.h"

int irqchip_create(int vm_fd, struct error *err)
{
	if (ioctl(vm_fd, KVM_CREATE_IRQCHIP, 0))
		return error_set(err, -errno, "KVM_CREATE_IRQCHIP failed: %s", strerror(errno));
	return 0;
}

int irqchip_pic_bios_bases(int vm_fd, struct error *err)
{
	static const uint8_t base[] = { [KVM_IRQCHIP_PIC_MASTER] = 0x08, [KVM_IRQCHIP_PIC_SLAVE] = 0x70 };
	for (uint32_t id = KVM_IRQCHIP_PIC_MASTER; id <= KVM_IRQCHIP_PIC_SLAVE; id++) {
		struct kvm_irqchip chip = { .chip_id = id };
		if (ioctl(vm_fd, KVM_GET_IRQCHIP, &chip))
			return error_set(err, -errno, "KVM_GET_IRQCHIP (8259 %u) failed: %s", id,
					 strerror(errno));
		chip.chip.pic.irq_base = base[id];
		chip.chip.pic.init_state = 0; /* ICW1-4 done */
		chip.chip.pic.init4 = 1;
		if (ioctl(vm_fd, KVM_SET_IRQCHIP, &chip))
			return error_set(err, -errno, "KVM_SET_IRQCHIP (8259 %u) failed: %s", id,
					 strerror(errno));
	}
	return 0;
}

int irqchip_line(int vm_fd, uint32_t gsi, int level)
{
	struct kvm_irq_level l = { .irq = gsi, .level = (uint32_t)level };
	return ioctl(vm_fd, KVM_IRQ_LINE, &l) ? -errno : 0;
}

void irqchip_set_level(void *opaque, uint32_t gsi, int level)
{
	int ret = irqchip_line(*(const int *)opaque, gsi, level);
	if (ret)
		log_warn("irqchip: cannot set GSI %u to %d: %s", gsi, level, strerror(-ret));
}
