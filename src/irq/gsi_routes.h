/* GSI routes: the VM's KVM routing table (IOAPIC/PIC pins plus MSI messages), updated in batches. */
#ifndef MSIVM_IRQ_GSI_ROUTES_H
#define MSIVM_IRQ_GSI_ROUTES_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define GSI_IOAPIC_PINS 24
#define GSI_MSI_FIRST   GSI_IOAPIC_PINS
#define GSI_MSI_MAX     1024

struct gsi_msi_route {
	bool present;
	uint32_t addr_lo, addr_hi, data;
};

struct gsi_routes {
	pthread_mutex_t lock;
	int vm_fd;                     /* -1: tests, commits only count */
	uint32_t next_gsi;
	struct gsi_msi_route msi[GSI_MSI_MAX];
	bool dirty;                    /* the table differs from what KVM has */
	uint64_t commits;              /* KVM_SET_GSI_ROUTING calls made */
	uint64_t unchanged;            /* updates skipped because nothing changed */
	void *buf;                     /* struct kvm_irq_routing, sized for the maximum */
};

/* Returns 0 or -ENOMEM. KVM keeps its default routes until the first commit. */
int gsi_routes_init(struct gsi_routes *r, int vm_fd);
void gsi_routes_destroy(struct gsi_routes *r);

/* Allocates an MSI GSI (>= 24). Returns it, or -ENOSPC. */
int gsi_routes_alloc(struct gsi_routes *r);

/* Points `gsi` at an MSI message. Marks the table dirty only if the route
 * changes; an identical update is counted in `unchanged` and costs nothing. */
void gsi_routes_set_msi(struct gsi_routes *r, uint32_t gsi, uint32_t addr_lo, uint32_t addr_hi,
			uint32_t data);

/* Removes `gsi`'s route (a masked vector holds none). */
void gsi_routes_clear(struct gsi_routes *r, uint32_t gsi);

/* Sends the table to KVM if it changed since the last commit: one
 * KVM_SET_GSI_ROUTING for any number of updates. Returns 0 or -errno. */
int gsi_routes_commit(struct gsi_routes *r);

#endif
