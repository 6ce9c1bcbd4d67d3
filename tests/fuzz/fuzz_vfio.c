/* Fuzz target: a passed-through (VFIO) function's config view, BARs, MSI-X table/PBA and interrupt switches, with a fake device. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "vfio/vfio_dev.h"

#define BAR0_SIZE 0x4000u
#define BAR2_SIZE 0x1000u
#define NSLOTS    64
#define SLOT_BASE 8u

/* The fake device: config space and BAR memory, what msivm asked of it. */
struct fdev {
	uint8_t cfg[PCI_CFG_SIZE], cfg0[PCI_CFG_SIZE];
	uint8_t bar0[BAR0_SIZE], bar2[BAR2_SIZE];
	bool dead;
	bool guard;                     /* the device has MSI-X in BAR0: these ranges are msivm's */
	uint32_t table_lo, table_hi, pba_lo, pba_hi;
	unsigned active_index;          /* VFIO_DEV_NIRQ: none */
	struct { bool on; uint64_t gpa, size; } slot[NSLOTS];
};

static uint8_t *region(struct fdev *f, unsigned r, uint64_t off, uint32_t len)
{
	if (r == VFIO_DEV_CONFIG_REGION && off <= PCI_CFG_SIZE && len <= PCI_CFG_SIZE - off)
		return f->cfg + off;
	if (r == 0 && off <= BAR0_SIZE && len <= BAR0_SIZE - off)
		return f->bar0 + off;
	if (r == 2 && off <= BAR2_SIZE && len <= BAR2_SIZE - off)
		return f->bar2 + off;
	return NULL;
}

static int f_read(void *ctx, unsigned r, uint64_t off, void *buf, uint32_t len)
{
	struct fdev *f = ctx;
	uint8_t *p = region(f, r, off, len);
	FZ_CHECK(p != NULL); /* msivm never reaches past a region */
	if (f->dead)
		return -EIO;
	memcpy(buf, p, len);
	return 0;
}

static int f_write(void *ctx, unsigned r, uint64_t off, const void *buf, uint32_t len)
{
	struct fdev *f = ctx;
	uint8_t *p = region(f, r, off, len);
	FZ_CHECK(p != NULL);
	/* Config space: the command register's forwarded bits, or the device's own registers past
	 * the header (between its capabilities), never its MSI-X (0x50, 12 bytes) or MSI (0x60, 10
	 * bytes: 32-bit, no mask) capability: those are msivm's to emulate. */
	if (r == VFIO_DEV_CONFIG_REGION)
		FZ_CHECK((off == PCI_COMMAND && len == 2) ||
			 (off >= 0x40 && (off + len <= 0x50 || off >= 0x5c) &&
			  (off + len <= 0x60 || off >= 0x6a)));
	/* The MSI-X table and PBA are never the device's to see. */
	if (r == 0 && f->guard)
		FZ_CHECK((off + len <= f->table_lo || off >= f->table_hi) &&
			 (off + len <= f->pba_lo || off >= f->pba_hi));
	if (f->dead)
		return -EIO;
	memcpy(p, buf, len);
	return 0;
}

static int f_set_irqs(void *ctx, unsigned index, enum vfio_irq_action act, uint32_t count,
		      const int *fds)
{
	struct fdev *f = ctx;
	FZ_CHECK(index < VFIO_DEV_NIRQ);
	if (act == VFIO_ACT_UNMASK)
		return 0;
	/* One kind at a time, the old one off first. */
	if (count)
		FZ_CHECK(f->active_index == VFIO_DEV_NIRQ || f->active_index == index);
	for (uint32_t i = 0; i < count; i++)
		FZ_CHECK(fds[i] >= 0);
	f->active_index = count ? index : VFIO_DEV_NIRQ;
	return 0;
}

static int f_reset(void *ctx) { return 0; }
static void *f_map(void *ctx, unsigned r, uint64_t off, uint64_t size)
{
	return region(ctx, r, off, (uint32_t)size);
}
static void f_unmap(void *ctx, void *host, uint64_t size) {}

static int f_set_slot(void *ctx, uint32_t slot, uint64_t gpa, uint64_t size, void *host)
{
	struct fdev *f = ctx;
	FZ_CHECK(slot >= SLOT_BASE && slot < NSLOTS);
	if (size) {
		FZ_CHECK(!f->slot[slot].on); /* KVM: deleted before it moves */
		FZ_CHECK(gpa >= FZ_WIN_START && gpa + size <= FZ_WIN_END && gpa % 4096 == 0);
	}
	f->slot[slot].on = size != 0;
	f->slot[slot].gpa = gpa;
	f->slot[slot].size = size;
	return 0;
}

static const struct vfio_dev_ops fops = {
	.read = f_read, .write = f_write, .set_irqs = f_set_irqs, .reset = f_reset,
	.map = f_map, .unmap = f_unmap, .set_slot = f_set_slot,
};

static void put16(uint8_t *c, unsigned o, uint16_t v) { c[o] = (uint8_t)v; c[o + 1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *c, unsigned o, uint32_t v) { put16(c, o, (uint16_t)v); put16(c, o + 2, (uint16_t)(v >> 16)); }

/* An NVMe-like device whose capability list comes partly from the input. */
static void fdev_init(struct fdev *f, struct fz_in *in)
{
	memset(f, 0, sizeof(*f));
	f->active_index = VFIO_DEV_NIRQ;
	uint8_t *c = f->cfg;
	put16(c, PCI_VENDOR_ID, 0x1b36);
	put16(c, PCI_DEVICE_ID, 0x0010);
	put32(c, PCI_REVISION, 0x01080202);
	put16(c, PCI_STATUS, PCI_STATUS_CAPS);
	put32(c, PCI_BAR0, PCI_BAR_MEM64);
	put32(c, PCI_BAR0 + 8, 0);
	c[PCI_INT_PIN] = 1;
	c[PCI_CAP_PTR] = 0x50;
	c[0x50] = 0x11;
	c[0x51] = 0x60;
	put16(c, 0x52, (uint16_t)(fz_u8(in) % 128)); /* table size - 1: up to 128 vectors */
	put32(c, 0x54, 0x2000 | (fz_u8(in) % 8 ? 0 : fz_u8(in) % 8)); /* sometimes a wrong BIR */
	put32(c, 0x58, 0x3000);
	c[0x60] = 0x05;
	c[0x61] = fz_u8(in) % 4 ? 0 : 0x50;             /* sometimes a loop back */
	put16(c, 0x62, (uint16_t)((fz_u8(in) % 8) << 1));
	memcpy(f->cfg0, f->cfg, sizeof(f->cfg));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	return 0;
}

/* Input: u8 x5 (the device), u8 mode, then ops: u8 op % 5 and its arguments. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	static uint8_t ram[1 << 16];
	struct fz_vm vm;
	struct fdev *f = calloc(1, sizeof(*f));
	struct vfio_dev *d = calloc(1, sizeof(*d));
	if (!f || !d || fz_vm_init(&vm, ram, sizeof(ram)))
		abort();
	fdev_init(f, &in);
	struct vfio_dev_desc desc = {
		.bars = { [0] = { .size = BAR0_SIZE, .mmap = true }, [2] = { .size = BAR2_SIZE } },
		.irq_count = { 1, 8, 2048 }, .can_reset = true,
	};
	static const enum irq_mode modes[] = { IRQ_MODE_MSIX, IRQ_MODE_MSI, IRQ_MODE_INTX };
	struct error err;
	if (vfio_dev_init(d, "fz", &fops, f, &desc, modes[fz_u8(&in) % 3], &vm.routes, &vm.mmio,
			  fz_window(), SLOT_BASE, &err) == 0) {
		FZ_CHECK(vfio_dev_attach_intx(d, -1, 20) == 0);
		if (d->dev_has_msix) {
			f->guard = true;
			f->table_lo = 0x2000;
			f->table_hi = 0x2000 + msix_table_len(d->dev_msix_nvec);
			f->pba_lo = 0x3000;
			f->pba_hi = 0x3000 + msix_pba_len(d->dev_msix_nvec);
		}
		pci_func_set_bar_addr(&d->func, 0, FZ_WIN_START);
		pci_func_set_bar_addr(&d->func, 2, FZ_WIN_START + 0x10000);
		for (unsigned n = 0; in.left && n < 4096; n++) {
			switch (fz_u8(&in) % 5) {
			case 0: { /* config write */
				uint32_t off = fz_u16(&in) % 0x110, len = 1u << (fz_u8(&in) % 3);
				pci_func_cfg_write(&d->func, off, len, fz_u32(&in));
				break;
			}
			case 1: { /* config read */
				uint32_t off = fz_u16(&in) % 0x110, len = 1u << (fz_u8(&in) % 3);
				(void)pci_func_cfg_read(&d->func, off, len);
				break;
			}
			case 2: { /* a trapped BAR access */
				unsigned bar = fz_u8(&in) % 2 ? 0 : 2;
				uint32_t lim = bar ? BAR2_SIZE : BAR0_SIZE;
				uint32_t len = 1u << (fz_u8(&in) % 4);
				uint32_t off = fz_u16(&in) % (lim - len + 1);
				uint64_t v = fz_u64(&in);
				if (fz_u8(&in) & 1)
					vfio_bar_ops.write(&d->bars[bar], off, &v, len);
				else
					vfio_bar_ops.read(&d->bars[bar], off, &v, len);
				break;
			}
			case 3: { /* the device fires a vector (its eventfd) */
				uint64_t one = 1;
				unsigned v = fz_u8(&in);
				if (d->has_msix && v < d->msix.nvec)
					FZ_CHECK(write(d->msix.vecs[v].efd, &one, 8) == 8);
				else if (d->has_msi && v < (1u << d->msi.log2_capable)) /* MSI */
					FZ_CHECK(write(d->msi.vecs[v].efd, &one, 8) == 8);
				break;
			}
			default: /* the device stops answering */
				f->dead = true;
				break;
			}
			/* A KVM slot exists only for a mapped BAR, at that BAR's address. */
			for (unsigned i = 0; i < PCI_NUM_BARS; i++)
				for (unsigned k = 0; k < d->bars[i].nareas; k++) {
					const struct vfio_area *a = &d->bars[i].areas[k];
					FZ_CHECK(f->slot[a->slot].on == (d->func.bars[i].mapped && a->in_kvm));
					if (f->slot[a->slot].on)
						FZ_CHECK(f->slot[a->slot].gpa == d->func.bars[i].mapped_at + a->off);
					if (d->dev_has_msix && i == 0) /* no slot over the table or PBA pages */
						FZ_CHECK(a->off + a->size <= 0x2000 || a->off >= 0x4000);
				}
			/* An MSI message with an irqfd has nothing pending: the unmask delivered it. */
			for (unsigned v = 0; d->has_msi && v < (1u << d->msi.log2_capable); v++)
				FZ_CHECK(!(d->msi.vecs[v].bound &&
					   (pci_cfg_get32(&d->func, d->msi.cap + MSI_OFF_PENDING) >> v & 1)));
			/* msivm itself relays nothing. */
			for (unsigned v = 0; d->has_msix && v < d->msix.nvec; v++)
				FZ_CHECK(d->msix.stats[v].irqfd == 0);
		}
		vfio_dev_destroy(d);
		for (unsigned s = 0; s < NSLOTS; s++)
			FZ_CHECK(!f->slot[s].on);
		FZ_CHECK(f->active_index == VFIO_DEV_NIRQ);
	}
	vfio_dev_destroy(d);
	fz_vm_destroy(&vm);
	free(d);
	free(f);
	return 0;
}
