/* VFIO device's config view: the device's header and BARs, msivm's MSI-X/MSI over its list, the command register forwarded. */
#include "vfio/vfio_dev.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define CAP_ID_MSI  0x05
#define CAP_ID_MSIX 0x11
/* Command bits the guest's writes reach the device with (I/O BARs are not offered). */
#define CMD_FORWARDED (PCI_CMD_MEMORY | PCI_CMD_MASTER | PCI_CMD_INTX_DISABLE)

static uint16_t get16(const uint8_t *c, unsigned off) { return (uint16_t)(c[off] | c[off + 1] << 8); }
static uint32_t get32(const uint8_t *c, unsigned off)
{
	return (uint32_t)get16(c, off) | (uint32_t)get16(c, off + 2) << 16;
}

/* MSI-X of the device, if it has one whose table and PBA lie inside memory BARs msivm
 * offers: its layout and the table size msivm offers (at most MSIX_MAX_VECTORS). */
static bool msix_layout_of(struct vfio_dev *d, const uint8_t *cfg, struct msix_layout *l,
			   uint16_t *nvec)
{
	const struct vfio_cap *c = vfio_cfg_find(&d->caps, CAP_ID_MSIX);
	uint8_t cap = c ? c->off : 0;
	if (!cap || cap > PCI_CFG_SIZE - MSIX_CAP_LEN)
		return false;
	uint16_t n = (uint16_t)((get16(cfg, cap + 2) & 0x7ff) + 1);
	uint32_t t = get32(cfg, cap + 4), p = get32(cfg, cap + 8);
	*l = (struct msix_layout){ .table_bar = t & 7, .table_offset = t & ~7u,
				   .pba_bar = p & 7, .pba_offset = p & ~7u };
	bool ok = l->table_bar < PCI_NUM_BARS && l->pba_bar < PCI_NUM_BARS &&
		  d->bars[l->table_bar].size &&
		  (uint64_t)l->table_offset + msix_table_len(n) <= d->bars[l->table_bar].size &&
		  d->bars[l->pba_bar].size &&
		  (uint64_t)l->pba_offset + msix_pba_len(n) <= d->bars[l->pba_bar].size;
	if (!ok) {
		log_warn("%s: the device's MSI-X table or PBA is not inside one of its memory BARs: "
			 "MSI-X hidden", d->name);
		return false;
	}
	d->dev_msix_nvec = n;
	*nvec = n > MSIX_MAX_VECTORS ? MSIX_MAX_VECTORS : n;
	if (n > MSIX_MAX_VECTORS)
		log_info("%s: the device has %u MSI-X vectors; the guest is offered %u", d->name, n,
			 MSIX_MAX_VECTORS);
	return true;
}

/* Declares the memory BARs with the sizes VFIO gave; I/O BARs are hidden. */
static int declare_bars(struct vfio_dev *d, const uint8_t *cfg, const struct vfio_dev_desc *desc,
			struct error *err)
{
	for (unsigned i = 0; i < PCI_NUM_BARS; i++) {
		uint32_t raw = get32(cfg, PCI_BAR0 + 4 * i);
		uint64_t size = desc->bars[i].size;
		bool is64 = !(raw & 1) && ((raw >> 1) & 3) == 2;
		struct vfio_bar *b = &d->bars[i];
		*b = (struct vfio_bar){ .dev = d, .idx = i };
		char name[sizeof(d->name)];
		memcpy(name, d->name, sizeof(name));
		snprintf(b->name, sizeof(b->name), "%s-bar%u", name, i);
		if (!size)
			continue;
		if (raw & 1) {
			log_info("%s: BAR%u is an I/O BAR: hidden from the guest", d->name, i);
			continue;
		}
		if (size < 16 || (size & (size - 1)) || (is64 && i == PCI_NUM_BARS - 1))
			return error_set(err, -EINVAL, "%s: BAR%u has size 0x%llx, not a PCI BAR size",
					 d->name, i, (unsigned long long)size);
		int ret = pci_func_add_bar(&d->func, i, size, is64, &vfio_bar_ops, b, b->name);
		if (ret)
			return error_set(err, ret, "%s: BAR%u cannot be declared", d->name, i);
		b->size = size;
		if (raw & 0x08) /* prefetchable, as on the device */
			pci_func_set_bar_prefetch(&d->func, i);
		if (is64)
			i++; /* the upper half */
	}
	return 0;
}

static bool touches(uint32_t off, uint32_t len, uint32_t start, uint32_t n)
{
	return off < start + n && off + len > start;
}

/* Forwards the guest's memory / bus master / INTx-disable bits to the device (lock held). */
static void forward_command(struct vfio_dev *d)
{
	uint16_t cur = 0, want = pci_cfg_get16(&d->func, PCI_COMMAND) & CMD_FORWARDED;
	if (d->broken)
		return;
	int ret = d->ops->read(d->ctx, VFIO_DEV_CONFIG_REGION, PCI_COMMAND, &cur, 2);
	if (!ret) {
		uint16_t v = (uint16_t)((cur & ~CMD_FORWARDED) | want);
		ret = d->ops->write(d->ctx, VFIO_DEV_CONFIG_REGION, PCI_COMMAND, &v, 2);
	}
	__atomic_fetch_add(&d->stats.cmd_writes, 1, __ATOMIC_RELAXED);
	if (ret)
		vfio_dev_error(d, true, "the command register write", ret);
}

static void config_written(void *opaque, uint32_t off, uint32_t len)
{
	struct vfio_dev *d = opaque;
	if (touches(off, len, PCI_COMMAND, 2))
		forward_command(d);
	if (d->has_msix && touches(off, len, d->msix.cap, MSIX_CAP_LEN))
		msix_config_written(&d->msix);
	if (d->has_msi && touches(off, len, d->msi.cap, MSI_CAP_LEN))
		msi_config_written(&d->msi);
	vfio_irq_sync(d);
}

/* A guest read of msivm's MSI pending bits (the trap range, no lock held): the device's
 * signals to masked messages, waiting in their eventfds, become pending bits first. */
static void config_trap(void *opaque, bool write)
{
	struct vfio_dev *d = opaque;
	if (!write && d->has_msi)
		msi_collect_pending(&d->msi);
}

static const struct pci_func_ops vfio_func_ops = {
	.config_written = config_written,
	.config_trap = config_trap,
	.bar_moved = vfio_bar_moved,
	.config_passthrough = vfio_cfg_passthrough,
};

/* Adds the interrupt capabilities the mode allows and the device has. */
static int add_irq_caps(struct vfio_dev *d, const uint8_t *cfg, const struct vfio_dev_desc *desc,
			struct gsi_routes *routes, struct error *err)
{
	uint16_t nvec = 0;
	bool want_msix = d->mode == IRQ_MODE_MSIX || d->mode == IRQ_MODE_MSIX_SHARED;
	d->dev_has_msix = msix_layout_of(d, cfg, &d->dev_msix, &nvec);
	if (want_msix && desc->irq_count[VFIO_DEV_IRQ_MSIX] && d->dev_has_msix) {
		vfio_cfg_place(d, vfio_cfg_find(&d->caps, CAP_ID_MSIX), MSIX_CAP_LEN);
		int ret = msix_init_layout(&d->msix, &d->func, routes, nvec, &d->dev_msix);
		if (ret)
			return error_set(err, ret, "%s: MSI-X: %s", d->name, strerror(-ret));
		vfio_cfg_own(d, d->msix.cap, MSIX_CAP_LEN);
		d->has_msix = true;
		d->msix.commit_at_once = true;
	}
	const struct vfio_cap *mcap = vfio_cfg_find(&d->caps, CAP_ID_MSI);
	if (d->mode != IRQ_MODE_INTX && mcap && desc->irq_count[VFIO_DEV_IRQ_MSI]) {
		uint32_t n = 1u << ((get16(cfg, mcap->off + 2u) >> 1) & 7);
		if (n > desc->irq_count[VFIO_DEV_IRQ_MSI])
			n = desc->irq_count[VFIO_DEV_IRQ_MSI];
		vfio_cfg_place(d, mcap, MSI_CAP_LEN);
		int ret = msi_init(&d->msi, &d->func, routes, n > MSI_MAX_VECTORS ? MSI_MAX_VECTORS : n);
		if (ret)
			return error_set(err, ret, "%s: MSI: %s", d->name, strerror(-ret));
		vfio_cfg_own(d, d->msi.cap, MSI_CAP_LEN);
		d->has_msi = true;
		d->msi.commit_at_once = true;
		d->func.trap_off = (uint8_t)(d->msi.cap + MSI_OFF_PENDING);
		d->func.trap_len = 4;
	}
	d->has_intx = desc->irq_count[VFIO_DEV_IRQ_INTX] && cfg[PCI_INT_PIN];
	if (!d->has_intx)
		d->func.cfg[PCI_INT_PIN] = 0;
	return 0;
}

int vfio_dev_init(struct vfio_dev *d, const char *name, const struct vfio_dev_ops *ops,
		  void *ctx, const struct vfio_dev_desc *desc, enum irq_mode mode,
		  struct gsi_routes *routes, struct bus *mmio, struct pci_window window,
		  uint32_t slot_base, struct error *err)
{
	memset(d, 0, sizeof(*d));
	size_t nlen = strnlen(name, sizeof(d->name) - 1);
	memcpy(d->name, name, nlen);
	d->ops = ops;
	d->ctx = ctx;
	d->mode = mode;
	d->slot_base = slot_base;
	pci_intx_clear(&d->intx);
	uint8_t cfg[PCI_CFG_SIZE];
	int ret = ops->read(ctx, VFIO_DEV_CONFIG_REGION, 0, cfg, sizeof(cfg));
	if (ret)
		return error_set(err, ret, "%s: cannot read the device's config space: %s", name,
				 strerror(-ret));
	if (get16(cfg, PCI_VENDOR_ID) == 0xffff)
		return error_set(err, -ENODEV, "%s: the device does not answer (vendor ID ffff)", name);
	if (cfg[PCI_HEADER_TYPE] & 0x7f)
		return error_set(err, -EINVAL, "%s: header type %u: only endpoints (type 0) can be "
				 "passed through, not bridges", name, cfg[PCI_HEADER_TYPE] & 0x7f);
	ret = pci_func_init(&d->func, d->name, get16(cfg, PCI_VENDOR_ID), get16(cfg, PCI_DEVICE_ID),
			    get32(cfg, PCI_REVISION) >> 8, get16(cfg, PCI_SUBSYS_VENDOR),
			    get16(cfg, PCI_SUBSYS_ID), mmio, window);
	if (ret)
		return error_set(err, ret, "%s: cannot create the PCI function", name);
	d->func_ready = true;
	d->func.cfg[PCI_REVISION] = cfg[PCI_REVISION];
	vfio_cfg_scan(cfg, &d->caps);
	if ((ret = declare_bars(d, cfg, desc, err)) || (ret = add_irq_caps(d, cfg, desc, routes, err)) ||
	    (ret = vfio_bar_setup(d, desc, err)))
		return ret;
	if ((ret = vfio_cfg_passthrough_setup(d, &d->caps)))
		return error_set(err, ret, "%s: no room for its vendor capabilities", name);
	d->func.ops = &vfio_func_ops;
	d->func.opaque = d;
	/* A known state before the guest sees it: reset, then decode and bus master off. */
	if (desc->can_reset && (ret = ops->reset(ctx)))
		log_warn("%s: VFIO_DEVICE_RESET failed: %s", name, strerror(-ret));
	pthread_mutex_lock(&d->func.lock);
	forward_command(d);
	pthread_mutex_unlock(&d->func.lock);
	return d->broken ? error_set(err, -EIO, "%s: the device's command register cannot be "
				     "written", name) : 0;
}

int vfio_dev_attach_intx(struct vfio_dev *d, int vm_fd, uint32_t gsi)
{
	if (!d->has_intx)
		return 0;
	int ret = pci_intx_open(&d->intx, vm_fd, gsi);
	if (ret)
		return ret;
	pthread_mutex_lock(&d->func.lock);
	vfio_irq_sync(d);
	pthread_mutex_unlock(&d->func.lock);
	return d->active == VFIO_IRQ_INTX ? 0 : -EIO;
}

void vfio_dev_destroy(struct vfio_dev *d)
{
	if (!d->func_ready) {
		vfio_relay_stop(d);
		return;
	}
	vfio_irq_off(d);
	vfio_relay_stop(d); /* VFIO holds them no more */
	pthread_mutex_lock(&d->func.lock);
	pci_cfg_set16(&d->func, PCI_COMMAND, 0);
	forward_command(d); /* bus master off: no DMA after this */
	pthread_mutex_unlock(&d->func.lock);
	if (d->ops->reset(d->ctx) && !d->broken)
		log_info("%s: no reset at exit (the kernel resets it when msivm closes it)", d->name);
	pci_func_destroy(&d->func);
	vfio_bar_release(d);
	vfio_rom_release(d);
	pci_intx_close(&d->intx);
	if (d->has_msix)
		msix_destroy(&d->msix);
	if (d->has_msi)
		msi_destroy(&d->msi);
	d->has_msix = d->has_msi = false;
	d->func_ready = false;
}
