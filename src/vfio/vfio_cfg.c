/* VFIO device's own config registers: its capabilities measured, msivm's MSI-X/MSI at their offsets, vendor capabilities and the gaps between capabilities passed through, the rest hidden. */
#include "vfio/vfio_dev.h"

#include <errno.h>
#include <string.h>

#define CAP_ID_PM     0x01
#define CAP_ID_VPD    0x03
#define CAP_ID_SLOTID 0x04
#define CAP_ID_MSI    0x05
#define CAP_ID_CHSWP  0x06
#define CAP_ID_VNDR   0x09
#define CAP_ID_SSVID  0x0d
#define CAP_ID_EXP    0x10
#define CAP_ID_MSIX   0x11
#define CAP_ID_AF     0x13
#define CAP_START     0x40

static uint16_t get16(const uint8_t *c, unsigned off) { return (uint16_t)(c[off] | c[off + 1] << 8); }

/* The length of a capability whose size its ID or its own fields give (PCI 3.0, PCIe 2.0, as
 * Linux's vfio-pci sizes them); 0 when unknown. */
static unsigned known_len(const uint8_t *cfg, uint8_t off)
{
	uint16_t flags = off + 3u < PCI_CFG_SIZE ? get16(cfg, off + 2u) : 0;
	switch (cfg[off]) {
	case CAP_ID_PM: case CAP_ID_VPD: case CAP_ID_SSVID: return 8;
	case CAP_ID_SLOTID: case CAP_ID_CHSWP: return 4;
	case CAP_ID_AF: return 6;
	case CAP_ID_MSIX: return 12;
	case CAP_ID_MSI: return 10u + (flags & 0x80 ? 4u : 0u) + (flags & 0x100 ? 10u : 0u);
	case CAP_ID_EXP: return (flags & 0xf) >= 2 ? 0x3c : 0x14;
	case CAP_ID_VNDR: return off + 2u < PCI_CFG_SIZE && cfg[off + 2] >= 3 ? cfg[off + 2] : 3;
	default: return 0;
	}
}

void vfio_cfg_scan(const uint8_t *cfg, struct vfio_cap_map *m)
{
	memset(m, 0, sizeof(*m));
	if (!(get16(cfg, PCI_STATUS) & PCI_STATUS_CAPS))
		return;
	uint8_t off = cfg[PCI_CAP_PTR] & 0xfc;
	bool seen[PCI_CFG_SIZE] = { false };
	while (off >= CAP_START && m->n < VFIO_MAX_CAPS && !seen[off]) { /* a loop ends it */
		seen[off] = true;
		m->caps[m->n++] = (struct vfio_cap){ .id = cfg[off], .off = off };
		off = cfg[off + 1] & 0xfc;
	}
	/* A capability ends where its size says, but never past the next one (by offset) or the
	 * space; one of unknown size runs up to the next. */
	for (unsigned i = 0; i < m->n; i++) {
		unsigned limit = PCI_CFG_SIZE, len = known_len(cfg, m->caps[i].off);
		for (unsigned j = 0; j < m->n; j++)
			if (m->caps[j].off > m->caps[i].off && m->caps[j].off < limit)
				limit = m->caps[j].off;
		limit -= m->caps[i].off;
		m->caps[i].len = (uint16_t)(len && len < limit ? len : limit);
	}
}

const struct vfio_cap *vfio_cfg_find(const struct vfio_cap_map *m, uint8_t id)
{
	for (unsigned i = 0; i < m->n; i++)
		if (m->caps[i].id == id)
			return &m->caps[i];
	return NULL;
}

void vfio_cfg_place(struct vfio_dev *d, const struct vfio_cap *dev_cap, unsigned len)
{
	if (!dev_cap || dev_cap->off + len > PCI_CFG_SIZE)
		return;
	for (unsigned o = dev_cap->off; o < dev_cap->off + len; o++)
		if (d->cfg_owned[o])
			return; /* over one of msivm's own: appended where pci_func puts it */
	d->func.cap_end = dev_cap->off;
}

void vfio_cfg_own(struct vfio_dev *d, int off, unsigned len)
{
	for (unsigned o = (unsigned)off; off >= 0 && o < (unsigned)off + len && o < PCI_CFG_SIZE; o++)
		d->cfg_owned[o] = true;
}

int vfio_cfg_passthrough(void *opaque, bool write, uint32_t off, uint32_t len, uint8_t *buf)
{
	struct vfio_dev *d = opaque;
	if (d->broken)
		return write ? 0 : -EIO;
	int ret = write ? d->ops->write(d->ctx, VFIO_DEV_CONFIG_REGION, off, buf, len)
			: d->ops->read(d->ctx, VFIO_DEV_CONFIG_REGION, off, buf, len);
	__atomic_fetch_add(write ? &d->stats.cfg_writes : &d->stats.cfg_reads, 1, __ATOMIC_RELAXED);
	if (ret)
		vfio_dev_error(d, false, write ? "a config write passed through" :
					  "a config read passed through", ret);
	return ret;
}

int vfio_cfg_passthrough_setup(struct vfio_dev *d, const struct vfio_cap_map *m)
{
	bool hidden[PCI_CFG_SIZE] = { false };
	for (unsigned i = 0; i < m->n; i++) {
		const struct vfio_cap *c = &m->caps[i];
		bool vendor = c->id == CAP_ID_VNDR;
		bool free_hdr = !d->cfg_owned[c->off] && !d->cfg_owned[c->off + 1u];
		if (vendor && free_hdr && c->off + 2u <= PCI_CFG_SIZE) {
			/* Linked into msivm's list, its ID and link msivm's, its body the device's. */
			d->func.cap_end = c->off;
			int at = pci_func_add_cap(&d->func, CAP_ID_VNDR, 2, NULL);
			if (at < 0)
				return at;
			vfio_cfg_own(d, at, 2);
			continue;
		}
		for (unsigned o = c->off; o < c->off + c->len && o < PCI_CFG_SIZE; o++)
			hidden[o] = true;
	}
	unsigned n = 0;
	for (unsigned o = CAP_START; o < PCI_CFG_SIZE; o++) {
		if (d->cfg_owned[o] || hidden[o])
			continue;
		pci_func_set_passthrough(&d->func, o, 1, true);
		n++;
	}
	d->cfg_passthrough_bytes = n;
	return 0;
}
