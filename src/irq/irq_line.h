/* Interrupt line: how a legacy device (UART) drives one GSI without knowing KVM. */
#ifndef MSIVM_IRQ_IRQ_LINE_H
#define MSIVM_IRQ_IRQ_LINE_H

#include <stdint.h>

/* `set_level(opaque, gsi, level)` asserts (1) or deasserts (0) the line.
 * A NULL hook means the device is not wired to an interrupt controller. */
struct irq_line {
	void (*set_level)(void *opaque, uint32_t gsi, int level);
	void *opaque;
	uint32_t gsi;
};

static inline void irq_line_set(const struct irq_line *l, int level)
{
	if (l->set_level)
		l->set_level(l->opaque, l->gsi, level);
}

#endif
