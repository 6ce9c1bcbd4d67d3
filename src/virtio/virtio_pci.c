/* Virtio-pci transport: PCI function, capabilities, BAR0 regions, kicks and the interrupt paths. */
/* Link circle, on purpose (virtio_pci.c, _common.c, _coalesce.c, _poll.c): one transport, struct virtio_pci, split by size; its register file, interrupt moderation and polling each look queues up and kick through virtio_pci.c, which drives all three. */
#include "virtio/virtio_pci.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <linux/kvm.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "virtio/virtio_pci_common.h"

#define PCI_VENDOR_VIRTIO  0x1af4
#define VIRTIO_PCI_DEVICE_BASE 0x1040
/* Subsystem ID of a non-transitional device: 0x40 and above (virtio 1.x 4.1.2.1), so that
 * legacy drivers, which match subsystem IDs 1..0x3f, leave it alone. */
#define VIRTIO_PCI_SUBSYS_BASE 0x40
#define ISR_QUEUE          0x1
#define ISR_CONFIG         0x2


/* ---- interrupts: the device -> guest hop ---- */

static bool msix_on(struct virtio_pci *t) { return t->has_msix && msix_enabled(&t->msix); }

static bool msi_on(struct virtio_pci *t)
{
	if (!t->has_msi)
		return false;
	pthread_mutex_lock(&t->func.lock);
	bool on = msi_nr_enabled(&t->msi) > 0;
	pthread_mutex_unlock(&t->func.lock);
	return on;
}

static void intx_assert(struct virtio_pci *t)
{
	pthread_mutex_lock(&t->func.lock);
	bool disabled = pci_cfg_get16(&t->func, PCI_COMMAND) & PCI_CMD_INTX_DISABLE;
	if (!disabled)
		pci_cfg_set16(&t->func, PCI_STATUS,
			      pci_cfg_get16(&t->func, PCI_STATUS) | PCI_STATUS_INTX);
	pthread_mutex_unlock(&t->func.lock);
	if (disabled || t->intx.fd < 0 || t->intx_level)
		return; /* a raised line stays raised until the guest's EOI */
	uint64_t one = 1;
	if (write(t->intx.fd, &one, sizeof(one)) == sizeof(one)) {
		t->intx_level = true;
		t->stats.intx_asserts++;
	}
}

/* Raises one notification: to `vector` under MSI-X, else sets `isr_bit` and
 * sends MSI message `msi_idx` or asserts INTx. Never INTx while MSI or MSI-X
 * is enabled. ISR_CONFIG is set under MSI-X too. Lock held. */
static void raise_irq(struct virtio_pci *t, uint16_t vector, uint32_t msi_idx, uint8_t isr_bit)
{
	/* The configuration-change bit is set in every mode (4.1.4.5: before the notification);
	 * the queue bit only where it is the notification's only cause (no MSI-X). */
	if (isr_bit == ISR_CONFIG)
		t->isr |= ISR_CONFIG;
	if (msix_on(t)) {
		if (vector == VIRTIO_NO_VECTOR)
			t->stats.no_vector++;
		else
			msix_signal(&t->msix, vector);
		return;
	}
	t->isr |= isr_bit;
	if (msi_on(t))
		msi_signal(&t->msi, msi_idx);
	else
		intx_assert(t);
}

void vpci_isr_restore(struct virtio_pci *t, uint8_t isr)
{
	t->isr = isr & (ISR_QUEUE | ISR_CONFIG);
	if (t->isr && !msix_on(t) && !msi_on(t))
		intx_assert(t);
}

void virtio_pci_set_needs_reset(struct virtio_pci *t, const char *why)
{
	log_ratelimited(&t->rl, LOG_WARN, "%s: device needs reset: %s", t->info.name, why);
	if (t->status & VIRTIO_STATUS_NEEDS_RESET)
		return;
	t->status |= VIRTIO_STATUS_NEEDS_RESET;
	raise_irq(t, t->config_vector, 0, ISR_CONFIG);
}

void virtio_pci_config_changed(struct virtio_pci *t)
{
	t->config_generation++;
	if ((t->status & VIRTIO_STATUS_DRIVER_OK) && !(t->status & VIRTIO_STATUS_NEEDS_RESET))
		raise_irq(t, t->config_vector, 0, ISR_CONFIG);
}

struct virtq *virtio_pci_queue(struct virtio_pci *t, uint16_t q)
{
	if (q >= t->info.nqueues || !t->queues[q].enabled ||
	    (t->status & (VIRTIO_STATUS_DRIVER_OK | VIRTIO_STATUS_NEEDS_RESET)) !=
		    VIRTIO_STATUS_DRIVER_OK)
		return NULL;
	return &t->queues[q].vq;
}

void virtio_pci_queue_done(struct virtio_pci *t, uint16_t q)
{
	struct vpci_queue *vq = &t->queues[q];
	virtq_flush(&vq->vq); /* what the device filled this batch becomes visible at once */
	if (vq->vq.broken) {
		virtio_pci_set_needs_reset(t, "malformed virtqueue");
		return;
	}
	if (vq->vq.pushed == vq->pushed_seen)
		return; /* nothing new in the used ring: nothing to tell */
	uint64_t batch = vq->vq.pushed - vq->pushed_seen;
	vq->stats.completions += batch;
	vq->pushed_seen = vq->vq.pushed;
	if (vpci_hold_more(t, vq))
		return; /* joins the notification being held */
	if (vpci_hold_start(t, vq, batch))
		return;
	vpci_queue_notify(t, vq);
}

void vpci_queue_notify(struct virtio_pci *t, struct vpci_queue *vq)
{
	if (virtq_should_notify(&vq->vq)) {
		vq->stats.notifications++;
		vpci_hold_sent(vq);
		raise_irq(t, vq->msix_vector, vq->index + 1u, ISR_QUEUE);
	} else {
		vq->stats.suppressed++;
		t->stats.suppressed++;
	}
}

void virtio_pci_queue_signal(struct virtio_pci *t, uint16_t q)
{
	if (q < t->info.nqueues)
		raise_irq(t, t->queues[q].msix_vector, q + 1u, ISR_QUEUE);
}

int virtio_pci_queue_irqfd(struct virtio_pci *t, uint16_t q)
{
	if (q >= t->info.nqueues || t->vm_fd < 0 || !msix_on(t) || t->cfg.path != IRQ_PATH_IRQFD)
		return -1;
	uint16_t v = t->queues[q].msix_vector;
	return v < t->msix.nvec ? t->msix.vecs[v].efd : -1;
}

int virtio_pci_release_kick(struct virtio_pci *t, uint16_t q)
{
	if (q >= t->info.nqueues || t->queues[q].kick_fd < 0)
		return -1;
	struct vpci_queue *vq = &t->queues[q];
	if (t->loop && !vq->kick_released && evloop_del(t->loop, vq->kick_fd) == 0)
		vq->kick_released = true;
	return vq->kick_released || !t->loop ? vq->kick_fd : -1;
}

void virtio_pci_kick(struct virtio_pci *t, uint16_t q)
{
	pthread_mutex_lock(&t->lock);
	t->stats.kicks++;
	if (virtio_pci_queue(t, q) && t->ops->queue_notify) {
		t->ops->queue_notify(t->opaque, q);
		vpci_poll_after_kick(t, q);
	}
	pthread_mutex_unlock(&t->lock);
}

void virtio_pci_queue_resume(struct virtio_pci *t, uint16_t q)
{
	if (q >= t->info.nqueues || t->queues[q].kick_fd < 0)
		return;
	t->stats.resumes++;
	uint64_t one = 1;
	/* The kick eventfd itself: the loop sees it ready on its next epoll_wait. */
	if (write(t->queues[q].kick_fd, &one, sizeof(one)) != sizeof(one))
		log_ratelimited(&t->rl, LOG_WARN, "%s q%u: cannot reschedule: %s", t->info.name, q,
				strerror(errno));
}

int virtio_pci_pop(struct virtio_pci *t, uint16_t q, struct vbudget *b, struct virtq_chain *c)
{
	struct virtq *vq = virtio_pci_queue(t, q);
	if (!vq)
		return 0;
	if (!vbudget_left(b)) {
		if (virtq_has_work(vq))
			virtio_pci_queue_resume(t, q);
		return 0;
	}
	int r = virtq_pop(vq, c);
	if (r == 0 && !t->queues[q].hold.kicks_off) { /* a hold's timer looks at the ring itself */
		virtq_set_notify(vq, true);
		r = virtq_pop(vq, c);
	}
	return r;
}

/* The kick eventfd is watched edge-triggered: every notify write KVM
 * signals is a new edge, so the counter is never read (one syscall less per
 * kick) and simply grows; the handler serves the queue as far as its
 * budget goes either way. */
static void on_kick(void *opaque, uint32_t events)
{
	struct vpci_queue *q = opaque;
	virtio_pci_kick(q->owner, q->index);
}

/* EOI of the INTx line: KVM lowered it; raise it again if a cause is left
 * and neither MSI nor MSI-X took over meanwhile. */
static void on_resample(void *opaque, uint32_t events)
{
	struct virtio_pci *t = opaque;
	uint64_t v;
	if (read(t->intx.resample_fd, &v, sizeof(v)) != sizeof(v))
		return;
	pthread_mutex_lock(&t->lock);
	t->intx_level = false; /* KVM lowered the line at the EOI */
	if (t->isr && !msix_on(t) && !msi_on(t)) {
		t->stats.intx_resamples++;
		intx_assert(t);
	} else {
		pthread_mutex_lock(&t->func.lock);
		pci_cfg_set16(&t->func, PCI_STATUS,
			      pci_cfg_get16(&t->func, PCI_STATUS) & ~PCI_STATUS_INTX);
		pthread_mutex_unlock(&t->func.lock);
	}
	pthread_mutex_unlock(&t->lock);
}

/* ---- BAR0 regions: one small handler each ---- */

static void isr_read(struct virtio_pci *t, uint64_t off, void *data, uint32_t len)
{
	memset(data, 0, len);
	if (off == 0) {
		t->stats.isr_reads++;
		*(uint8_t *)data = t->isr; /* read-to-clear */
		t->isr = 0;
	}
}

static bool device_range_ok(struct virtio_pci *t, uint64_t off, uint32_t len, const char *dir)
{
	if (off + len <= t->info.config_size)
		return true;
	log_ratelimited(&t->rl, LOG_WARN, "%s: device config %s of %u bytes at 0x%" PRIx64
			" past its end (%u bytes)", t->info.name, dir, len, off, t->info.config_size);
	return false;
}

static void bar0_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct virtio_pci *t = opaque;
	pthread_mutex_lock(&t->lock);
	if (off < VPCI_ISR_OFF) {
		vpci_common_read(t, off - VPCI_COMMON_OFF, data, len);
	} else if (off < VPCI_DEVICE_OFF) {
		isr_read(t, off - VPCI_ISR_OFF, data, len);
	} else if (off < VPCI_NOTIFY_OFF) {
		memset(data, 0xff, len);
		if (device_range_ok(t, off - VPCI_DEVICE_OFF, len, "read") && t->ops->config_read)
			t->ops->config_read(t->opaque, (uint32_t)(off - VPCI_DEVICE_OFF), data, len);
	} else {
		memset(data, 0, len); /* notify region reads as zero */
	}
	pthread_mutex_unlock(&t->lock);
}

static void bar0_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct virtio_pci *t = opaque;
	if (off >= VPCI_NOTIFY_OFF) {
		/* Reached only when no ioeventfd caught the write. */
		uint64_t q = (off - VPCI_NOTIFY_OFF) / VPCI_NOTIFY_MULT;
		if (q < t->info.nqueues) {
			__atomic_add_fetch(&t->stats.kicks_mmio, 1, __ATOMIC_RELAXED);
			virtio_pci_kick(t, (uint16_t)q);
		}
		return;
	}
	pthread_mutex_lock(&t->lock);
	if (off < VPCI_ISR_OFF) {
		vpci_common_write(t, off - VPCI_COMMON_OFF, data, len);
	} else if (off >= VPCI_DEVICE_OFF) {
		if (device_range_ok(t, off - VPCI_DEVICE_OFF, len, "write") && t->ops->config_write)
			t->ops->config_write(t->opaque, (uint32_t)(off - VPCI_DEVICE_OFF), data, len);
	} /* ISR is read-only */
	pthread_mutex_unlock(&t->lock);
}

static const struct bus_ops bar0_ops = { .read = bar0_read, .write = bar0_write };

/* ---- PCI function hooks (function lock held) ---- */

static bool overlaps(uint32_t off, uint32_t len, uint32_t start, uint32_t size)
{
	return off < start + size && off + len > start;
}

static void config_written(void *opaque, uint32_t off, uint32_t len)
{
	struct virtio_pci *t = opaque;
	if (t->has_msix && overlaps(off, len, t->msix.cap, MSIX_CAP_LEN))
		msix_config_written(&t->msix);
	if (t->has_msi && overlaps(off, len, t->msi.cap, MSI_CAP_LEN))
		msi_config_written(&t->msi);
}

static void set_ioeventfd(struct virtio_pci *t, uint16_t q, uint64_t addr, bool assign)
{
	struct kvm_ioeventfd io = {
		.addr = addr, .len = 0, .fd = t->queues[q].kick_fd,
		.flags = assign ? 0 : KVM_IOEVENTFD_FLAG_DEASSIGN,
	};
	if (ioctl(t->vm_fd, KVM_IOEVENTFD, &io))
		log_warn("%s: KVM_IOEVENTFD %s for queue %u at 0x%" PRIx64 " failed: %s",
			 t->info.name, assign ? "assign" : "deassign", q, addr, strerror(errno));
}

/* BAR0 moved: the notify ioeventfds follow it. */
static void bar_moved(void *opaque, unsigned idx, bool mapped, uint64_t addr)
{
	struct virtio_pci *t = opaque;
	if (idx != 0 || t->vm_fd < 0)
		return;
	uint64_t base = addr + VPCI_NOTIFY_OFF;
	for (uint16_t q = 0; q < t->info.nqueues; q++)
		set_ioeventfd(t, q, base + (uint64_t)q * VPCI_NOTIFY_MULT, mapped);
	t->notify_mapped = mapped;
	t->notify_base = base;
}

static const struct pci_func_ops func_ops = {
	.config_written = config_written,
	.config_trap = vpci_cfg_cap_access,
	.bar_moved = bar_moved,
};

/* ---- setup ---- */

/* Appends a virtio vendor capability pointing at [off, off+len) of BAR0. */
static int add_virtio_cap(struct pci_func *f, uint8_t type, uint32_t off, uint32_t len,
			  uint32_t notify_mult)
{
	uint8_t caplen = type == VIRTIO_CAP_NOTIFY ? 20 : 16;
	int c = pci_func_add_cap(f, VIRTIO_CAP_VNDR, caplen, NULL);
	if (c < 0)
		return c;
	f->cfg[c + 2] = caplen;
	f->cfg[c + 3] = type;
	f->cfg[c + 4] = 0; /* BAR0 */
	pci_cfg_set32(f, (uint32_t)c + 8, off);
	pci_cfg_set32(f, (uint32_t)c + 12, len);
	if (type == VIRTIO_CAP_NOTIFY)
		pci_cfg_set32(f, (uint32_t)c + 16, notify_mult);
	return 0;
}

static int msix_vectors(const struct virtio_pci *t)
{
	if (t->cfg.vectors >= 0)
		return t->cfg.vectors;
	switch (t->cfg.mode) {
	case IRQ_MODE_MSIX: return t->info.nqueues + 1;
	case IRQ_MODE_MSIX_SHARED: return 2;
	default: return 0;
	}
}

static int setup_irq_sources(struct virtio_pci *t, struct gsi_routes *routes, struct error *err)
{
	int nvec = msix_vectors(t);
	int ret;
	if (nvec > MSIX_MAX_VECTORS)
		return error_set(err, -EINVAL, "%s: %d MSI-X vectors requested, at most %d",
				 t->info.name, nvec, MSIX_MAX_VECTORS);
	if (nvec > 0) {
		uint32_t pba_off;
		uint64_t size = msix_bar_size((uint16_t)nvec, &pba_off);
		ret = msix_init(&t->msix, &t->func, routes, (uint16_t)nvec, VPCI_MSIX_BAR, pba_off);
		t->has_msix = ret == 0; /* from here the destroy path releases the vectors */
		if (ret || (ret = pci_func_add_bar(&t->func, VPCI_MSIX_BAR, size, true,
						   &msix_bar_ops, &t->msix, t->info.name)))
			return error_set(err, ret, "%s: cannot set up MSI-X: %s", t->info.name,
					 strerror(-ret));
		msix_set_path(&t->msix, t->cfg.path);
	}
	if (t->cfg.mode == IRQ_MODE_MSI) {
		uint32_t n = t->info.nqueues + 1u;
		ret = msi_init(&t->msi, &t->func, routes, n > MSI_MAX_VECTORS ? MSI_MAX_VECTORS : n);
		if (ret)
			return error_set(err, ret, "%s: cannot set up MSI: %s", t->info.name,
					 strerror(-ret));
		msi_set_path(&t->msi, t->cfg.path);
		t->has_msi = true;
	}
	return 0;
}

static int setup_queues(struct virtio_pci *t, struct error *err)
{
	for (uint16_t q = 0; q < t->info.nqueues; q++) {
		struct vpci_queue *vq = &t->queues[q];
		vq->owner = t;
		vq->index = q;
		vq->kick_fd = -1;
		snprintf(vq->name, sizeof(vq->name), "%s q%u", t->info.name, q);
		vq->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (vq->kick_fd < 0)
			return error_set(err, -errno, "%s: eventfd: %s", t->info.name, strerror(errno));
		vq->kick_handler = (struct evloop_handler){ on_kick, vq };
		vpci_poll_init(t, q);
		int ret = vpci_hold_init(t, q);
		if (ret)
			return error_set(err, ret, "%s: interrupt moderation timer: %s", t->info.name,
					 strerror(-ret));
		if (t->loop) {
			ret = evloop_add(t->loop, vq->kick_fd, EPOLLIN | EPOLLET, &vq->kick_handler);
			if (ret)
				return error_set(err, ret, "%s: epoll: %s", t->info.name, strerror(-ret));
		}
	}
	return 0;
}

int virtio_pci_init(struct virtio_pci *t, const struct virtio_dev_info *info,
		    const struct virtio_dev_ops *ops, void *opaque,
		    const struct virtio_pci_config *cfg, const struct guest_mem *mem, int vm_fd,
		    struct gsi_routes *routes, struct evloop *loop, struct bus *mmio,
		    struct pci_window window, struct error *err)
{
	memset(t, 0, sizeof(*t));
	pci_intx_clear(&t->intx);
	for (unsigned q = 0; q < VIRTIO_PCI_MAX_QUEUES; q++)
		t->queues[q].kick_fd = t->queues[q].hold.timer_fd = -1;
	if (info->nqueues == 0 || info->nqueues > VIRTIO_PCI_MAX_QUEUES || info->queue_max == 0 ||
	    (info->queue_max & (info->queue_max - 1)) || info->config_size > VPCI_DEVICE_LEN)
		return error_set(err, -EINVAL, "%s: bad device description", info->name);
	if (cfg->poll_us > VIRTIO_PCI_POLL_MAX_US)
		return error_set(err, -EINVAL, "%s: poll=%u us, at most %u", info->name, cfg->poll_us,
				 VIRTIO_PCI_POLL_MAX_US);
	if (cfg->coalesce_us > VIRTIO_PCI_COALESCE_MAX_US)
		return error_set(err, -EINVAL, "%s: coalesce=%u us, at most %u", info->name,
				 cfg->coalesce_us, VIRTIO_PCI_COALESCE_MAX_US);
	if (pthread_mutex_init(&t->lock, NULL))
		return error_set(err, -ENOMEM, "%s: mutex", info->name);
	t->info = *info;
	t->ops = ops;
	t->opaque = opaque;
	t->cfg = *cfg;
	t->mem = mem;
	t->vm_fd = vm_fd;
	t->loop = loop;

	int ret = pci_func_init(&t->func, info->name, PCI_VENDOR_VIRTIO,
				(uint16_t)(VIRTIO_PCI_DEVICE_BASE + info->device_id), info->pci_class,
				PCI_VENDOR_VIRTIO, (uint16_t)(VIRTIO_PCI_SUBSYS_BASE + info->device_id),
				mmio, window);
	if (ret)
		return error_set(err, ret, "%s: cannot create PCI function", info->name);
	t->func.ops = &func_ops;
	t->func.opaque = t;
	if ((ret = pci_func_add_bar(&t->func, 0, VPCI_BAR0_SIZE, true, &bar0_ops, t, info->name)) ||
	    (ret = add_virtio_cap(&t->func, VIRTIO_CAP_COMMON, VPCI_COMMON_OFF, VPCI_COMMON_LEN, 0)) ||
	    (ret = add_virtio_cap(&t->func, VIRTIO_CAP_ISR, VPCI_ISR_OFF, 1, 0)) ||
	    (ret = add_virtio_cap(&t->func, VIRTIO_CAP_NOTIFY, VPCI_NOTIFY_OFF,
				  info->nqueues * VPCI_NOTIFY_MULT, VPCI_NOTIFY_MULT)) ||
	    (info->config_size &&
	     (ret = add_virtio_cap(&t->func, VIRTIO_CAP_DEVICE, VPCI_DEVICE_OFF, info->config_size, 0))) ||
	    (ret = vpci_cfg_cap_add(t)))
		return error_set(err, ret, "%s: cannot lay out BAR0 and its capabilities", info->name);
	if ((ret = setup_irq_sources(t, routes, err)) || (ret = setup_queues(t, err)))
		return ret;
	vpci_common_reset(t);
	return 0;
}

int virtio_pci_attach_intx(struct virtio_pci *t, uint32_t gsi)
{
	int ret = pci_intx_open(&t->intx, t->vm_fd, gsi);
	if (ret)
		return ret;
	t->resample_handler = (struct evloop_handler){ on_resample, t };
	return t->loop ? evloop_add(t->loop, t->intx.resample_fd, EPOLLIN, &t->resample_handler) : 0;
}

void virtio_pci_destroy(struct virtio_pci *t)
{
	vpci_poll_destroy(t);
	vpci_hold_destroy(t);
	pci_func_destroy(&t->func);
	for (uint16_t q = 0; q < VIRTIO_PCI_MAX_QUEUES; q++)
		if (t->queues[q].kick_fd >= 0)
			close(t->queues[q].kick_fd);
	if (t->has_msix)
		msix_destroy(&t->msix);
	if (t->has_msi)
		msi_destroy(&t->msi);
	pci_intx_close(&t->intx);
	pthread_mutex_destroy(&t->lock);
}
