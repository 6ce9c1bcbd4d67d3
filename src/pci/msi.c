/* MSI: capability registers -> per-message routes, mask and pending bits, delivery. */
#include "pci/msi.h"

#include <errno.h>
#include <string.h>

#define CTRL_ENABLE   0x0001
#define CTRL_MMC_SHIFT 1
#define CTRL_MME_SHIFT 4
#define CTRL_64BIT    0x0080
#define CTRL_PVM      0x0100
#define OFF_CTRL      2
#define OFF_ADDR_LO   4
#define OFF_ADDR_HI   8
#define OFF_DATA      12
#define OFF_MASK      16
#define OFF_PENDING   MSI_OFF_PENDING

int msi_init(struct msi *m, struct pci_func *f, struct gsi_routes *routes, uint32_t nvec)
{
	memset(m, 0, sizeof(*m));
	if (nvec == 0 || nvec > MSI_MAX_VECTORS)
		return -EINVAL;
	m->func = f;
	while ((1u << m->log2_capable) < nvec)
		m->log2_capable++;
	uint32_t n = 1u << m->log2_capable;
	for (uint32_t i = 0; i < n; i++) {
		int ret = irq_vec_init(&m->vecs[i], routes);
		if (ret)
			return ret;
	}
	uint8_t wmask[MSI_CAP_LEN] = { 0 };
	wmask[OFF_CTRL] = CTRL_ENABLE | (7 << CTRL_MME_SHIFT);
	uint32_t addr_lo_mask = 0xfffffffcu, all = 0xffffffffu, mask_bits = (uint32_t)((1ULL << n) - 1);
	memcpy(&wmask[OFF_ADDR_LO], &addr_lo_mask, 4);
	memcpy(&wmask[OFF_ADDR_HI], &all, 4);
	wmask[OFF_DATA] = wmask[OFF_DATA + 1] = 0xff;
	memcpy(&wmask[OFF_MASK], &mask_bits, 4);
	int off = pci_func_add_cap(f, MSI_CAP_ID, MSI_CAP_LEN, wmask);
	if (off < 0)
		return off;
	m->cap = (uint8_t)off;
	pci_cfg_set16(f, m->cap + OFF_CTRL,
		      (uint16_t)(CTRL_64BIT | CTRL_PVM | (m->log2_capable << CTRL_MMC_SHIFT)));
	return 0;
}

void msi_set_path(struct msi *m, enum irq_path path)
{
	for (uint32_t i = 0; i < (1u << m->log2_capable); i++)
		irq_vec_set_path(&m->vecs[i], path);
}

void msi_destroy(struct msi *m)
{
	for (uint32_t i = 0; i < (1u << m->log2_capable); i++)
		irq_vec_destroy(&m->vecs[i]);
}

uint32_t msi_nr_enabled(const struct msi *m)
{
	return m->enabled ? 1u << m->log2_enabled : 0;
}

static bool masked(const struct msi *m, uint32_t i)
{
	return pci_cfg_get32(m->func, m->cap + OFF_MASK) & (1u << i);
}

static void set_pending(struct msi *m, uint32_t i, bool on)
{
	uint32_t p = pci_cfg_get32(m->func, m->cap + OFF_PENDING);
	p = on ? p | (1u << i) : p & ~(1u << i);
	pci_cfg_set32(m->func, m->cap + OFF_PENDING, p);
}

/* A device that writes the eventfds itself (VFIO: commit_at_once) leaves a masked message's
 * signals in its eventfd, which has no irqfd then (lock held). Takes them into the pending bit,
 * as PCI has it (set while masked and signalled, however often), so that the guest sees them and
 * the unmask delivers them once from that bit. Messages msivm signals itself pend in msi_signal. */
static void collect(struct msi *m, uint32_t i)
{
	if (m->commit_at_once && irq_vec_take_unbound(&m->vecs[i])) {
		set_pending(m, i, true);
		m->pended[i]++;
	}
}

void msi_collect_pending(struct msi *m)
{
	pthread_mutex_lock(&m->func->lock);
	uint32_t n = msi_nr_enabled(m);
	for (uint32_t i = 0; i < n; i++)
		if (masked(m, i))
			collect(m, i);
	pthread_mutex_unlock(&m->func->lock);
}

static bool addr_valid(uint32_t lo, uint32_t hi)
{
	return hi == 0 && (lo & 0xfff00000u) == 0xfee00000u;
}

void msi_config_written(struct msi *m)
{
	struct pci_func *f = m->func;
	uint16_t ctrl = pci_cfg_get16(f, m->cap + OFF_CTRL);
	uint8_t mme = (ctrl >> CTRL_MME_SHIFT) & 7;
	if (mme > m->log2_capable) { /* the guest asked for more than offered */
		mme = m->log2_capable;
		pci_cfg_set16(f, m->cap + OFF_CTRL,
			      (uint16_t)((ctrl & ~(7u << CTRL_MME_SHIFT)) | (mme << CTRL_MME_SHIFT)));
	}
	m->enabled = ctrl & CTRL_ENABLE;
	m->log2_enabled = mme;
	uint32_t lo = pci_cfg_get32(f, m->cap + OFF_ADDR_LO), hi = pci_cfg_get32(f, m->cap + OFF_ADDR_HI);
	uint16_t data = pci_cfg_get16(f, m->cap + OFF_DATA);
	uint32_t n = msi_nr_enabled(m);
	for (uint32_t i = 0; i < (1u << m->log2_capable); i++) {
		if (i >= n || masked(m, i) || !addr_valid(lo, hi)) {
			irq_vec_unbind(&m->vecs[i]);
			continue;
		}
		/* Multiple messages: the low log2(n) data bits carry the message number. */
		uint32_t d = (data & ~(n - 1)) | i;
		/* Becoming deliverable: what the device left in the eventfd goes by the pending bit,
		 * so a signal taken by a pending read and one after it are one message, not two. */
		if (!m->vecs[i].bound)
			collect(m, i);
		if (irq_vec_bind(&m->vecs[i], lo, hi, d))
			continue;
		if (pci_cfg_get32(f, m->cap + OFF_PENDING) & (1u << i)) {
			set_pending(m, i, false);
			m->replayed[i]++;
			irq_vec_fire(&m->vecs[i]);
		}
	}
	if (m->commit_at_once)
		gsi_routes_commit(m->vecs[0].routes);
}

enum msi_path msi_signal(struct msi *m, uint32_t idx)
{
	enum msi_path path = MSI_DROPPED;
	pthread_mutex_lock(&m->func->lock);
	uint32_t n = msi_nr_enabled(m);
	if (n) {
		uint32_t i = idx % n;
		if (masked(m, i)) {
			set_pending(m, i, true);
			m->pended[i]++;
			path = MSI_PENDED;
		} else if (irq_vec_fire(&m->vecs[i]) == 0) {
			m->delivered[i]++;
			path = MSI_DELIVERED;
		}
	}
	if (path == MSI_DROPPED)
		m->dropped++;
	pthread_mutex_unlock(&m->func->lock);
	return path;
}
