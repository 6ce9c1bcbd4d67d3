/* Interrupt vector: one eventfd bound by irqfd to an MSI GSI; the device -> guest hop without an exit. */
#ifndef MSIVM_IRQ_IRQ_VEC_H
#define MSIVM_IRQ_IRQ_VEC_H

#include <stdbool.h>
#include <stdint.h>

#include "irq/gsi_routes.h"

/* How a bound vector reaches KVM. */
enum irq_path {
	IRQ_PATH_IRQFD,       /* eventfd -> irqfd -> route: KVM injects, msivm makes no syscall but a write */
	IRQ_PATH_SIGNAL_MSI,  /* KVM_SIGNAL_MSI ioctl from the signalling thread, no route or irqfd */
};

struct irq_vec {
	struct gsi_routes *routes;
	enum irq_path path;
	int efd;           /* eventfd the device writes */
	uint32_t gsi;
	bool bound;        /* deliverable: route + irqfd (irqfd path) or message kept (SIGNAL_MSI path) */
	uint32_t addr_lo, addr_hi, data;
};

/* Allocates a GSI and an eventfd; the vector delivers through its irqfd.
 * Returns 0 or -errno. */
int irq_vec_init(struct irq_vec *v, struct gsi_routes *routes);

/* Picks the delivery mechanism; call while the vector is unbound. */
void irq_vec_set_path(struct irq_vec *v, enum irq_path path);

/* Parses "irqfd" or "signal-msi". Returns 0 or -EINVAL. */
int irq_path_parse(const char *s, enum irq_path *out);
const char *irq_path_name(enum irq_path p);
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

/* For a vector without its irqfd (masked) whose eventfd another writer signals (VFIO): reads
 * what that writer left there. Returns true if it had signalled at least once; false when
 * nothing waited, or the vector holds its irqfd (the count is KVM's then). */
bool irq_vec_take_unbound(struct irq_vec *v);

#endif
