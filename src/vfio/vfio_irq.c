/* VFIO interrupts: the kind the guest enabled (MSI-X, MSI, INTx) handed to VFIO as the vectors' own irqfd eventfds. */
#include "vfio/vfio_dev.h"

#include <string.h>

static unsigned index_of(enum vfio_irq_kind k)
{
	return k == VFIO_IRQ_MSIX ? VFIO_DEV_IRQ_MSIX : k == VFIO_IRQ_MSI ? VFIO_DEV_IRQ_MSI
									  : VFIO_DEV_IRQ_INTX;
}

static const char *kind_name(enum vfio_irq_kind k)
{
	return k == VFIO_IRQ_MSIX ? "MSI-X" : k == VFIO_IRQ_MSI ? "MSI" : "INTx";
}

static int set_irqs(struct vfio_dev *d, unsigned index, enum vfio_irq_action act,
		    uint32_t count, const int *fds)
{
	__atomic_fetch_add(&d->stats.irq_switches, 1, __ATOMIC_RELAXED);
	return d->ops->set_irqs(d->ctx, index, act, count, fds);
}

/* Gives VFIO the eventfds of kind k: each one is also the KVM irqfd of its vector (MSI-X,
 * MSI) or the INTx line's, so a device interrupt reaches KVM with no msivm thread. A masked
 * vector has no irqfd: its signals wait in the eventfd (pci/msix.c takes them into the PBA
 * and replays them once at the unmask). */
static int enable(struct vfio_dev *d, enum vfio_irq_kind k, uint32_t n)
{
	int fds[MSIX_MAX_VECTORS];
	switch (k) {
	case VFIO_IRQ_MSIX:
		for (uint32_t i = 0; i < n; i++) /* relay=on: msivm's own eventfds instead */
			fds[i] = d->relay.on ? d->relay.vecs[i].fd : d->msix.vecs[i].efd;
		return set_irqs(d, VFIO_DEV_IRQ_MSIX, VFIO_ACT_TRIGGER, n, fds);
	case VFIO_IRQ_MSI:
		for (uint32_t i = 0; i < n; i++)
			fds[i] = d->msi.vecs[i].efd;
		return set_irqs(d, VFIO_DEV_IRQ_MSI, VFIO_ACT_TRIGGER, n, fds);
	case VFIO_IRQ_INTX: {
		/* Level semantics without msivm: VFIO masks the line at each interrupt, KVM's
		 * resample eventfd (the guest's EOI) unmasks it. */
		int ret = set_irqs(d, VFIO_DEV_IRQ_INTX, VFIO_ACT_TRIGGER, 1, &d->intx.fd);
		return ret ? ret : set_irqs(d, VFIO_DEV_IRQ_INTX, VFIO_ACT_UNMASK, 1,
					    &d->intx.resample_fd);
	}
	default:
		return 0;
	}
}

void vfio_irq_sync(struct vfio_dev *d)
{
	enum vfio_irq_kind want = VFIO_IRQ_NONE;
	uint32_t n = 0;
	if (d->has_msix && msix_enabled(&d->msix)) {
		want = VFIO_IRQ_MSIX;
		n = d->msix.nvec;
	} else if (d->has_msi && msi_nr_enabled(&d->msi)) {
		want = VFIO_IRQ_MSI;
		n = msi_nr_enabled(&d->msi);
	} else if (d->has_intx && d->intx.fd >= 0) {
		want = VFIO_IRQ_INTX;
		n = 1;
	}
	if (want == d->active && (want != VFIO_IRQ_MSI || n == d->msi_count))
		return;
	if (d->broken)
		return;
	/* VFIO takes one kind at a time: the old one off first. */
	if (d->active != VFIO_IRQ_NONE) {
		int ret = set_irqs(d, index_of(d->active), VFIO_ACT_TRIGGER, 0, NULL);
		if (ret)
			vfio_dev_error(d, false, "turning the device's interrupts off", ret);
		d->active = VFIO_IRQ_NONE;
	}
	if (want == VFIO_IRQ_NONE)
		return;
	int ret = enable(d, want, n);
	if (ret) {
		log_ratelimited(&d->rl, LOG_ERROR, "%s: VFIO refused %u %s eventfd(s): %s; the "
				"device's interrupts are off", d->name, n, kind_name(want),
				strerror(-ret));
		__atomic_fetch_add(&d->stats.device_errors, 1, __ATOMIC_RELAXED);
		return;
	}
	d->active = want;
	d->msi_count = want == VFIO_IRQ_MSI ? n : 0;
}

void vfio_irq_off(struct vfio_dev *d)
{
	if (d->active != VFIO_IRQ_NONE)
		set_irqs(d, index_of(d->active), VFIO_ACT_TRIGGER, 0, NULL);
	d->active = VFIO_IRQ_NONE;
}
