/* VFIO BARs: mmappable pages as KVM slots that follow the guest's BAR (no exit), the rest trapped and forwarded. */
#include "vfio/vfio_dev.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#define PAGE 4096ULL

struct range {
	uint64_t start, end; /* [start, end) */
};

/* Removes [cut.start, cut.end) from the ranges in r (n of them, room for max). */
static unsigned subtract(struct range *r, unsigned n, unsigned max, struct range cut)
{
	for (unsigned i = 0; i < n; i++) {
		if (cut.end <= r[i].start || cut.start >= r[i].end)
			continue;
		struct range lo = { r[i].start, cut.start }, hi = { cut.end, r[i].end };
		bool keep_lo = cut.start > r[i].start, keep_hi = cut.end < r[i].end;
		if (keep_lo && keep_hi && n < max) {
			r[i] = lo;
			memmove(&r[i + 2], &r[i + 1], (n - i - 1) * sizeof(*r));
			r[i + 1] = hi;
			n++;
			i++;
		} else if (keep_lo) {
			r[i] = lo;
		} else if (keep_hi) {
			r[i] = hi;
		} else {
			memmove(&r[i], &r[i + 1], (n - i - 1) * sizeof(*r));
			n--;
			i--;
		}
	}
	return n;
}

/* The pages of [off, off+len) in a BAR. */
static struct range pages_of(uint64_t off, uint64_t len)
{
	return (struct range){ off & ~(PAGE - 1), (off + len + PAGE - 1) & ~(PAGE - 1) };
}

/* The BAR's areas for KVM: what VFIO lets msivm mmap, page-aligned inward, minus the pages of
 * the MSI-X table and PBA (msivm emulates those: a guest access must exit). */
static unsigned areas_of(const struct vfio_dev *d, unsigned idx, const struct vfio_region_desc *rd,
			 struct range *r, unsigned max)
{
	unsigned n = 0;
	if (!rd->mmap || rd->size < PAGE)
		return 0;
	if (rd->nsparse == 0)
		r[n++] = (struct range){ 0, rd->size };
	for (unsigned i = 0; i < rd->nsparse && i < VFIO_DEV_MAX_AREAS; i++) {
		uint64_t s = (rd->sparse[i].off + PAGE - 1) & ~(PAGE - 1);
		uint64_t e = (rd->sparse[i].off + rd->sparse[i].size) & ~(PAGE - 1);
		if (rd->sparse[i].off + rd->sparse[i].size < rd->sparse[i].off || e > rd->size)
			continue; /* wraps or runs past the region: not trusted */
		if (s < e)
			r[n++] = (struct range){ s, e };
	}
	if (d->dev_has_msix) {
		uint16_t nv = d->dev_msix_nvec;
		if (d->dev_msix.table_bar == idx)
			n = subtract(r, n, max, pages_of(d->dev_msix.table_offset, msix_table_len(nv)));
		if (d->dev_msix.pba_bar == idx)
			n = subtract(r, n, max, pages_of(d->dev_msix.pba_offset, msix_pba_len(nv)));
	}
	return n;
}

int vfio_bar_setup(struct vfio_dev *d, const struct vfio_dev_desc *desc, struct error *err)
{
	uint32_t slot = d->slot_base;
	for (unsigned i = 0; i < PCI_NUM_BARS; i++) {
		struct vfio_bar *b = &d->bars[i];
		if (!b->size)
			continue;
		struct range r[VFIO_DEV_MAX_AREAS + 2];
		unsigned n = areas_of(d, i, &desc->bars[i], r, VFIO_DEV_MAX_AREAS + 2);
		for (unsigned k = 0; k < n; k++) {
			void *host = d->ops->map(d->ctx, i, r[k].start, r[k].end - r[k].start);
			if (!host) {
				log_info("%s: BAR%u [0x%" PRIx64 ", 0x%" PRIx64 ") cannot be mapped: its "
					 "accesses exit to msivm", d->name, i, r[k].start, r[k].end);
				continue;
			}
			b->areas[b->nareas++] = (struct vfio_area){
				.off = r[k].start, .size = r[k].end - r[k].start, .host = host,
				.slot = slot++,
			};
		}
	}
	(void)err;
	return 0;
}

void vfio_bar_moved(void *opaque, unsigned idx, bool mapped, uint64_t addr)
{
	struct vfio_dev *d = opaque;
	struct vfio_bar *b = &d->bars[idx];
	for (unsigned k = 0; k < b->nareas; k++) {
		struct vfio_area *a = &b->areas[k];
		if (a->in_kvm) { /* KVM moves a slot by deleting it first */
			int ret = d->ops->set_slot(d->ctx, a->slot, 0, 0, NULL);
			if (ret)
				vfio_dev_error(d, false, "removing a BAR's KVM slot", ret);
			a->in_kvm = false;
			__atomic_fetch_add(&d->stats.slots_removed, 1, __ATOMIC_RELAXED);
		}
		if (!mapped)
			continue;
		int ret = d->ops->set_slot(d->ctx, a->slot, addr + a->off, a->size, a->host);
		if (ret) { /* the accesses still reach the device, trapped */
			vfio_dev_error(d, false, "a BAR's KVM slot", ret);
			continue;
		}
		a->in_kvm = true;
		__atomic_fetch_add(&d->stats.slots_set, 1, __ATOMIC_RELAXED);
	}
}

void vfio_bar_release(struct vfio_dev *d)
{
	for (unsigned i = 0; i < PCI_NUM_BARS; i++) {
		struct vfio_bar *b = &d->bars[i];
		for (unsigned k = 0; k < b->nareas; k++) {
			struct vfio_area *a = &b->areas[k];
			if (a->in_kvm)
				d->ops->set_slot(d->ctx, a->slot, 0, 0, NULL);
			a->in_kvm = false;
			if (a->host)
				d->ops->unmap(d->ctx, a->host, a->size);
			a->host = NULL;
		}
		b->nareas = 0;
	}
}

static bool overlaps(uint64_t off, uint32_t len, uint64_t start, uint64_t n)
{
	return off < start + n && off + len > start;
}

/* An access touching the device's own MSI-X table or PBA (all its vectors, also those past
 * the ones msivm offers; one that straddles their edge too): never forwarded to the device. */
static bool in_msix(const struct vfio_dev *d, unsigned idx, uint64_t off, uint32_t len)
{
	if (!d->dev_has_msix)
		return false;
	const struct msix_layout *l = &d->dev_msix;
	uint16_t nv = d->dev_msix_nvec;
	return (idx == l->table_bar && overlaps(off, len, l->table_offset, msix_table_len(nv))) ||
	       (idx == l->pba_bar && overlaps(off, len, l->pba_offset, msix_pba_len(nv)));
}

static void bar_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct vfio_bar *b = opaque;
	struct vfio_dev *d = b->dev;
	__atomic_fetch_add(&d->stats.bar_reads, 1, __ATOMIC_RELAXED);
	if (in_msix(d, b->idx, off, len)) {
		__atomic_fetch_add(&d->stats.msix_accesses, 1, __ATOMIC_RELAXED);
		if (!d->has_msix || !msix_bar_access(&d->msix, b->idx, off, data, len, false)) {
			__atomic_fetch_add(&d->stats.refused, 1, __ATOMIC_RELAXED);
			memset(data, 0xff, len); /* a vector msivm does not offer */
		}
		return;
	}
	int ret = d->broken ? -EIO : d->ops->read(d->ctx, b->idx, off, data, len);
	if (ret) {
		if (!d->broken)
			vfio_dev_error(d, true, "a BAR read", ret);
		memset(data, 0xff, len);
	}
}

static void bar_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct vfio_bar *b = opaque;
	struct vfio_dev *d = b->dev;
	__atomic_fetch_add(&d->stats.bar_writes, 1, __ATOMIC_RELAXED);
	if (in_msix(d, b->idx, off, len)) {
		__atomic_fetch_add(&d->stats.msix_accesses, 1, __ATOMIC_RELAXED);
		if (!d->has_msix || !msix_bar_access(&d->msix, b->idx, off, (void *)data, len, true)) {
			__atomic_fetch_add(&d->stats.refused, 1, __ATOMIC_RELAXED);
			log_ratelimited(&d->rl, LOG_WARN, "%s: write to the device's MSI-X table or "
					"PBA outside what msivm offers (BAR%u offset 0x%" PRIx64 "): "
					"dropped", d->name, b->idx, off);
		}
		return;
	}
	if (d->broken)
		return;
	int ret = d->ops->write(d->ctx, b->idx, off, data, len);
	if (ret)
		vfio_dev_error(d, true, "a BAR write", ret);
}

const struct bus_ops vfio_bar_ops = {
	.read = bar_read,
	.write = bar_write,
};
