/* Interrupt vector: eventfd + irqfd + MSI route lifecycle, and firing it. */
#include "irq/irq_vec.h"

#include <errno.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "util/log.h"

int irq_path_parse(const char *s, enum irq_path *out)
{
	if (!strcmp(s, "irqfd"))
		*out = IRQ_PATH_IRQFD;
	else if (!strcmp(s, "signal-msi"))
		*out = IRQ_PATH_SIGNAL_MSI;
	else
		return -EINVAL;
	return 0;
}

const char *irq_path_name(enum irq_path p)
{
	return p == IRQ_PATH_SIGNAL_MSI ? "signal-msi" : "irqfd";
}

void irq_vec_set_path(struct irq_vec *v, enum irq_path path) { v->path = path; }

int irq_vec_init(struct irq_vec *v, struct gsi_routes *routes)
{
	memset(v, 0, sizeof(*v));
	v->efd = -1;
	v->routes = routes;
	v->path = IRQ_PATH_IRQFD;
	int gsi = gsi_routes_alloc(routes);
	if (gsi < 0)
		return gsi;
	v->gsi = (uint32_t)gsi;
	v->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return v->efd < 0 ? -errno : 0;
}

void irq_vec_destroy(struct irq_vec *v)
{
	irq_vec_unbind(v);
	if (v->efd >= 0)
		close(v->efd);
	v->efd = -1;
}

static int set_irqfd(struct irq_vec *v, bool assign)
{
	if (v->routes->vm_fd < 0)
		return 0;
	struct kvm_irqfd irqfd = { .fd = (uint32_t)v->efd, .gsi = v->gsi,
				   .flags = assign ? 0 : KVM_IRQFD_FLAG_DEASSIGN };
	if (ioctl(v->routes->vm_fd, KVM_IRQFD, &irqfd)) {
		log_err("KVM_IRQFD (%s GSI %u) failed: %s", assign ? "assign" : "deassign",
			v->gsi, strerror(errno));
		return -errno;
	}
	return 0;
}

int irq_vec_bind(struct irq_vec *v, uint32_t addr_lo, uint32_t addr_hi, uint32_t data)
{
	v->addr_lo = addr_lo;
	v->addr_hi = addr_hi;
	v->data = data;
	if (v->path == IRQ_PATH_SIGNAL_MSI) {
		v->bound = true;
		return 0;
	}
	gsi_routes_set_msi(v->routes, v->gsi, addr_lo, addr_hi, data);
	if (v->bound)
		return 0;
	int ret = set_irqfd(v, true);
	if (ret == 0)
		v->bound = true;
	return ret;
}

void irq_vec_unbind(struct irq_vec *v)
{
	if (!v->bound)
		return;
	v->bound = false;
	if (v->path == IRQ_PATH_SIGNAL_MSI)
		return;
	set_irqfd(v, false);
	gsi_routes_clear(v->routes, v->gsi);
}

bool irq_vec_take_unbound(struct irq_vec *v)
{
	uint64_t n;
	return !v->bound && v->efd >= 0 && read(v->efd, &n, sizeof(n)) == sizeof(n) && n;
}

int irq_vec_fire(struct irq_vec *v)
{
	if (!v->bound)
		return -ENOLINK;
	if (v->path == IRQ_PATH_SIGNAL_MSI && v->routes->vm_fd >= 0) {
		struct kvm_msi msi = { .address_lo = v->addr_lo, .address_hi = v->addr_hi, .data = v->data };
		return ioctl(v->routes->vm_fd, KVM_SIGNAL_MSI, &msi) < 0 ? -errno : 0;
	}
	/* irqfd path (and SIGNAL_MSI in tests without a VM: the eventfd stands in). */
	int ret = v->path == IRQ_PATH_IRQFD ? gsi_routes_commit(v->routes) : 0;
	if (ret)
		return ret;
	uint64_t one = 1;
	return write(v->efd, &one, sizeof(one)) == sizeof(one) ? 0 : -errno;
}
