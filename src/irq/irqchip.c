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

void irqchip_set_level(void *opaque, uint32_t gsi, int level)
{
	int vm_fd = *(const int *)opaque;
	struct kvm_irq_level l = { .irq = gsi, .level = (uint32_t)level };
	if (ioctl(vm_fd, KVM_IRQ_LINE, &l))
		log_warn("irqchip: cannot set GSI %u to %d: %s", gsi, level, strerror(errno));
}
