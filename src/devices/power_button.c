/* Power button: IOAPIC pin state of the GED (KVM_GET_IRQCHIP) and a press as one edge (KVM_IRQ_LINE). */
#include "devices/power_button.h"

#include <errno.h>
#include <linux/kvm.h>
#include <sys/ioctl.h>

#include "irq/irqchip.h"

int power_button_listening(int vm_fd)
{
	struct kvm_irqchip chip = { .chip_id = KVM_IRQCHIP_IOAPIC };
	if (ioctl(vm_fd, KVM_GET_IRQCHIP, &chip))
		return -errno;
	return chip.chip.ioapic.redirtbl[ACPI_GED_GSI].fields.mask ? 0 : 1;
}

int power_button_press(int vm_fd)
{
	int ret = irqchip_line(vm_fd, ACPI_GED_GSI, 1);
	return ret ? ret : irqchip_line(vm_fd, ACPI_GED_GSI, 0);
}
