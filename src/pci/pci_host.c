/* PCI host bridge: CF8/CFC and ECAM config cycles -> the addressed function on bus 0. */
#include "pci/pci_host.h"

#include <errno.h>
#include <string.h>

#define ECAM_BUS0_SIZE (1u << 20)
#define CF8_ENABLE     0x80000000u

static void bus0_read(struct pci_host *h, uint32_t bus, uint32_t devfn, uint32_t reg,
		      void *data, uint32_t len)
{
	struct pci_func *f = NULL;
	pthread_mutex_lock(&h->lock);
	if (bus == 0 && devfn < PCI_MAX_DEVFN)
		f = h->funcs[devfn];
	pthread_mutex_unlock(&h->lock);
	uint32_t v = f && reg < PCI_CFG_SIZE ? pci_func_cfg_read(f, reg, len) : 0xffffffffu;
	memcpy(data, &v, len);
}

static void bus0_write(struct pci_host *h, uint32_t bus, uint32_t devfn, uint32_t reg,
		       const void *data, uint32_t len)
{
	struct pci_func *f = NULL;
	pthread_mutex_lock(&h->lock);
	if (bus == 0 && devfn < PCI_MAX_DEVFN)
		f = h->funcs[devfn];
	pthread_mutex_unlock(&h->lock);
	if (!f || reg >= PCI_CFG_SIZE) /* no device, or extended space: ignored */
		return;
	uint32_t v = 0;
	memcpy(&v, data, len);
	pci_func_cfg_write(f, reg, len, v);
}

/* 0xCF8: the address register, 32-bit accesses only. */
static void addr_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct pci_host *h = opaque;
	uint32_t v = 0xffffffffu;
	if (off == 0 && len == 4) {
		pthread_mutex_lock(&h->lock);
		v = h->config_addr & 0x80fffffcu; /* the low two bits read as zero */
		pthread_mutex_unlock(&h->lock);
	}
	memcpy(data, &v, len);
}

static void addr_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct pci_host *h = opaque;
	if (off != 0 || len != 4)
		return;
	pthread_mutex_lock(&h->lock);
	memcpy(&h->config_addr, data, 4);
	h->config_addr &= 0x80ffffffu;
	pthread_mutex_unlock(&h->lock);
}

/* Decodes CF8 into bus/devfn/reg for an access at data-port offset `off`. */
static int decode_cf8(struct pci_host *h, uint64_t off, uint32_t *bus, uint32_t *devfn,
		      uint32_t *reg)
{
	pthread_mutex_lock(&h->lock);
	uint32_t a = h->config_addr;
	pthread_mutex_unlock(&h->lock);
	if (!(a & CF8_ENABLE))
		return -1;
	*bus = (a >> 16) & 0xff;
	*devfn = (a >> 8) & 0xff;
	/* As QEMU's host bridge: CF8's low two bits are kept and ORed with the data port offset, so
	 * a 16-bit read at CFC with register 2 in CF8 reads register 2 (kvm-unit-tests'
	 * pci_config_readw(dev, PCI_DEVICE_ID) does that); the usual CF8 = reg & ~3, CFC + (reg & 3)
	 * gives the same register. */
	*reg = (a & 0xff) | (uint32_t)off;
	return 0;
}

static void data_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	uint32_t bus, devfn, reg;
	if (decode_cf8(opaque, off, &bus, &devfn, &reg))
		memset(data, 0xff, len);
	else
		bus0_read(opaque, bus, devfn, reg, data, len);
}

static void data_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	uint32_t bus, devfn, reg;
	if (!decode_cf8(opaque, off, &bus, &devfn, &reg))
		bus0_write(opaque, bus, devfn, reg, data, len);
}

static void ecam_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	if (len > 4) {
		memset(data, 0xff, len);
		return;
	}
	bus0_read(opaque, 0, (uint32_t)(off >> 12) & 0xff, (uint32_t)off & 0xfff, data, len);
}

static void ecam_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	if (len <= 4)
		bus0_write(opaque, 0, (uint32_t)(off >> 12) & 0xff, (uint32_t)off & 0xfff, data, len);
}

static const struct bus_ops addr_ops = { .read = addr_read, .write = addr_write };
static const struct bus_ops data_ops = { .read = data_read, .write = data_write };
static const struct bus_ops ecam_ops = { .read = ecam_read, .write = ecam_write };

int pci_host_init(struct pci_host *h, struct bus *pio, struct bus *mmio, uint64_t ecam_base,
		  struct pci_window window)
{
	memset(h, 0, sizeof(*h));
	if (pthread_mutex_init(&h->lock, NULL))
		return -ENOMEM;
	h->ecam_base = ecam_base;
	/* Red Hat's generic PCIe host bridge id, class 06:00:00 (host bridge). */
	int ret = pci_func_init(&h->bridge, "host-bridge", 0x1b36, 0x0008, 0x060000, 0x1af4,
				0x1100, mmio, window);
	if (ret)
		return ret;
	h->bridge.cfg[PCI_INT_PIN] = 0;
	h->funcs[0] = &h->bridge;
	h->next_slot = 1;
	if ((ret = bus_register(pio, PCI_CONFIG_ADDR_PORT, 4, &addr_ops, h, "pci-cf8")) ||
	    (ret = bus_register(pio, PCI_CONFIG_DATA_PORT, 4, &data_ops, h, "pci-cfc")) ||
	    (ret = bus_register(mmio, ecam_base, ECAM_BUS0_SIZE, &ecam_ops, h, "pci-ecam")))
		return ret;
	return 0;
}

void pci_host_destroy(struct pci_host *h, struct bus *pio, struct bus *mmio)
{
	bus_unregister(pio, PCI_CONFIG_ADDR_PORT, h);
	bus_unregister(pio, PCI_CONFIG_DATA_PORT, h);
	bus_unregister(mmio, h->ecam_base, h);
	pci_func_destroy(&h->bridge);
	pthread_mutex_destroy(&h->lock);
}

int pci_host_add(struct pci_host *h, struct pci_func *f)
{
	pthread_mutex_lock(&h->lock);
	int slot = h->next_slot < 32 ? h->next_slot++ : -ENOSPC;
	if (slot >= 0) {
		f->devfn = (uint8_t)(slot << 3);
		h->funcs[f->devfn] = f;
		f->cfg[PCI_INT_LINE] = (uint8_t)pci_host_intx_gsi((uint8_t)slot);
	}
	pthread_mutex_unlock(&h->lock);
	return slot;
}

uint32_t pci_host_intx_gsi(uint8_t slot)
{
	return 16 + slot % 8;
}
