/* Unit tests for VFIO passthrough with a fake device: the config view, BAR areas and KVM slots, MSI-X/MSI/INTx handed to VFIO, a hostile guest, a dead device. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "fake_vm.h"
#include "vfio/vfio_dev.h"

#define BAR0_SIZE  0x4000u
#define TABLE_OFF  0x2000u
#define PBA_OFF    0x3000u
#define SLOT_BASE  32u
#define MSI_ADDR   0xfee00000u
#define CAP_PM     0x40
#define CAP_MSIX   0x50
#define CAP_MSI    0x60
#define CAP_PCIE   0x70
#define CAP_VNDR   0xb0
#define GAP_REG    0x48    /* a device register between its capabilities */

/* ---- the fake device: an NVMe-like function behind fake VFIO ops ---- */

struct slot_rec {
	bool present;
	uint64_t gpa, size;
	void *host;
};

struct fake_dev {
	uint8_t cfg[PCI_CFG_SIZE];
	uint8_t bar0[BAR0_SIZE];
	bool dead;                       /* the device stopped answering */
	unsigned reads, writes, resets, maps, unmaps;
	unsigned set_irqs_calls;
	struct { unsigned index; enum vfio_irq_action act; uint32_t count; int fds[MSIX_MAX_VECTORS]; }
		irq_log[32];
	unsigned nirq_log;
	struct slot_rec slots[64];
	unsigned slot_calls;
	unsigned outstanding_maps;
	const uint8_t *rom;              /* the ROM region (6): NULL none */
	uint32_t rom_len;
	unsigned rom_reads, rom_writes;
	bool rom_fails;                  /* the kernel cannot read it (a bad ROM header) */
};

static void put16(uint8_t *c, unsigned off, uint16_t v) { c[off] = (uint8_t)v; c[off + 1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *c, unsigned off, uint32_t v) { put16(c, off, (uint16_t)v); put16(c, off + 2, (uint16_t)(v >> 16)); }

static int f_read(void *ctx, unsigned region, uint64_t off, void *buf, uint32_t len)
{
	struct fake_dev *fd = ctx;
	fd->reads++;
	if (fd->dead)
		return -EIO;
	if (region == VFIO_DEV_CONFIG_REGION && off + len <= PCI_CFG_SIZE)
		memcpy(buf, fd->cfg + off, len);
	else if (region == 0 && off + len <= BAR0_SIZE)
		memcpy(buf, fd->bar0 + off, len);
	else if (region == VFIO_DEV_ROM_REGION && !(fd->cfg[PCI_COMMAND] & PCI_CMD_MEMORY))
		return -EIO; /* vfio-pci: no ROM (nor BAR) access while memory decode is off */
	else if (region == VFIO_DEV_ROM_REGION && off + len <= fd->rom_len && !fd->rom_fails) {
		fd->rom_reads++;
		memcpy(buf, fd->rom + off, len);
	} else
		return -ERANGE;
	return 0;
}

static int f_write(void *ctx, unsigned region, uint64_t off, const void *buf, uint32_t len)
{
	struct fake_dev *fd = ctx;
	fd->writes++;
	if (region == VFIO_DEV_ROM_REGION)
		fd->rom_writes++;
	if (fd->dead)
		return -EIO;
	if (region == VFIO_DEV_CONFIG_REGION && off + len <= PCI_CFG_SIZE)
		memcpy(fd->cfg + off, buf, len);
	else if (region == 0 && off + len <= BAR0_SIZE)
		memcpy(fd->bar0 + off, buf, len);
	else
		return -ERANGE;
	return 0;
}

static int f_set_irqs(void *ctx, unsigned index, enum vfio_irq_action act, uint32_t count,
		      const int *fds)
{
	struct fake_dev *fd = ctx;
	fd->set_irqs_calls++;
	if (fd->nirq_log < 32) {
		fd->irq_log[fd->nirq_log].index = index;
		fd->irq_log[fd->nirq_log].act = act;
		fd->irq_log[fd->nirq_log].count = count;
		for (uint32_t i = 0; i < count && i < MSIX_MAX_VECTORS; i++)
			fd->irq_log[fd->nirq_log].fds[i] = fds[i];
		fd->nirq_log++;
	}
	return 0;
}

static int f_reset(void *ctx)
{
	((struct fake_dev *)ctx)->resets++;
	return 0;
}

static void *f_map(void *ctx, unsigned region, uint64_t off, uint64_t size)
{
	struct fake_dev *fd = ctx;
	fd->maps++;
	fd->outstanding_maps++;
	return region == 0 ? fd->bar0 + off : NULL;
}

static void f_unmap(void *ctx, void *host, uint64_t size)
{
	struct fake_dev *fd = ctx;
	fd->unmaps++;
	fd->outstanding_maps--;
}

static int f_set_slot(void *ctx, uint32_t slot, uint64_t gpa, uint64_t size, void *host)
{
	struct fake_dev *fd = ctx;
	fd->slot_calls++;
	if (slot >= 64)
		return -EINVAL;
	if (size && fd->slots[slot].present)
		return -EEXIST; /* KVM: a slot moves by being deleted first */
	fd->slots[slot] = (struct slot_rec){ size != 0, gpa, size, host };
	return 0;
}

static const struct vfio_dev_ops fake_ops = {
	.read = f_read, .write = f_write, .set_irqs = f_set_irqs, .reset = f_reset,
	.map = f_map, .unmap = f_unmap, .set_slot = f_set_slot,
};

/* An NVMe-like device: BAR0 64-bit 16 KiB with the MSI-X table at 0x2000 and PBA at 0x3000,
 * capabilities PM -> MSI-X -> MSI -> PCIe. */
static void fake_dev_init(struct fake_dev *fd, uint16_t msix_nvec)
{
	memset(fd, 0, sizeof(*fd));
	uint8_t *c = fd->cfg;
	put16(c, PCI_VENDOR_ID, 0x1b36);
	put16(c, PCI_DEVICE_ID, 0x0010);
	c[PCI_REVISION] = 2;
	c[PCI_CLASS_PROG] = 0x02;
	c[PCI_CLASS_PROG + 1] = 0x08;
	c[PCI_CLASS_PROG + 2] = 0x01;
	put16(c, PCI_STATUS, PCI_STATUS_CAPS);
	put16(c, PCI_COMMAND, PCI_CMD_MEMORY | PCI_CMD_MASTER); /* as the host left it */
	put32(c, PCI_BAR0, PCI_BAR_MEM64 | 0xfe000000u);
	put32(c, 0x30, 0xfeb00001u); /* an expansion ROM */
	c[PCI_CAP_PTR] = CAP_PM;
	c[PCI_INT_PIN] = 1;
	c[CAP_PM] = 0x01;
	c[CAP_PM + 1] = CAP_MSIX;
	c[CAP_MSIX] = 0x11;
	c[CAP_MSIX + 1] = CAP_MSI;
	put16(c, CAP_MSIX + 2, (uint16_t)(msix_nvec - 1));
	put32(c, CAP_MSIX + 4, TABLE_OFF | 0);
	put32(c, CAP_MSIX + 8, PBA_OFF | 0);
	c[CAP_MSI] = 0x05;
	c[CAP_MSI + 1] = CAP_PCIE;
	put16(c, CAP_MSI + 2, 2 << 1); /* MMC: 4 messages */
	c[CAP_PCIE] = 0x10;
	c[CAP_PCIE + 1] = CAP_VNDR;
	put16(c, CAP_PCIE + 2, 2);                /* version 2: 0x3c bytes, to 0xab */
	put32(c, CAP_PCIE + 0x0c, 0x11223344u);   /* its link capabilities */
	c[CAP_VNDR] = 0x09;
	c[CAP_VNDR + 1] = 0;
	c[CAP_VNDR + 2] = 8;                      /* its length */
	put32(c, CAP_VNDR + 4, 0x5a5a0001u);
	put32(c, GAP_REG, 0xcafe1234u);
	put32(c, 0xe0, 0x0badf00du);
}

static struct vfio_dev_desc fake_desc(void)
{
	struct vfio_dev_desc d = { 0 };
	d.bars[0] = (struct vfio_region_desc){ .size = BAR0_SIZE, .mmap = true };
	d.irq_count[VFIO_DEV_IRQ_INTX] = 1;
	d.irq_count[VFIO_DEV_IRQ_MSI] = 4;
	d.irq_count[VFIO_DEV_IRQ_MSIX] = 2048;
	d.can_reset = true;
	return d;
}

struct fx {
	struct fake_vm *vm;
	struct fake_dev fd;
	struct vfio_dev d;
	bool inited;
};

/* A device built by fake_dev_init, then changed by `tweak` (may be NULL), behind vfio_dev. */
static struct fx *fx_new_with(uint16_t nvec, enum irq_mode mode, void (*tweak)(struct fake_dev *))
{
	struct fx *x = calloc(1, sizeof(*x));
	assert_non_null(x);
	x->vm = fake_vm_new();
	assert_non_null(x->vm);
	fake_dev_init(&x->fd, nvec);
	if (tweak)
		tweak(&x->fd);
	struct vfio_dev_desc desc = fake_desc();
	struct error err = { "" };
	int ret = vfio_dev_init(&x->d, "vfio0", &fake_ops, &x->fd, &desc, mode, &x->vm->routes,
				&x->vm->mmio, fake_window(), SLOT_BASE, &err);
	if (ret)
		fail_msg("init: %s", err.msg);
	x->inited = true;
	return x;
}

static struct fx *fx_new(uint16_t nvec, enum irq_mode mode) { return fx_new_with(nvec, mode, NULL); }

static void fx_free(struct fx *x)
{
	if (x->inited)
		vfio_dev_destroy(&x->d);
	fake_vm_free(x->vm);
	free(x);
}

static uint32_t cfg_rd(struct fx *x, uint32_t off, uint32_t len) { return pci_func_cfg_read(&x->d.func, off, len); }
static void cfg_wr(struct fx *x, uint32_t off, uint32_t len, uint32_t v) { pci_func_cfg_write(&x->d.func, off, len, v); }

static uint64_t bar_rd(struct fx *x, uint64_t off, uint32_t len)
{
	uint64_t v = 0;
	vfio_bar_ops.read(&x->d.bars[0], off, &v, len);
	return v;
}

static void bar_wr(struct fx *x, uint64_t off, uint64_t v, uint32_t len)
{
	vfio_bar_ops.write(&x->d.bars[0], off, &v, len);
}

/* The guest's MSI-X view: the capability's offset in msivm's list. */
static uint8_t view_cap(struct fx *x, uint8_t id)
{
	uint8_t off = (uint8_t)cfg_rd(x, PCI_CAP_PTR, 1);
	for (int n = 0; off && n < 48; n++, off = (uint8_t)cfg_rd(x, off + 1u, 1))
		if (cfg_rd(x, off, 1) == id)
			return off;
	return 0;
}

static void program_vector(struct fx *x, unsigned v, uint32_t data, bool masked)
{
	bar_wr(x, TABLE_OFF + v * 16u, MSI_ADDR, 4);
	bar_wr(x, TABLE_OFF + v * 16u + 4, 0, 4);
	bar_wr(x, TABLE_OFF + v * 16u + 8, data, 4);
	bar_wr(x, TABLE_OFF + v * 16u + 12, masked, 4);
}

static void msix_enable(struct fx *x, bool on)
{
	uint8_t cap = view_cap(x, MSIX_CAP_ID);
	assert_int_not_equal(cap, 0);
	cfg_wr(x, cap + 2u, 2, on ? MSIX_CTRL_ENABLE : 0);
}

/* ---- the config view ---- */

static void test_view_shows_device_ids_and_only_emulated_caps(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	assert_int_equal(cfg_rd(x, PCI_VENDOR_ID, 2), 0x1b36);
	assert_int_equal(cfg_rd(x, PCI_DEVICE_ID, 2), 0x0010);
	assert_int_equal(cfg_rd(x, PCI_REVISION, 4) >> 8, 0x010802);
	assert_int_equal(cfg_rd(x, PCI_REVISION, 1), 2);
	assert_int_equal(cfg_rd(x, 0x30, 4), 0); /* ROM BAR off */
	/* The list holds MSI-X, MSI (msivm's) and the vendor capability (the device's); PM and
	 * PCIe are hidden. */
	uint8_t ids[8], n = 0;
	for (uint8_t off = (uint8_t)cfg_rd(x, PCI_CAP_PTR, 1); off && n < 8;
	     off = (uint8_t)cfg_rd(x, off + 1u, 1))
		ids[n++] = (uint8_t)cfg_rd(x, off, 1);
	assert_int_equal(n, 3);
	assert_int_equal(ids[0], MSIX_CAP_ID);
	assert_int_equal(ids[1], MSI_CAP_ID);
	assert_int_equal(ids[2], 0x09);
	uint8_t cap = view_cap(x, MSIX_CAP_ID);
	assert_int_equal(cfg_rd(x, cap + 2u, 2), 7);                 /* 8 vectors */
	assert_int_equal(cfg_rd(x, cap + 4u, 4), TABLE_OFF | 0);
	assert_int_equal(cfg_rd(x, cap + 8u, 4), PBA_OFF | 0);
	/* Reset at init, and the device's decode and bus master turned off until the guest asks. */
	assert_int_equal(x->fd.resets, 1);
	assert_int_equal(x->fd.cfg[PCI_COMMAND] & (PCI_CMD_MEMORY | PCI_CMD_MASTER), 0);
	/* BAR sizing as on hardware. */
	cfg_wr(x, PCI_BAR0, 4, 0xffffffff);
	cfg_wr(x, PCI_BAR0 + 4, 4, 0xffffffff);
	assert_int_equal(cfg_rd(x, PCI_BAR0, 4), (uint32_t)~(BAR0_SIZE - 1) | PCI_BAR_MEM64);
	assert_int_equal(cfg_rd(x, PCI_BAR0 + 4, 4), 0xffffffff);
	fx_free(x);
}

static void bar0_prefetchable(struct fake_dev *fd)
{
	put32(fd->cfg, PCI_BAR0, PCI_BAR_MEM64 | 0x08 | 0xfe000000u);
}

static void test_bar_keeps_the_device_prefetchable_bit(void **state)
{
	struct fx *x = fx_new_with(8, IRQ_MODE_MSIX, bar0_prefetchable);
	assert_int_equal(cfg_rd(x, PCI_BAR0, 4) & 0xf, PCI_BAR_MEM64 | 0x08);
	cfg_wr(x, PCI_BAR0, 4, 0xffffffff); /* sizing keeps the type bits */
	assert_int_equal(cfg_rd(x, PCI_BAR0, 4), (uint32_t)~(BAR0_SIZE - 1) | PCI_BAR_MEM64 | 0x08);
	pci_func_set_bar_addr(&x->d.func, 0, fake_window().start);
	assert_int_equal(cfg_rd(x, PCI_BAR0, 4), (uint32_t)fake_window().start | PCI_BAR_MEM64 | 0x08);
	fx_free(x);
	x = fx_new(8, IRQ_MODE_MSIX); /* and a device without it has none */
	assert_int_equal(cfg_rd(x, PCI_BAR0, 4) & 0xf, PCI_BAR_MEM64);
	fx_free(x);
}

static void test_device_registers_between_caps_reach_the_device(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	/* msivm's MSI-X and MSI sit where the device has its own. */
	assert_int_equal(view_cap(x, MSIX_CAP_ID), CAP_MSIX);
	assert_int_equal(view_cap(x, MSI_CAP_ID), CAP_MSI);
	/* A register in a gap reads and writes the device's, at any width. */
	assert_int_equal(cfg_rd(x, GAP_REG, 4), 0xcafe1234u);
	assert_int_equal(cfg_rd(x, GAP_REG + 2, 2), 0xcafe);
	assert_int_equal(cfg_rd(x, 0xe0, 4), 0x0badf00du);
	cfg_wr(x, GAP_REG, 4, 0x12345678u);
	assert_int_equal(x->fd.cfg[GAP_REG], 0x78);
	assert_int_equal(x->fd.cfg[GAP_REG + 3], 0x12);
	assert_int_equal(cfg_rd(x, GAP_REG, 4), 0x12345678u);
	assert_true(x->d.stats.cfg_reads >= 4);
	assert_int_equal(x->d.stats.cfg_writes, 1);
	/* The vendor capability's body is the device's, read and written. */
	assert_int_equal(view_cap(x, 0x09), CAP_VNDR);
	assert_int_equal(cfg_rd(x, CAP_VNDR + 2, 1), 8);
	assert_int_equal(cfg_rd(x, CAP_VNDR + 4, 4), 0x5a5a0001u);
	cfg_wr(x, CAP_VNDR + 4, 2, 0x0002);
	assert_int_equal(x->fd.cfg[CAP_VNDR + 4], 0x02);
	/* Its link is msivm's: the device's own ID and link bytes are never written. */
	cfg_wr(x, CAP_VNDR, 2, 0x4040);
	assert_int_equal(x->fd.cfg[CAP_VNDR], 0x09);
	assert_int_equal(cfg_rd(x, CAP_VNDR + 1, 1), 0);
	/* Hidden capabilities read 0 and take nothing: PM, and PCIe past msivm's MSI. */
	assert_int_equal(cfg_rd(x, CAP_PM, 4), 0);
	cfg_wr(x, CAP_PM + 4, 4, 0x3);
	assert_int_equal(x->fd.cfg[CAP_PM + 4], 0);
	assert_int_equal(cfg_rd(x, CAP_PCIE + 0x0c, 4), 0);
	assert_int_equal(x->fd.cfg[CAP_PCIE + 0x0c], 0x44);
	/* A read the device fails reads all-ones there, logged and counted; the rest still works. */
	x->fd.dead = true;
	assert_int_equal(cfg_rd(x, GAP_REG, 4), 0xffffffffu);
	assert_int_equal(x->d.stats.device_errors, 1);
	assert_int_equal(cfg_rd(x, PCI_VENDOR_ID, 2), 0x1b36);
	x->fd.dead = false;
	fx_free(x);
}

/* The device's MSI at 0xf0: msivm's (24 bytes) would run past the space there. */
static void msi_at_the_end(struct fake_dev *fd)
{
	fd->cfg[CAP_MSIX + 1] = 0xf0;
	fd->cfg[0xf0] = 0x05;
	fd->cfg[0xf1] = CAP_PCIE;
	put16(fd->cfg, 0xf2, 2 << 1);
}

static void test_caps_that_do_not_fit_are_appended(void **state)
{
	/* msivm's MSI is appended after its MSI-X instead; the device's own MSI bytes stay hidden. */
	struct fx *x = fx_new_with(8, IRQ_MODE_MSIX, msi_at_the_end);
	struct vfio_dev *d = &x->d;
	assert_int_equal(d->msix.cap, CAP_MSIX);
	assert_int_equal(d->msi.cap, CAP_MSIX + MSIX_CAP_LEN);
	for (unsigned o = d->msi.cap; o < d->msi.cap + (unsigned)MSI_CAP_LEN; o++)
		assert_false(pci_func_is_passthrough(&d->func, o));
	for (unsigned o = 0xf0; o < 0xfa; o++) /* the device's MSI: 10 bytes, hidden */
		assert_false(pci_func_is_passthrough(&d->func, o));
	assert_true(pci_func_is_passthrough(&d->func, 0xfa));
	assert_int_equal(cfg_rd(x, 0xf0, 4), 0);
	fx_free(x);
}

static void test_modes_limit_the_caps_offered(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSI);
	assert_int_equal(view_cap(x, MSIX_CAP_ID), 0);
	assert_int_not_equal(view_cap(x, MSI_CAP_ID), 0);
	fx_free(x);
	x = fx_new(8, IRQ_MODE_INTX);
	assert_int_equal(view_cap(x, MSIX_CAP_ID), 0);
	assert_int_equal(view_cap(x, MSI_CAP_ID), 0);
	assert_int_equal(cfg_rd(x, PCI_INT_PIN, 1), 1);
	/* MSI-X hidden, its table still never reaches the device nor KVM slots. */
	assert_int_equal(x->d.bars[0].nareas, 1);
	x->fd.bar0[TABLE_OFF] = 0x5a;
	bar_wr(x, TABLE_OFF, 0x12345678, 4);
	assert_int_equal(x->fd.bar0[TABLE_OFF], 0x5a);
	fx_free(x);
}

static void test_bad_devices_are_refused(void **state)
{
	struct fake_vm *vm = fake_vm_new();
	struct fake_dev *fd = calloc(1, sizeof(*fd));
	struct vfio_dev *d = calloc(1, sizeof(*d));
	assert_non_null(vm);
	assert_non_null(fd);
	assert_non_null(d);
	struct vfio_dev_desc desc = fake_desc();
	struct error err = { "" };
	fake_dev_init(fd, 8);
	fd->cfg[PCI_HEADER_TYPE] = 1;
	assert_int_equal(vfio_dev_init(d, "v", &fake_ops, fd, &desc, IRQ_MODE_MSIX, &vm->routes,
				       &vm->mmio, fake_window(), SLOT_BASE, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "bridges"));
	vfio_dev_destroy(d);
	fake_dev_init(fd, 8);
	fd->dead = true;
	assert_true(vfio_dev_init(d, "v", &fake_ops, fd, &desc, IRQ_MODE_MSIX, &vm->routes,
				  &vm->mmio, fake_window(), SLOT_BASE, &err) < 0);
	vfio_dev_destroy(d);
	fake_dev_init(fd, 8);
	put16(fd->cfg, PCI_VENDOR_ID, 0xffff);
	assert_int_equal(vfio_dev_init(d, "v", &fake_ops, fd, &desc, IRQ_MODE_MSIX, &vm->routes,
				       &vm->mmio, fake_window(), SLOT_BASE, &err), -ENODEV);
	vfio_dev_destroy(d);
	/* A capability list that loops is walked a bounded number of times. */
	fake_dev_init(fd, 8);
	fd->cfg[CAP_PCIE + 1] = CAP_PM;
	fd->cfg[CAP_MSI] = 0x09; /* no MSI now: a loop PM -> MSI-X -> 0x60 -> PCIe -> PM ... */
	assert_int_equal(vfio_dev_init(d, "v", &fake_ops, fd, &desc, IRQ_MODE_MSI, &vm->routes,
				       &vm->mmio, fake_window(), SLOT_BASE, &err), 0);
	assert_false(d->has_msi);
	vfio_dev_destroy(d);
	free(d);
	free(fd);
	fake_vm_free(vm);
}

/* ---- BARs: KVM slots for the mappable pages, following decode and moves ---- */

static void test_bar_pages_follow_decode_and_moves(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	/* [0, 0x2000) mapped; the table page and the PBA page stay trapped. */
	assert_int_equal(x->d.bars[0].nareas, 1);
	assert_int_equal(x->d.bars[0].areas[0].off, 0);
	assert_int_equal(x->d.bars[0].areas[0].size, TABLE_OFF);
	assert_false(x->fd.slots[SLOT_BASE].present);
	pci_func_set_bar_addr(&x->d.func, 0, 0xC0010000);
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY | PCI_CMD_MASTER);
	assert_true(x->fd.slots[SLOT_BASE].present);
	assert_true(x->fd.slots[SLOT_BASE].gpa == 0xC0010000);
	assert_true(x->fd.slots[SLOT_BASE].size == TABLE_OFF);
	assert_ptr_equal(x->fd.slots[SLOT_BASE].host, x->fd.bar0);
	/* The guest's decode and bus master reached the device. */
	assert_int_equal(x->fd.cfg[PCI_COMMAND] & (PCI_CMD_MEMORY | PCI_CMD_MASTER),
			 PCI_CMD_MEMORY | PCI_CMD_MASTER);
	/* Move: the slot goes with the BAR. */
	cfg_wr(x, PCI_BAR0, 4, 0xC0020000 | PCI_BAR_MEM64);
	assert_true(x->fd.slots[SLOT_BASE].present);
	assert_true(x->fd.slots[SLOT_BASE].gpa == 0xC0020000);
	/* Decode off: no slot. */
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MASTER);
	assert_false(x->fd.slots[SLOT_BASE].present);
	assert_int_equal(x->d.stats.device_errors, 0);
	fx_free(x);
}

static void test_bar_over_ram_or_another_bar_is_refused(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	/* Another device's BAR on the bus at 0xC0040000. */
	static const struct bus_ops none = { 0 };
	assert_int_equal(bus_register(&x->vm->mmio, 0xC0040000, 0x1000, &none, NULL, "other"), 0);
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	uint64_t refused = x->d.func.refused_maps;
	cfg_wr(x, PCI_BAR0, 4, 0xC0040000 | PCI_BAR_MEM64); /* over the other BAR */
	assert_false(x->fd.slots[SLOT_BASE].present);
	cfg_wr(x, PCI_BAR0, 4, 0x00100000 | PCI_BAR_MEM64); /* over guest RAM */
	assert_false(x->fd.slots[SLOT_BASE].present);
	cfg_wr(x, PCI_BAR0 + 4, 4, 0x10);                  /* far outside the window */
	assert_false(x->fd.slots[SLOT_BASE].present);
	assert_true(x->d.func.refused_maps >= refused + 3);
	/* Back inside the window: mapped again. */
	cfg_wr(x, PCI_BAR0 + 4, 4, 0);
	cfg_wr(x, PCI_BAR0, 4, 0xC0080000 | PCI_BAR_MEM64);
	assert_true(x->fd.slots[SLOT_BASE].present);
	fx_free(x);
}

static void test_trapped_bar_access_reaches_device(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	/* An access outside the mapped pages and the MSI-X structures (the PBA page past the
	 * PBA itself) is forwarded. */
	bar_wr(x, PBA_OFF + 0x100, 0xabcd, 4);
	assert_int_equal(x->fd.bar0[PBA_OFF + 0x100], 0xcd);
	assert_int_equal(bar_rd(x, PBA_OFF + 0x100, 4), 0xabcd);
	fx_free(x);
}

/* ---- interrupts ---- */

static void test_msix_enable_hands_vectors_eventfds_to_vfio(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	assert_int_equal(vfio_dev_attach_intx(&x->d, -1, 20), 0);
	assert_int_equal(x->d.active, VFIO_IRQ_INTX);
	assert_int_equal(x->fd.nirq_log, 2);
	assert_int_equal(x->fd.irq_log[0].index, VFIO_DEV_IRQ_INTX);
	assert_int_equal(x->fd.irq_log[0].act, VFIO_ACT_TRIGGER);
	assert_int_equal(x->fd.irq_log[0].fds[0], x->d.intx.fd);
	assert_int_equal(x->fd.irq_log[1].act, VFIO_ACT_UNMASK);
	assert_int_equal(x->fd.irq_log[1].fds[0], x->d.intx.resample_fd);
	msix_enable(x, true);
	assert_int_equal(x->d.active, VFIO_IRQ_MSIX);
	assert_int_equal(x->fd.nirq_log, 4);
	assert_int_equal(x->fd.irq_log[2].index, VFIO_DEV_IRQ_INTX); /* INTx off first */
	assert_int_equal(x->fd.irq_log[2].count, 0);
	assert_int_equal(x->fd.irq_log[3].index, VFIO_DEV_IRQ_MSIX);
	assert_int_equal(x->fd.irq_log[3].count, 8);
	for (unsigned i = 0; i < 8; i++) /* the vector's own irqfd eventfd: KVM can post it */
		assert_int_equal(x->fd.irq_log[3].fds[i], x->d.msix.vecs[i].efd);
	/* A rewrite of the capability with the same state does not call VFIO again. */
	msix_enable(x, true);
	assert_int_equal(x->fd.nirq_log, 4);
	/* Unmasking a programmed vector commits its route at once (the device fires directly). */
	uint64_t commits = x->vm->routes.commits;
	program_vector(x, 1, 0x41, false);
	assert_true(x->vm->routes.commits > commits);
	assert_true(x->d.msix.vecs[1].bound);
	assert_true(fake_route(x->vm, x->d.msix.vecs[1].gsi)->present);
	msix_enable(x, false);
	assert_int_equal(x->d.active, VFIO_IRQ_INTX);
	assert_int_equal(x->fd.irq_log[4].index, VFIO_DEV_IRQ_MSIX);
	assert_int_equal(x->fd.irq_log[4].count, 0);
	assert_int_equal(x->fd.irq_log[5].index, VFIO_DEV_IRQ_INTX);
	fx_free(x);
}

static void test_mask_fire_unmask_delivers_exactly_once(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	msix_enable(x, true);
	program_vector(x, 2, 0x42, true); /* masked */
	assert_false(x->d.msix.vecs[2].bound);
	uint64_t one = 1;
	int efd = x->d.msix.vecs[2].efd;
	/* The device fires twice while the guest has the vector masked. */
	assert_int_equal(write(efd, &one, 8), 8);
	assert_int_equal(write(efd, &one, 8), 8);
	/* The guest looks at the PBA: the vector is pending. */
	assert_true((bar_rd(x, PBA_OFF, 8) & (1u << 2)) != 0);
	/* Unmask: delivered once (the eventfd, which is KVM's irqfd, written once). */
	bar_wr(x, TABLE_OFF + 2 * 16u + 12, 0, 4);
	assert_true(x->d.msix.vecs[2].bound);
	assert_int_equal(efd_take(efd), 1);
	assert_int_equal(bar_rd(x, PBA_OFF, 8) & (1u << 2), 0);
	assert_int_equal(x->d.msix.stats[2].replayed, 1);
	/* msivm never relayed an interrupt of an unmasked vector itself. */
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(x->d.msix.stats[i].irqfd, 0);
	/* Without a PBA read: the count waits in the eventfd; the unmask takes it into the
	 * pending bit and delivers that once, after the route is in KVM. */
	bar_wr(x, TABLE_OFF + 2 * 16u + 12, 1, 4);
	assert_int_equal(write(efd, &one, 8), 8);
	bar_wr(x, TABLE_OFF + 2 * 16u + 12, 0, 4);
	assert_int_equal(efd_take(efd), 1);
	assert_int_equal(x->d.msix.stats[2].replayed, 2);
	/* A signal before a PBA read and one after it: one interrupt at the unmask, not two (a
	 * count left in the eventfd at the irqfd's assignment and a replay would be two). */
	bar_wr(x, TABLE_OFF + 2 * 16u + 12, 1, 4);
	assert_int_equal(write(efd, &one, 8), 8);
	assert_true((bar_rd(x, PBA_OFF, 8) & (1u << 2)) != 0);
	assert_int_equal(write(efd, &one, 8), 8);
	bar_wr(x, TABLE_OFF + 2 * 16u + 12, 0, 4);
	assert_int_equal(efd_take(efd), 1);
	assert_int_equal(x->d.msix.stats[2].replayed, 3);
	assert_int_equal(bar_rd(x, PBA_OFF, 8) & (1u << 2), 0);
	fx_free(x);
}

/* relay=on: VFIO gets msivm's own eventfds; each signal is read by the loop and delivered
 * through the vector (counted as relayed), or pended while masked and delivered once at the
 * unmask. */
static void test_relay_mode_delivers_through_msivm(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	struct evloop loop;
	assert_int_equal(evloop_init(&loop), 0);
	struct error err = { "" };
	assert_int_equal(vfio_relay_start(&x->d, &loop, &err), 0);
	msix_enable(x, true);
	assert_int_equal(x->d.active, VFIO_IRQ_MSIX);
	const unsigned last = x->fd.nirq_log - 1;
	assert_int_equal(x->fd.irq_log[last].index, VFIO_DEV_IRQ_MSIX);
	assert_int_equal(x->fd.irq_log[last].count, 8);
	for (unsigned i = 0; i < 8; i++) { /* not the irqfd eventfds: KVM never sees VFIO's */
		assert_int_equal(x->fd.irq_log[last].fds[i], x->d.relay.vecs[i].fd);
		assert_int_not_equal(x->d.relay.vecs[i].fd, x->d.msix.vecs[i].efd);
	}
	program_vector(x, 1, 0x41, false);
	program_vector(x, 2, 0x42, true);
	uint64_t one = 1;
	/* The device fires vector 1 three times before msivm's loop runs: one message. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(write(x->d.relay.vecs[1].fd, &one, 8), 8);
	assert_int_equal(efd_take(x->d.msix.vecs[1].efd), 0); /* nothing reached KVM yet */
	assert_int_equal(evloop_run_once(&loop, 0), 1);
	assert_int_equal(efd_take(x->d.msix.vecs[1].efd), 1);
	assert_int_equal(x->d.msix.stats[1].irqfd, 1);
	/* Once more: every interrupt is one more relay. */
	assert_int_equal(write(x->d.relay.vecs[1].fd, &one, 8), 8);
	assert_int_equal(evloop_run_once(&loop, 0), 1);
	assert_int_equal(efd_take(x->d.msix.vecs[1].efd), 1);
	assert_int_equal(x->d.msix.stats[1].irqfd, 2);
	/* Masked vector 2: pended, not delivered; the unmask delivers it once. */
	assert_int_equal(write(x->d.relay.vecs[2].fd, &one, 8), 8);
	assert_int_equal(evloop_run_once(&loop, 0), 1);
	assert_int_equal(x->d.msix.stats[2].pended, 1);
	assert_int_equal(x->d.msix.stats[2].irqfd, 0);
	assert_true((bar_rd(x, PBA_OFF, 8) & (1u << 2)) != 0);
	bar_wr(x, TABLE_OFF + 2 * 16u + 12, 0, 4);
	assert_int_equal(efd_take(x->d.msix.vecs[2].efd), 1);
	assert_int_equal(x->d.msix.stats[2].replayed, 1);
	assert_int_equal(bar_rd(x, PBA_OFF, 8) & (1u << 2), 0);
	/* An empty eventfd relays nothing. */
	assert_int_equal(vfio_relay_run(&x->d, 1), -1);
	assert_int_equal(vfio_relay_run(&x->d, 60), -1);
	int fd1 = x->d.relay.vecs[1].fd;
	fx_free(x); /* interrupts off in VFIO first, then the relay's fds closed */
	assert_int_equal(fcntl(fd1, F_GETFD), -1);
	evloop_destroy(&loop);
}

/* relay=on needs MSI-X offered to the guest. */
static void test_relay_refused_without_msix(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_INTX);
	struct error err = { "" };
	assert_int_equal(vfio_relay_start(&x->d, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "relay=on"));
	fx_free(x);
}

static void test_guest_that_never_unmasks(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	msix_enable(x, true);
	program_vector(x, 0, 0x40, true);
	uint64_t one = 1;
	for (int i = 0; i < 1000; i++)
		assert_int_equal(write(x->d.msix.vecs[0].efd, &one, 8), 8);
	assert_true((bar_rd(x, PBA_OFF, 8) & 1) != 0);
	assert_false(x->d.msix.vecs[0].bound);
	assert_int_equal(efd_take(x->d.msix.vecs[0].efd), 0); /* taken into the PBA bit */
	assert_int_equal(x->d.msix.stats[0].irqfd, 0);
	fx_free(x);
}

static void test_msix_table_writes_out_of_range(void **state)
{
	struct fx *x = fx_new(80, IRQ_MODE_MSIX); /* offered: 64 */
	assert_int_equal(x->d.msix.nvec, MSIX_MAX_VECTORS);
	assert_int_equal(cfg_rd(x, view_cap(x, MSIX_CAP_ID) + 2u, 2), MSIX_MAX_VECTORS - 1);
	memset(x->fd.bar0 + TABLE_OFF, 0x5a, 80 * 16);
	uint64_t refused = x->d.stats.refused;
	bar_wr(x, TABLE_OFF + 70 * 16u, MSI_ADDR, 4);    /* an entry past those offered */
	assert_int_equal(x->fd.bar0[TABLE_OFF + 70 * 16], 0x5a); /* never the device's */
	assert_int_equal(bar_rd(x, TABLE_OFF + 70 * 16u, 4), 0xffffffff);
	assert_int_equal(x->d.stats.refused, refused + 2);
	uint64_t bad = x->d.msix.bad_accesses;
	bar_wr(x, TABLE_OFF + 2, 1, 4);                   /* misaligned */
	bar_wr(x, TABLE_OFF + 16, 1, 2);                  /* 2-byte */
	bar_wr(x, TABLE_OFF + 63 * 16u + 12, 0xffffffff, 8); /* runs past the last entry */
	assert_int_equal(x->d.msix.bad_accesses, bad + 3);
	/* A write that straddles the table's start: refused whole, neither half reaches the device. */
	memset(x->fd.bar0 + TABLE_OFF - 8, 0x33, 8);
	bar_wr(x, TABLE_OFF - 4, 0x1122334455667788ull, 8);
	assert_int_equal(x->fd.bar0[TABLE_OFF - 4], 0x33);
	assert_int_equal(x->fd.bar0[TABLE_OFF], 0x5a);
	assert_true(bar_rd(x, TABLE_OFF - 4, 8) == ~0ULL);
	/* Only the mask bit of vector control is writable. */
	bar_wr(x, TABLE_OFF + 3 * 16u + 12, 0xfffffffe, 4);
	assert_int_equal(bar_rd(x, TABLE_OFF + 3 * 16u + 12, 4), 0);
	fx_free(x);
}

static void test_msi_enable_hands_messages_to_vfio(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSI);
	uint8_t cap = view_cap(x, MSI_CAP_ID);
	cfg_wr(x, cap + 4u, 4, MSI_ADDR);
	cfg_wr(x, cap + 12u, 2, 0x50);
	cfg_wr(x, cap + 2u, 2, 1 | (1 << 4)); /* enable, 2 messages */
	assert_int_equal(x->d.active, VFIO_IRQ_MSI);
	unsigned last = x->fd.nirq_log - 1;
	assert_int_equal(x->fd.irq_log[last].index, VFIO_DEV_IRQ_MSI);
	assert_int_equal(x->fd.irq_log[last].count, 2);
	assert_int_equal(x->fd.irq_log[last].fds[1], x->d.msi.vecs[1].efd);
	assert_true(x->d.msi.vecs[1].bound);
	/* Four messages: VFIO gets them again. */
	cfg_wr(x, cap + 2u, 2, 1 | (2 << 4));
	assert_int_equal(x->fd.irq_log[x->fd.nirq_log - 1].count, 4);
	fx_free(x);
}

/* Plain MSI, message 1 masked, MSI enabled with 2 messages (the device's eventfds at VFIO). */
static struct fx *msi_one_masked(uint8_t *cap)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSI);
	*cap = view_cap(x, MSI_CAP_ID);
	cfg_wr(x, *cap + 4u, 4, MSI_ADDR);
	cfg_wr(x, *cap + 12u, 2, 0x50);
	cfg_wr(x, *cap + 16u, 4, 1u << 1); /* message 1 masked */
	cfg_wr(x, *cap + 2u, 2, 1 | (1 << 4)); /* enable, 2 messages */
	assert_int_equal(x->d.active, VFIO_IRQ_MSI);
	assert_true(x->d.msi.vecs[0].bound);
	assert_false(x->d.msi.vecs[1].bound);
	return x;
}

/* Plain MSI with a masked message, no pending read: the device's signals wait in the eventfd
 * (no irqfd while masked); the unmask takes them into the pending bit and delivers that once,
 * after the route is in KVM. */
static void test_msi_mask_fire_unmask_delivers_once(void **state)
{
	uint8_t cap;
	struct fx *x = msi_one_masked(&cap);
	int efd = x->d.msi.vecs[1].efd;
	uint64_t one = 1;
	assert_int_equal(write(efd, &one, 8), 8);
	assert_int_equal(write(efd, &one, 8), 8);
	cfg_wr(x, cap + 16u, 4, 0); /* unmask */
	assert_true(x->d.msi.vecs[1].bound);
	assert_true(fake_route(x->vm, x->d.msi.vecs[1].gsi)->present);
	assert_int_equal(efd_take(efd), 1); /* one write after the irqfd: one injection */
	assert_int_equal(x->d.msi.replayed[1], 1);
	assert_int_equal(x->d.msi.delivered[1], 0);
	assert_int_equal(cfg_rd(x, cap + 20u, 4), 0);
	/* VFIO kept the same eventfds: masking is msivm's business, not a new SET_IRQS. */
	assert_int_equal(x->fd.irq_log[x->fd.nirq_log - 1].fds[1], efd);
	fx_free(x);
}

/* The guest reads the pending bits while message 1 is masked: what the device signalled
 * there (twice: one bit) shows, the unmask delivers it once and clears it; an unmasked
 * message's eventfd is KVM's, never taken. */
static void test_msi_pending_read_shows_masked_signals(void **state)
{
	uint8_t cap;
	struct fx *x = msi_one_masked(&cap);
	int efd = x->d.msi.vecs[1].efd, efd0 = x->d.msi.vecs[0].efd;
	uint64_t one = 1;
	assert_int_equal(cfg_rd(x, cap + 20u, 4), 0); /* nothing signalled yet */
	assert_int_equal(write(efd, &one, 8), 8);
	assert_int_equal(write(efd, &one, 8), 8);
	assert_int_equal(write(efd0, &one, 8), 8); /* message 0: unmasked, KVM's */
	assert_int_equal(cfg_rd(x, cap + 20u, 4), 1u << 1);
	assert_int_equal(cfg_rd(x, cap + 20u, 1), 1u << 1); /* a byte read too, and still set */
	assert_int_equal(x->d.msi.pended[1], 1);
	assert_int_equal(efd_take(efd0), 1); /* left for KVM's irqfd */
	/* Unmask: delivered once, from the pending bit, which clears. */
	cfg_wr(x, cap + 16u, 4, 0);
	assert_true(x->d.msi.vecs[1].bound);
	assert_int_equal(efd_take(efd), 1);
	assert_int_equal(x->d.msi.replayed[1], 1);
	assert_int_equal(cfg_rd(x, cap + 20u, 4), 0);
	/* A signal after the pending read and one before it are one message at the unmask, not
	 * two (the pending bit is one bit). */
	cfg_wr(x, cap + 16u, 4, 1u << 1);
	assert_int_equal(write(efd, &one, 8), 8);
	assert_int_equal(cfg_rd(x, cap + 20u, 4), 1u << 1);
	assert_int_equal(write(efd, &one, 8), 8);
	cfg_wr(x, cap + 16u, 4, 0);
	assert_int_equal(efd_take(efd), 1);
	assert_int_equal(x->d.msi.replayed[1], 2);
	assert_int_equal(cfg_rd(x, cap + 20u, 4), 0);
	/* Masked and unmasked with nothing signalled: nothing delivered, nothing pending. */
	cfg_wr(x, cap + 16u, 4, 1u << 1);
	assert_int_equal(cfg_rd(x, cap + 20u, 4), 0);
	cfg_wr(x, cap + 16u, 4, 0);
	assert_int_equal(efd_take(efd), 0);
	assert_int_equal(x->d.msi.replayed[1], 2);
	fx_free(x);
}

/* MSI disabled while a masked message's signal is pending: the bit stays (PCI leaves pending
 * bits alone), and the re-enable with the message unmasked delivers it once. */
static void test_msi_pending_survives_disable(void **state)
{
	uint8_t cap;
	struct fx *x = msi_one_masked(&cap);
	int efd = x->d.msi.vecs[1].efd;
	uint64_t one = 1;
	assert_int_equal(write(efd, &one, 8), 8);
	assert_int_equal(cfg_rd(x, cap + 20u, 4), 1u << 1);
	cfg_wr(x, cap + 2u, 2, 1 << 4); /* disabled */
	assert_int_equal(cfg_rd(x, cap + 20u, 4), 1u << 1);
	cfg_wr(x, cap + 16u, 4, 0);
	assert_int_equal(efd_take(efd), 0); /* disabled: nothing delivered */
	cfg_wr(x, cap + 2u, 2, 1 | (1 << 4));
	assert_int_equal(efd_take(efd), 1);
	assert_int_equal(cfg_rd(x, cap + 20u, 4), 0);
	fx_free(x);
}

/* ---- the hostile guest and the dead device ---- */

static void test_config_writes_at_every_offset(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	assert_int_equal(vfio_dev_attach_intx(&x->d, -1, 20), 0);
	uint32_t seed = 12345;
	for (int round = 0; round < 4; round++)
		for (uint32_t off = 0; off < 0x104; off++)
			for (uint32_t len = 1; len <= 4; len *= 2) {
				seed = seed * 1103515245u + 12345u;
				cfg_wr(x, off, len, round == 0 ? 0xffffffffu : seed);
				(void)cfg_rd(x, off, len);
			}
	assert_int_equal(cfg_rd(x, PCI_VENDOR_ID, 4), 0x00101b36);
	assert_int_equal(cfg_rd(x, PCI_CLASS_PROG, 1), 0x02);
	/* The device got the command bits the guest may give it, nothing else. */
	uint16_t dev_cmd = (uint16_t)(x->fd.cfg[PCI_COMMAND] | x->fd.cfg[PCI_COMMAND + 1] << 8);
	assert_int_equal(dev_cmd & ~(PCI_CMD_MEMORY | PCI_CMD_MASTER | PCI_CMD_INTX_DISABLE), 0);
	/* Nothing else of the device's config space was written but its own registers between
	 * capabilities and in its vendor capability's body (as vfio-pci and QEMU pass them). */
	struct fake_dev ref_dev;
	fake_dev_init(&ref_dev, 8);
	unsigned own = 0;
	for (unsigned o = 8; o < PCI_CFG_SIZE; o++) {
		if (pci_func_is_passthrough(&x->d.func, o)) {
			own++;
			continue;
		}
		if (x->fd.cfg[o] != ref_dev.cfg[o])
			fail_msg("config byte 0x%x of the device written: 0x%x, was 0x%x", o,
				 x->fd.cfg[o], ref_dev.cfg[o]);
	}
	assert_int_equal(own, x->d.cfg_passthrough_bytes);
	assert_true(own > 0);
	assert_int_equal(x->d.stats.device_errors, 0);
	fx_free(x);
}

static void test_device_that_stops_answering(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	x->fd.dead = true;
	assert_int_equal(bar_rd(x, PBA_OFF + 0x100, 4), 0xffffffff);
	assert_true(x->d.broken);
	unsigned writes = x->fd.writes, reads = x->fd.reads;
	bar_wr(x, PBA_OFF + 0x100, 1, 4);
	assert_int_equal(bar_rd(x, PBA_OFF + 0x200, 8), (uint64_t)~0ULL);
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	assert_int_equal(x->fd.writes, writes);  /* nothing more sent to it */
	assert_int_equal(x->fd.reads, reads);
	/* The MSI-X structures are msivm's: they still work. */
	program_vector(x, 1, 0x41, true);
	assert_int_equal(bar_rd(x, TABLE_OFF + 16 + 8, 4), 0x41);
	fx_free(x);
}

static void test_destroy_leaves_device_quiet(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	pci_func_set_bar_addr(&x->d.func, 0, 0xC0010000);
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY | PCI_CMD_MASTER);
	msix_enable(x, true);
	assert_true(x->fd.slots[SLOT_BASE].present);
	vfio_dev_destroy(&x->d);
	x->inited = false;
	unsigned last = x->fd.nirq_log - 1;
	assert_int_equal(x->fd.irq_log[last].index, VFIO_DEV_IRQ_MSIX);
	assert_int_equal(x->fd.irq_log[last].count, 0);
	assert_int_equal(x->fd.cfg[PCI_COMMAND] & (PCI_CMD_MEMORY | PCI_CMD_MASTER), 0);
	assert_int_equal(x->fd.resets, 2); /* init and exit */
	assert_false(x->fd.slots[SLOT_BASE].present);
	assert_int_equal(x->fd.outstanding_maps, 0);
	vfio_dev_destroy(&x->d); /* twice is safe */
	fx_free(x);
}

static void test_sparse_areas_are_trusted_only_inside_the_bar(void **state)
{
	struct fake_vm *vm = fake_vm_new();
	struct fake_dev *fd = calloc(1, sizeof(*fd));
	struct vfio_dev *d = calloc(1, sizeof(*d));
	assert_non_null(vm);
	assert_non_null(fd);
	assert_non_null(d);
	fake_dev_init(fd, 8);
	struct vfio_dev_desc desc = fake_desc();
	desc.bars[0].nsparse = 3;
	desc.bars[0].sparse[0].off = 0x800;               /* rounded in to [0x1000, 0x2000) */
	desc.bars[0].sparse[0].size = 0x1800;
	desc.bars[0].sparse[1].off = 0x3000;              /* the PBA page: carved out */
	desc.bars[0].sparse[1].size = 0x1000;
	desc.bars[0].sparse[2].off = 0xffffffffffff0000ull; /* wraps: ignored */
	desc.bars[0].sparse[2].size = 0x20000;
	struct error err = { "" };
	assert_int_equal(vfio_dev_init(d, "v", &fake_ops, fd, &desc, IRQ_MODE_MSIX, &vm->routes,
				       &vm->mmio, fake_window(), SLOT_BASE, &err), 0);
	assert_int_equal(d->bars[0].nareas, 1);
	assert_int_equal(d->bars[0].areas[0].off, 0x1000);
	assert_int_equal(d->bars[0].areas[0].size, 0x1000);
	vfio_dev_destroy(d);
	free(d);
	free(fd);
	fake_vm_free(vm);
}

/* ---- the expansion ROM (rom=on) ---- */

#define ROM_LEN  (150u << 10)   /* not a power of two: the BAR is 256 KiB, 0 past the content */
#define ROM_BAR  (256u << 10)
#define ROM_AT   0xC0100000u

static uint8_t *rom_image(void)
{
	uint8_t *r = malloc(ROM_LEN);
	assert_non_null(r);
	for (uint32_t i = 0; i < ROM_LEN; i++)
		r[i] = (uint8_t)(i ^ (i >> 8) ^ 0x3c);
	r[0] = 0x55;
	r[1] = 0xaa;
	return r;
}

static uint64_t guest_rd(struct fx *x, uint64_t addr, uint32_t len)
{
	uint64_t v = 0;
	bus_read(&x->vm->mmio, addr, &v, len);
	return v;
}

static void test_rom_offered_read_once_and_served_read_only(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	uint8_t *img = rom_image();
	x->fd.rom = img;
	x->fd.rom_len = ROM_LEN;
	struct error err = { "" };
	assert_int_equal(vfio_rom_setup(&x->d, ROM_LEN, &err), 0);
	assert_int_equal(x->fd.rom_reads, 3); /* 150 KiB in 64 KiB reads, once */
	/* Memory decode was on for the read only: the device is left as init left it. */
	assert_int_equal(x->fd.cfg[PCI_COMMAND] & PCI_CMD_MEMORY, 0);
	/* Sizing: 256 KiB, the enable bit, reserved bits 0. */
	assert_int_equal(cfg_rd(x, 0x30, 4), 0);
	cfg_wr(x, 0x30, 4, 0xffffffff);
	assert_int_equal(cfg_rd(x, 0x30, 4), (uint32_t)~(ROM_BAR - 1) | 1u);
	/* Reachable only with the enable bit and memory decode both on. */
	cfg_wr(x, 0x30, 4, ROM_AT);
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	assert_int_equal(guest_rd(x, ROM_AT, 2), 0xffff);
	cfg_wr(x, PCI_COMMAND, 2, 0);
	cfg_wr(x, 0x30, 4, ROM_AT | 1u);
	assert_int_equal(guest_rd(x, ROM_AT, 2), 0xffff);
	cfg_wr(x, PCI_COMMAND, 2, PCI_CMD_MEMORY);
	assert_int_equal(guest_rd(x, ROM_AT, 2), 0xaa55);
	/* Every width, through the guest's MMIO, from the copy: no device read. */
	for (uint32_t len = 1; len <= 8; len *= 2)
		for (uint32_t off = 0x12340 & ~(len - 1); off < 0x12360; off += len) {
			uint64_t want = 0;
			memcpy(&want, img + off, len);
			assert_int_equal(guest_rd(x, ROM_AT + off, len), want);
		}
	uint64_t want = 0;
	memcpy(&want, img + ROM_LEN - 4, 4);
	assert_int_equal(guest_rd(x, ROM_AT + ROM_LEN - 4, 8), want); /* 4 past the end read 0 */
	assert_int_equal(guest_rd(x, ROM_AT + ROM_BAR - 4, 4), 0);
	assert_int_equal(x->fd.rom_reads, 3);
	/* Writes of any width: dropped, counted, never reach the device. */
	unsigned writes = x->fd.writes;
	for (uint32_t len = 1; len <= 8; len *= 2) {
		uint64_t v = 0;
		bus_write(&x->vm->mmio, ROM_AT + 0x100, &v, len);
	}
	assert_int_equal(x->fd.writes, writes);
	assert_int_equal(x->fd.rom_writes, 0);
	assert_int_equal(x->d.func.rom.writes_dropped, 4);
	memcpy(&want, img + 0x100, 4);
	assert_int_equal(guest_rd(x, ROM_AT + 0x100, 4), want & 0xffffffffu);
	/* A move: the old place is gone, the new one reads the ROM. */
	cfg_wr(x, 0x30, 4, (ROM_AT + ROM_BAR) | 1u);
	assert_int_equal(guest_rd(x, ROM_AT, 2), 0xffff);
	assert_int_equal(guest_rd(x, ROM_AT + ROM_BAR, 2), 0xaa55);
	/* Over BAR0 (decoding): refused, BAR0's pages keep their KVM slot. */
	cfg_wr(x, PCI_BAR0, 4, 0xC0200000u | PCI_BAR_MEM64);
	assert_true(x->fd.slots[SLOT_BASE].present);
	uint64_t refused = x->d.func.refused_maps;
	cfg_wr(x, 0x30, 4, 0xC0200000u | 1u);
	assert_false(x->d.func.rom.mapped);
	assert_int_equal(x->d.func.refused_maps, refused + 1);
	assert_true(x->fd.slots[SLOT_BASE].present);
	fx_free(x);
	free(img);
}

static void test_rom_absent_too_big_or_unreadable(void **state)
{
	struct fx *x = fx_new(8, IRQ_MODE_MSIX);
	struct error err = { "" };
	/* No ROM on the device: no ROM BAR, 0x30 reads 0 whatever the guest writes. */
	assert_int_equal(vfio_rom_setup(&x->d, 0, &err), 0);
	cfg_wr(x, 0x30, 4, 0xffffffff);
	assert_int_equal(cfg_rd(x, 0x30, 4), 0);
	assert_int_equal(x->d.func.rom.size, 0);
	/* Over 16 MiB: refused before any read. */
	assert_int_equal(vfio_rom_setup(&x->d, 32u << 20, &err), -EFBIG);
	assert_non_null(strstr(err.msg, "16 MiB"));
	assert_int_equal(x->fd.rom_reads, 0);
	/* A ROM the kernel cannot read: refused, nothing offered. */
	uint8_t *img = rom_image();
	x->fd.rom = img;
	x->fd.rom_len = ROM_LEN;
	x->fd.rom_fails = true;
	assert_true(vfio_rom_setup(&x->d, ROM_LEN, &err) < 0);
	assert_non_null(strstr(err.msg, "cannot be read"));
	assert_int_equal(x->d.func.rom.size, 0);
	assert_null(x->d.rom);
	fx_free(x);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_view_shows_device_ids_and_only_emulated_caps),
		cmocka_unit_test(test_bar_keeps_the_device_prefetchable_bit),
		cmocka_unit_test(test_device_registers_between_caps_reach_the_device),
		cmocka_unit_test(test_caps_that_do_not_fit_are_appended),
		cmocka_unit_test(test_modes_limit_the_caps_offered),
		cmocka_unit_test(test_bad_devices_are_refused),
		cmocka_unit_test(test_bar_pages_follow_decode_and_moves),
		cmocka_unit_test(test_bar_over_ram_or_another_bar_is_refused),
		cmocka_unit_test(test_trapped_bar_access_reaches_device),
		cmocka_unit_test(test_msix_enable_hands_vectors_eventfds_to_vfio),
		cmocka_unit_test(test_mask_fire_unmask_delivers_exactly_once),
		cmocka_unit_test(test_relay_mode_delivers_through_msivm),
		cmocka_unit_test(test_relay_refused_without_msix),
		cmocka_unit_test(test_guest_that_never_unmasks),
		cmocka_unit_test(test_msix_table_writes_out_of_range),
		cmocka_unit_test(test_msi_enable_hands_messages_to_vfio),
		cmocka_unit_test(test_msi_mask_fire_unmask_delivers_once),
		cmocka_unit_test(test_msi_pending_read_shows_masked_signals),
		cmocka_unit_test(test_msi_pending_survives_disable),
		cmocka_unit_test(test_config_writes_at_every_offset),
		cmocka_unit_test(test_device_that_stops_answering),
		cmocka_unit_test(test_destroy_leaves_device_quiet),
		cmocka_unit_test(test_sparse_areas_are_trusted_only_inside_the_bar),
		cmocka_unit_test(test_rom_offered_read_once_and_served_read_only),
		cmocka_unit_test(test_rom_absent_too_big_or_unreadable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
