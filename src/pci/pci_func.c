/* PCI function: config space semantics (RO/RW/W1C), capability list, BAR and expansion ROM sizing and decode-gated mapping. */
#include "pci/pci_func.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#define PCI_CAP_LIST_ID   0
#define PCI_CAP_LIST_NEXT 1
#define PCI_CAP_START     0x40

int pci_func_init(struct pci_func *f, const char *name, uint16_t vendor, uint16_t device,
		  uint32_t class_code, uint16_t subsys_vendor, uint16_t subsys_id,
		  struct bus *mmio, struct pci_window window)
{
	memset(f, 0, sizeof(*f));
	if (pthread_mutex_init(&f->lock, NULL))
		return -ENOMEM;
	f->name = name;
	f->mmio = mmio;
	f->window = window;
	f->cap_end = PCI_CAP_START;
	pci_cfg_set16(f, PCI_VENDOR_ID, vendor);
	pci_cfg_set16(f, PCI_DEVICE_ID, device);
	f->cfg[PCI_REVISION] = 1;
	f->cfg[PCI_CLASS_PROG] = (uint8_t)class_code;
	f->cfg[PCI_CLASS_PROG + 1] = (uint8_t)(class_code >> 8);
	f->cfg[PCI_CLASS_PROG + 2] = (uint8_t)(class_code >> 16);
	pci_cfg_set16(f, PCI_SUBSYS_VENDOR, subsys_vendor);
	pci_cfg_set16(f, PCI_SUBSYS_ID, subsys_id);
	f->cfg[PCI_INT_PIN] = 1; /* INTA# */

	/* Command: I/O, memory, bus master, INTx disable are the guest's. */
	pci_cfg_set16(f, PCI_COMMAND, 0);
	f->wmask[PCI_COMMAND] = PCI_CMD_IO | PCI_CMD_MEMORY | PCI_CMD_MASTER;
	f->wmask[PCI_COMMAND + 1] = PCI_CMD_INTX_DISABLE >> 8;
	/* Status: error bits 15..11 and 8 are write-1-to-clear, the rest read-only. */
	f->w1cmask[PCI_STATUS + 1] = 0xf9;
	f->wmask[0x0c] = 0xff; /* cache line size */
	f->wmask[0x0d] = 0xff; /* latency timer */
	f->wmask[PCI_INT_LINE] = 0xff;
	return 0;
}

void pci_func_destroy(struct pci_func *f)
{
	for (unsigned i = 0; i < PCI_NUM_BARS; i++)
		if (f->bars[i].mapped)
			bus_unregister(f->bars[i].io ? f->pio : f->mmio, f->bars[i].mapped_at,
				       f->bars[i].opaque);
	if (f->rom.mapped)
		bus_unregister(f->mmio, f->rom.mapped_at, &f->rom);
	f->rom.mapped = false;
	pthread_mutex_destroy(&f->lock);
}

int pci_func_add_bar(struct pci_func *f, unsigned idx, uint64_t size, bool is64,
		     const struct bus_ops *ops, void *opaque, const char *name)
{
	if (idx >= PCI_NUM_BARS || (is64 && idx + 1 >= PCI_NUM_BARS) || size < 16 ||
	    (size & (size - 1)) || (!is64 && size > (1ULL << 31)) || f->bars[idx].size ||
	    (is64 && f->bars[idx + 1].size) || (idx > 0 && f->bars[idx - 1].is64))
		return -EINVAL; /* in use, or the upper half of a 64-bit BAR */
	f->bars[idx] = (struct pci_bar){ .size = size, .is64 = is64, .ops = ops,
					 .opaque = opaque, .name = name };
	uint32_t off = PCI_BAR0 + idx * 4;
	uint64_t mask = ~(size - 1);
	pci_cfg_set32(f, off, is64 ? PCI_BAR_MEM64 : 0);
	/* Writable address bits follow the size; the low 4 type bits are read-only. */
	uint32_t lo_mask = (uint32_t)mask & ~0xfu;
	memcpy(&f->wmask[off], &lo_mask, 4);
	if (is64) {
		uint32_t hi_mask = (uint32_t)(mask >> 32);
		memcpy(&f->wmask[off + 4], &hi_mask, 4);
	}
	return 0;
}

int pci_func_add_io_bar(struct pci_func *f, unsigned idx, uint32_t size, struct bus *pio,
			const struct bus_ops *ops, void *opaque, const char *name)
{
	if (idx >= PCI_NUM_BARS || size < 4 || size > 256 || (size & (size - 1)) || !pio ||
	    f->bars[idx].size || (idx > 0 && f->bars[idx - 1].is64))
		return -EINVAL;
	f->bars[idx] = (struct pci_bar){ .size = size, .io = true, .ops = ops, .opaque = opaque,
					 .name = name };
	f->pio = pio;
	uint32_t off = PCI_BAR0 + idx * 4;
	pci_cfg_set32(f, off, PCI_BAR_IO);
	uint32_t mask = ~(size - 1) & ~0x3u; /* bits 1..0: I/O space indicator, reserved */
	memcpy(&f->wmask[off], &mask, 4);
	return 0;
}

/* The ROM's bus handlers: opaque is &f->rom, the function found from it. */
static struct pci_func *rom_func(void *opaque)
{
	return (struct pci_func *)((char *)opaque - offsetof(struct pci_func, rom));
}

static void rom_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	struct pci_rom *r = opaque;
	__atomic_fetch_add(&r->reads, 1, __ATOMIC_RELAXED);
	r->read(r->opaque, off, data, len);
}

static void rom_write(void *opaque, uint64_t off, const void *data, uint32_t len)
{
	struct pci_rom *r = opaque;
	struct pci_func *f = rom_func(opaque);
	(void)data;
	__atomic_fetch_add(&r->writes_dropped, 1, __ATOMIC_RELAXED);
	log_ratelimited(&f->rl, LOG_WARN, "%s: guest write of %u bytes into the expansion ROM at "
			"offset 0x%" PRIx64 ": dropped (the ROM is read-only)", f->name, len, off);
}

static const struct bus_ops rom_ops = { .read = rom_read, .write = rom_write };

int pci_func_add_rom(struct pci_func *f, uint32_t size, pci_rom_read_fn read, void *opaque,
		     const char *name)
{
	if (size < PCI_ROM_MIN_SIZE || size > PCI_ROM_MAX_SIZE || (size & (size - 1)) || !read ||
	    f->rom.size)
		return -EINVAL;
	f->rom = (struct pci_rom){ .size = size, .read = read, .opaque = opaque, .name = name };
	pci_cfg_set32(f, PCI_ROM_ADDRESS, 0);
	uint32_t mask = (~(size - 1) & PCI_ROM_ADDR_MASK) | PCI_ROM_ENABLE;
	memcpy(&f->wmask[PCI_ROM_ADDRESS], &mask, 4);
	return 0;
}

void pci_func_set_rom_addr(struct pci_func *f, uint64_t addr)
{
	if (f->rom.size)
		pci_cfg_set32(f, PCI_ROM_ADDRESS, (uint32_t)addr & ~(f->rom.size - 1) &
			      PCI_ROM_ADDR_MASK);
}

uint64_t pci_func_bar_addr(const struct pci_func *f, unsigned idx)
{
	uint32_t off = PCI_BAR0 + idx * 4;
	if (f->bars[idx].io)
		return pci_cfg_get32(f, off) & ~0x3ULL;
	uint64_t addr = pci_cfg_get32(f, off) & ~0xfULL;
	if (f->bars[idx].is64)
		addr |= (uint64_t)pci_cfg_get32(f, off + 4) << 32;
	return addr;
}

#define PCI_BAR_PREFETCH 0x08

/* A memory BAR's read-only type bits (64-bit, prefetchable). */
static uint32_t mem_bar_type(const struct pci_bar *b)
{
	return (b->is64 ? PCI_BAR_MEM64 : 0) | (b->prefetch ? PCI_BAR_PREFETCH : 0);
}

void pci_func_set_bar_prefetch(struct pci_func *f, unsigned idx)
{
	if (idx >= PCI_NUM_BARS || !f->bars[idx].size || f->bars[idx].io)
		return;
	f->bars[idx].prefetch = true;
	uint32_t off = PCI_BAR0 + idx * 4;
	pci_cfg_set32(f, off, pci_cfg_get32(f, off) | PCI_BAR_PREFETCH);
}

void pci_func_set_bar_addr(struct pci_func *f, unsigned idx, uint64_t addr)
{
	uint32_t off = PCI_BAR0 + idx * 4;
	if (f->bars[idx].io) {
		pci_cfg_set32(f, off, ((uint32_t)addr & ~0x3u) | PCI_BAR_IO);
		return;
	}
	pci_cfg_set32(f, off, ((uint32_t)addr & ~0xfu) | mem_bar_type(&f->bars[idx]));
	if (f->bars[idx].is64)
		pci_cfg_set32(f, off + 4, (uint32_t)(addr >> 32));
}

/* Whether BAR `b` may be mapped at `addr`: a memory BAR inside the window, an I/O BAR at a
 * non-zero port below 64 KiB. */
static bool bar_inside(const struct pci_func *f, const struct pci_bar *b, uint64_t addr)
{
	if (b->io)
		return addr != 0 && addr < PCI_IO_SPACE_END && b->size <= PCI_IO_SPACE_END - addr;
	return addr >= f->window.start && addr <= f->window.end && b->size <= f->window.end - addr;
}

/* Maps or unmaps the expansion ROM to match memory decode, its enable bit and its address
 * (lock held), with the memory BARs' placement checks. */
static void update_rom(struct pci_func *f)
{
	struct pci_rom *r = &f->rom;
	if (!r->size)
		return;
	uint32_t reg = pci_cfg_get32(f, PCI_ROM_ADDRESS);
	uint64_t addr = reg & PCI_ROM_ADDR_MASK;
	bool on = (pci_cfg_get16(f, PCI_COMMAND) & PCI_CMD_MEMORY) && (reg & PCI_ROM_ENABLE);
	if (r->mapped && (!on || addr != r->mapped_at)) {
		bus_unregister(f->mmio, r->mapped_at, r);
		r->mapped = false;
	}
	if (!on || r->mapped)
		return;
	struct pci_bar as_bar = { .size = r->size };
	int ret = bar_inside(f, &as_bar, addr) ? bus_register(f->mmio, addr, r->size, &rom_ops, r,
							      r->name)
					       : -ERANGE;
	if (ret == 0) {
		r->mapped = true;
		r->mapped_at = addr;
		return;
	}
	f->refused_maps++;
	if (addr != (~(r->size - 1) & PCI_ROM_ADDR_MASK)) /* not the sizing value */
		log_ratelimited(&f->rl, LOG_WARN,
				"%s: expansion ROM at 0x%" PRIx64 " (size 0x%x) not mapped: %s",
				f->name, addr, r->size,
				ret != -ERANGE ? "overlaps another device or region"
					       : "outside the PCI MMIO window");
}

/* The address a BAR reads back while the guest sizes it (all ones written). */
static uint64_t sizing_addr(const struct pci_bar *b)
{
	if (b->io)
		return ~(b->size - 1) & 0xfffffffcULL;
	return ~(b->size - 1) & (b->is64 ? ~0ULL : 0xffffffffULL) & ~0xfULL;
}

/* Maps or unmaps each BAR to match decode (memory or I/O, per BAR) and its address (lock held).
 * A BAR the guest placed outside its space or over another range stays unmapped. */
static void update_bars(struct pci_func *f)
{
	uint16_t cmd = pci_cfg_get16(f, PCI_COMMAND);
	for (unsigned i = 0; i < PCI_NUM_BARS; i++) {
		struct pci_bar *b = &f->bars[i];
		if (!b->size)
			continue;
		bool decode = cmd & (b->io ? PCI_CMD_IO : PCI_CMD_MEMORY);
		struct bus *bus = b->io ? f->pio : f->mmio;
		uint64_t addr = pci_func_bar_addr(f, i);
		if (b->mapped && (!decode || addr != b->mapped_at)) {
			bus_unregister(bus, b->mapped_at, b->opaque);
			b->mapped = false;
			if (f->ops && f->ops->bar_moved)
				f->ops->bar_moved(f->opaque, i, false, b->mapped_at);
		}
		if (!decode || b->mapped)
			continue;
		bool sizing = addr == sizing_addr(b);
		int ret = bar_inside(f, b, addr) ? bus_register(bus, addr, b->size, b->ops, b->opaque,
								 b->name)
						 : -ERANGE;
		if (ret == 0) {
			b->mapped = true;
			b->mapped_at = addr;
			if (f->ops && f->ops->bar_moved)
				f->ops->bar_moved(f->opaque, i, true, addr);
			continue;
		}
		f->refused_maps++;
		if (!sizing)
			log_ratelimited(&f->rl, LOG_WARN,
					"%s: BAR%u at 0x%" PRIx64 " (size 0x%" PRIx64 ") not mapped: %s",
					f->name, i, addr, b->size,
					ret != -ERANGE ? "overlaps another device or region"
					: b->io ? "outside the I/O port space (1..0xffff)"
						: "outside the PCI MMIO window");
	}
	update_rom(f);
}

int pci_func_add_cap(struct pci_func *f, uint8_t cap_id, uint8_t len, const uint8_t *wmask)
{
	if (len < 2 || (uint32_t)f->cap_end + len > PCI_CFG_SIZE)
		return -ENOSPC;
	uint8_t off = f->cap_end;
	f->cfg[off + PCI_CAP_LIST_ID] = cap_id;
	f->cfg[off + PCI_CAP_LIST_NEXT] = 0;
	if (wmask)
		memcpy(&f->wmask[off + 2], wmask + 2, len - 2u);
	if (f->last_cap)
		f->cfg[f->last_cap + PCI_CAP_LIST_NEXT] = off;
	else
		f->cfg[PCI_CAP_PTR] = off;
	f->last_cap = off;
	pci_cfg_set16(f, PCI_STATUS, pci_cfg_get16(f, PCI_STATUS) | PCI_STATUS_CAPS);
	f->cap_end = (uint8_t)((off + len + 3) & ~3u);
	if (f->cap_end == 0) /* wrapped: the space is full */
		f->cap_end = 0xff;
	return off;
}

static bool access_ok(uint32_t offset, uint32_t len)
{
	return (len == 1 || len == 2 || len == 4) && offset % len == 0 && offset <= PCI_CFG_SIZE - len;
}

static bool trapped(const struct pci_func *f, uint32_t offset, uint32_t len)
{
	return f->trap_len && f->ops && f->ops->config_trap &&
	       offset < (uint32_t)f->trap_off + f->trap_len && offset + len > f->trap_off;
}

uint32_t pci_func_cfg_load(struct pci_func *f, uint32_t off, uint32_t len)
{
	uint32_t v = 0;
	pthread_mutex_lock(&f->lock);
	for (uint32_t i = 0; i < len; i++)
		v |= (uint32_t)f->cfg[off + i] << (8 * i);
	pthread_mutex_unlock(&f->lock);
	return v;
}

void pci_func_cfg_store(struct pci_func *f, uint32_t off, uint32_t len, uint32_t value)
{
	pthread_mutex_lock(&f->lock);
	for (uint32_t i = 0; i < len; i++)
		f->cfg[off + i] = (uint8_t)(value >> (8 * i));
	pthread_mutex_unlock(&f->lock);
}

void pci_func_set_passthrough(struct pci_func *f, uint32_t off, uint32_t len, bool on)
{
	for (uint32_t o = off; o < off + len && o < PCI_CFG_SIZE; o++) {
		if (on)
			f->passthrough[o / 8] |= (uint8_t)(1u << (o % 8));
		else
			f->passthrough[o / 8] &= (uint8_t)~(1u << (o % 8));
	}
}

/* Moves the access's passthrough bytes between buf and the device, run by run (lock held).
 * A failed read leaves all-ones in its run. */
static void passthrough_runs(struct pci_func *f, bool write, uint32_t offset, uint32_t len,
			     uint8_t *buf)
{
	if (!f->ops || !f->ops->config_passthrough)
		return;
	for (uint32_t i = 0; i < len;) {
		if (!pci_func_is_passthrough(f, offset + i)) {
			i++;
			continue;
		}
		uint32_t n = 1;
		while (i + n < len && pci_func_is_passthrough(f, offset + i + n))
			n++;
		if (f->ops->config_passthrough(f->opaque, write, offset + i, n, buf + i) && !write)
			memset(buf + i, 0xff, n);
		i += n;
	}
}

uint32_t pci_func_cfg_read(struct pci_func *f, uint32_t offset, uint32_t len)
{
	if (!access_ok(offset, len)) {
		log_ratelimited(&f->rl, LOG_INFO, "%s: bad config read of %u bytes at 0x%x",
				f->name, len, offset);
		return len >= 4 ? 0xffffffffu : (1u << (len * 8)) - 1;
	}
	if (trapped(f, offset, len))
		f->ops->config_trap(f->opaque, false);
	uint8_t buf[4];
	uint32_t v = 0;
	pthread_mutex_lock(&f->lock);
	memcpy(buf, &f->cfg[offset], len);
	passthrough_runs(f, false, offset, len, buf);
	pthread_mutex_unlock(&f->lock);
	for (uint32_t i = 0; i < len; i++)
		v |= (uint32_t)buf[i] << (8 * i);
	return v;
}

void pci_func_cfg_write(struct pci_func *f, uint32_t offset, uint32_t len, uint32_t value)
{
	if (!access_ok(offset, len)) {
		log_ratelimited(&f->rl, LOG_INFO, "%s: bad config write of %u bytes at 0x%x",
				f->name, len, offset);
		return;
	}
	uint8_t buf[4];
	pthread_mutex_lock(&f->lock);
	for (uint32_t i = 0; i < len; i++) {
		uint8_t v = buf[i] = (uint8_t)(value >> (8 * i));
		uint32_t o = offset + i;
		if (pci_func_is_passthrough(f, o))
			continue;
		f->cfg[o] = (uint8_t)((f->cfg[o] & ~f->wmask[o]) | (v & f->wmask[o]));
		f->cfg[o] &= (uint8_t)~(v & f->w1cmask[o]);
	}
	passthrough_runs(f, true, offset, len, buf);
	bool touches_bars = offset < PCI_BAR0 + 4 * PCI_NUM_BARS && offset + len > PCI_BAR0;
	bool touches_cmd = offset < PCI_COMMAND + 2 && offset + len > PCI_COMMAND;
	bool touches_rom = offset < PCI_ROM_ADDRESS + 4 && offset + len > PCI_ROM_ADDRESS;
	if (touches_bars || touches_cmd || touches_rom)
		update_bars(f);
	if (f->ops && f->ops->config_written)
		f->ops->config_written(f->opaque, offset, len);
	pthread_mutex_unlock(&f->lock);
	if (trapped(f, offset, len))
		f->ops->config_trap(f->opaque, true);
}
