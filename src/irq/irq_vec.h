/* Interrupt vector: one eventfd bound by irqfd to an MSI GSI; the device -> guest hop without an exit. */
#ifndef MSIVM_IRQ_IRQ_VEC_H
#define MSIVM_IRQ_IRQ_VEC_H

#include <stdbool.h>
#include <stdint.h>

#include "irq/gsi_routes.h"

struct irq_vec {
	struct gsi_routes *routes;
	int efd;           /* eventfd the device writes */
	uint32_t gsi;
	bool bound;        /* route present and irqfd assigned */
};

/* Allocates a GSI and an eventfd. Returns 0 or -errno. */
int irq_vec_init(struct irq_vec *v, struct gsi_routes *routes);
void irq_vec_destroy(struct irq_vec *v);

/* Gives the vector a route to (addr, data) and an irqfd (assigned once,
 * on the first bind). The route reaches KVM at the next commit. Returns 0
 * or -errno. */
int irq_vec_bind(struct irq_vec *v, uint32_t addr_lo, uint32_t addr_hi, uint32_t data);

/* Drops the route and the irqfd: a masked vector holds neither. */
void irq_vec_unbind(struct irq_vec *v);

/* Commits pending route changes (batched: one ioctl for all of them) and
 * signals the eventfd, so KVM injects the MSI into the LAPIC. The vector
 * must be bound. Returns 0 or -errno. */
int irq_vec_fire(struct irq_vec *v);

#endif
