/* Irqchip: the in-kernel LAPIC/IOAPIC/PIC and legacy GSI levels (KVM_IRQ_LINE). */
#ifndef MSIVM_IRQ_IRQCHIP_H
#define MSIVM_IRQ_IRQCHIP_H

#include <stdint.h>

#include "util/error.h"

/* Creates the in-kernel irqchip. Must run before any memory slot or vCPU
 * exists (creating it after the slots costs ~12 ms here). Returns 0 or -errno. */
int irqchip_create(int vm_fd, struct error *err);

/* Leaves the in-kernel 8259s as a PC BIOS does before it hands over to a boot loader: initialized
 * (ICW1-4), master's vectors at 0x08-0x0f, slave's at 0x70-0x77, mask as KVM created it (a kernel
 * that takes interrupts through the PICs before it programs them, e.g. kvm-unit-tests' realmode,
 * finds IRQ n at the BIOS's vector; KVM creates them with base 0, IRQ 11 on vector 3).
 * Returns 0 or -errno with a message. */
int irqchip_pic_bios_bases(int vm_fd, struct error *err);

/* Sets GSI `gsi` of the VM `vm_fd` to `level` (KVM_IRQ_LINE). Returns 0 or -errno. */
int irqchip_line(int vm_fd, uint32_t gsi, int level);

/* irq_line hook: drives GSI `gsi` of the VM whose fd is *(int *)opaque; a failure is logged. */
void irqchip_set_level(void *opaque, uint32_t gsi, int level);

#endif
