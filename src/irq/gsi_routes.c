/* GSI routes: keeps KVM's default pin routes, adds MSI routes, commits lazily and only on change. */
#include "irq/gsi_routes.h"

#include <errno.h>
#include <linux/kvm.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "util/log.h"

#define MAX_ENTRIES (GSI_IOAPIC_PINS + 16 + GSI_MSI_MAX)

int gsi_routes_init(struct gsi_routes *r, int vm_fd)
{
	memset(r, 0, sizeof(*r));
	r->buf = calloc(1, sizeof(struct kvm_irq_routing) +
			       MAX_ENTRIES * sizeof(struct kvm_irq_routing_entry));
	if (!r->buf || pthread_mutex_init(&r->lock, NULL)) {
		free(r->buf);
		return -ENOMEM;
	}
	r->vm_fd = vm_fd;
	r->next_gsi = GSI_MSI_FIRST;
	return 0;
}

void gsi_routes_destroy(struct gsi_routes *r)
{
	free(r->buf);
	r->buf = NULL;
	pthread_mutex_destroy(&r->lock);
}

int gsi_routes_alloc(struct gsi_routes *r)
{
	pthread_mutex_lock(&r->lock);
	int gsi = r->next_gsi < GSI_MSI_FIRST + GSI_MSI_MAX ? (int)r->next_gsi++ : -ENOSPC;
	pthread_mutex_unlock(&r->lock);
	return gsi;
}

static struct gsi_msi_route *slot(struct gsi_routes *r, uint32_t gsi)
{
	if (gsi < GSI_MSI_FIRST || gsi >= GSI_MSI_FIRST + GSI_MSI_MAX)
		return NULL;
	return &r->msi[gsi - GSI_MSI_FIRST];
}

void gsi_routes_set_msi(struct gsi_routes *r, uint32_t gsi, uint32_t addr_lo, uint32_t addr_hi,
			uint32_t data)
{
	pthread_mutex_lock(&r->lock);
	struct gsi_msi_route *s = slot(r, gsi);
	bool same = s && s->present && s->addr_lo == addr_lo && s->addr_hi == addr_hi &&
		    s->data == data;
	if (s && !same) {
		*s = (struct gsi_msi_route){ .present = true, .addr_lo = addr_lo, .addr_hi = addr_hi,
					     .data = data };
		r->dirty = true;
	} else if (s) {
		r->unchanged++;
	}
	pthread_mutex_unlock(&r->lock);
}

void gsi_routes_clear(struct gsi_routes *r, uint32_t gsi)
{
	pthread_mutex_lock(&r->lock);
	struct gsi_msi_route *s = slot(r, gsi);
	if (s && s->present) {
		memset(s, 0, sizeof(*s));
		r->dirty = true;
	}
	pthread_mutex_unlock(&r->lock);
}

/* KVM's default routing for the in-kernel irqchip: GSIs 0-15 to the PIC and
 * the IOAPIC, 16-23 to the IOAPIC only. A table we set replaces it whole. */
static uint32_t fill_default(struct kvm_irq_routing_entry *e)
{
	uint32_t n = 0;
	for (uint32_t gsi = 0; gsi < GSI_IOAPIC_PINS; gsi++) {
		if (gsi < 16)
			e[n++] = (struct kvm_irq_routing_entry){
				.gsi = gsi, .type = KVM_IRQ_ROUTING_IRQCHIP,
				.u.irqchip = { .irqchip = gsi < 8 ? KVM_IRQCHIP_PIC_MASTER
								   : KVM_IRQCHIP_PIC_SLAVE,
					       .pin = gsi % 8 },
			};
		e[n++] = (struct kvm_irq_routing_entry){
			.gsi = gsi, .type = KVM_IRQ_ROUTING_IRQCHIP,
			.u.irqchip = { .irqchip = KVM_IRQCHIP_IOAPIC, .pin = gsi },
		};
	}
	return n;
}

int gsi_routes_commit(struct gsi_routes *r)
{
	int ret = 0;
	pthread_mutex_lock(&r->lock);
	if (!r->dirty)
		goto out;
	struct kvm_irq_routing *t = r->buf;
	uint32_t n = fill_default(t->entries);
	for (uint32_t i = 0; i < GSI_MSI_MAX; i++) {
		const struct gsi_msi_route *s = &r->msi[i];
		if (!s->present)
			continue;
		t->entries[n++] = (struct kvm_irq_routing_entry){
			.gsi = GSI_MSI_FIRST + i, .type = KVM_IRQ_ROUTING_MSI,
			.u.msi = { .address_lo = s->addr_lo, .address_hi = s->addr_hi, .data = s->data },
		};
	}
	t->nr = n;
	t->flags = 0;
	if (r->vm_fd >= 0 && ioctl(r->vm_fd, KVM_SET_GSI_ROUTING, t)) {
		ret = -errno;
		log_err("KVM_SET_GSI_ROUTING with %u entries failed: %s", n, strerror(errno));
		goto out;
	}
	r->commits++;
	r->dirty = false;
out:
	pthread_mutex_unlock(&r->lock);
	return ret;
}
