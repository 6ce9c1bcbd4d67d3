/* PCI function: a type-0 config space with read-only, writable and write-1-to-clear bits, BARs mapped by decode. */
#ifndef MSIVM_PCI_PCI_FUNC_H
#define MSIVM_PCI_PCI_FUNC_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus/bus.h"
#include "util/log.h"

#define PCI_CFG_SIZE      256
#define PCI_NUM_BARS      6

/* Standard header offsets and bits used across msivm. */
#define PCI_VENDOR_ID     0x00
#define PCI_DEVICE_ID     0x02
#define PCI_COMMAND       0x04
#define PCI_STATUS        0x06
#define PCI_REVISION      0x08
#define PCI_CLASS_PROG    0x09
#define PCI_HEADER_TYPE   0x0e
#define PCI_BAR0          0x10
#define PCI_SUBSYS_VENDOR 0x2c
#define PCI_SUBSYS_ID     0x2e
#define PCI_ROM_ADDRESS   0x30    /* expansion ROM BAR (type-0 header) */
#define PCI_CAP_PTR       0x34
#define PCI_INT_LINE      0x3c
#define PCI_INT_PIN       0x3d
#define PCI_CMD_IO        0x0001
#define PCI_CMD_MEMORY    0x0002
#define PCI_CMD_MASTER    0x0004
#define PCI_CMD_INTX_DISABLE 0x0400
#define PCI_STATUS_INTX   0x0008
#define PCI_STATUS_CAPS   0x0010
#define PCI_BAR_MEM64     0x04
#define PCI_BAR_IO        0x01
#define PCI_IO_SPACE_END  0x10000 /* x86 port space: an I/O BAR maps below it */
#define PCI_ROM_ENABLE    0x1     /* bit 0 of the ROM BAR: address decode enable */
#define PCI_ROM_ADDR_MASK 0xfffff800u /* bits 31:11: the address; bits 10:1 reserved (read 0) */
#define PCI_ROM_MIN_SIZE  0x800   /* 2 KiB: the smallest ROM BAR */
#define PCI_ROM_MAX_SIZE  (16u << 20) /* the largest ROM a function may declare (16 MiB) */

/* The MMIO window BARs may be placed in, and the mapping rules' view of RAM. */
struct pci_window {
	uint64_t start, end;   /* [start, end) */
};

struct pci_bar {
	uint64_t size;         /* power of two >= 16 (I/O: 4..256); 0: BAR not implemented */
	bool is64;
	bool prefetch;         /* a memory BAR marked prefetchable (bit 3) */
	bool io;               /* an I/O BAR: on the port bus while I/O decode is on */
	uint64_t mapped_at;    /* guest address while mapped */
	bool mapped;
	const struct bus_ops *ops;
	void *opaque;
	const char *name;
};

/* Reads `len` (1..8) bytes at `off` of a function's expansion ROM into `data`; `off + len` is
 * inside the ROM BAR (the owner fills bytes past its content as it sees fit). */
typedef void (*pci_rom_read_fn)(void *opaque, uint64_t off, void *data, uint32_t len);

/* The function's expansion ROM (pci_func_add_rom): a read-only memory BAR at config 0x30. */
struct pci_rom {
	uint32_t size;         /* BAR size: a power of two, 2 KiB..16 MiB; 0: no ROM (0x30 reads 0) */
	uint64_t mapped_at;
	bool mapped;
	pci_rom_read_fn read;
	void *opaque;
	const char *name;
	uint64_t reads;        /* guest reads served */
	uint64_t writes_dropped; /* guest writes into the ROM, dropped */
};

struct pci_func;

/* Hooks of whoever owns the function (the virtio transport). Optional. */
struct pci_func_ops {
	/* Called after a guest config write landed in [offset, offset+len),
	 * with the function's lock held, so capability owners (MSI, MSI-X)
	 * can pick up their registers. */
	void (*config_written)(void *opaque, uint32_t offset, uint32_t len);
	/* Called WITHOUT the function's lock when a guest config access overlaps the trap range
	 * [trap_off, trap_off + trap_len): before a read (the owner may refresh those bytes with
	 * pci_func_cfg_store), after a write landed. Lets a capability be a window onto a BAR
	 * (virtio's PCI_CFG capability) whose handlers take other locks. */
	void (*config_trap)(void *opaque, bool write);
	/* Called when BAR `idx` gets mapped at `addr` or unmapped (mapped ==
	 * false), with the function's lock held: lets the owner move what KVM
	 * must know by address, such as ioeventfds. */
	void (*bar_moved)(void *opaque, unsigned idx, bool mapped, uint64_t addr);
	/* Called with the function's lock held for the config bytes marked with
	 * pci_func_set_passthrough (a passed-through device's own registers): a guest read of
	 * [off, off+len) fills buf from the device, a guest write sends buf to it. A read that
	 * fails returns -errno and the guest reads all-ones there. */
	int (*config_passthrough)(void *opaque, bool write, uint32_t off, uint32_t len,
				  uint8_t *buf);
};

struct pci_func {
	pthread_mutex_t lock;
	const char *name;
	uint8_t devfn;
	uint8_t cfg[PCI_CFG_SIZE];
	uint8_t wmask[PCI_CFG_SIZE];    /* bits the guest may write */
	uint8_t w1cmask[PCI_CFG_SIZE];  /* bits a written 1 clears */
	uint8_t cap_end;                /* next free config offset for a capability */
	uint8_t last_cap;               /* offset of the last capability, 0 if none */
	uint8_t trap_off, trap_len;     /* config bytes whose accesses call ops->config_trap */
	uint8_t passthrough[PCI_CFG_SIZE / 8]; /* bit per byte: the device's own (config_passthrough) */
	struct pci_bar bars[PCI_NUM_BARS];
	struct pci_rom rom;
	struct bus *mmio;
	struct bus *pio;                /* I/O BARs' bus (pci_func_add_io_bar), NULL without one */
	struct pci_window window;
	const struct pci_func_ops *ops;
	void *opaque;
	struct ratelimit rl;
	uint64_t refused_maps;          /* BAR placements refused (overlap, outside window) */
};

/* Sets up a function's header: ids, class (24 bits: class, subclass,
 * prog-if), interrupt pin A, status with the capability list. BARs are
 * mapped on `mmio` inside `window` while memory decode is on.
 * Returns 0 or -errno. */
int pci_func_init(struct pci_func *f, const char *name, uint16_t vendor, uint16_t device,
		  uint32_t class_code, uint16_t subsys_vendor, uint16_t subsys_id,
		  struct bus *mmio, struct pci_window window);
void pci_func_destroy(struct pci_func *f);

/* Declares memory BAR `idx` of `size` bytes (a power of two >= 16); a 64-bit
 * BAR also takes idx+1. Its accesses go to `ops`/`opaque`. Returns 0 or
 * -EINVAL. Call before the guest runs. */
int pci_func_add_bar(struct pci_func *f, unsigned idx, uint64_t size, bool is64,
		     const struct bus_ops *ops, void *opaque, const char *name);

/* Declares I/O BAR `idx` of `size` bytes (a power of two, 4..256) on the port bus `pio`: it is
 * mapped there while I/O decode is on, at a non-zero address below 64 KiB that overlaps no other
 * range. Its accesses go to `ops`/`opaque`. Returns 0 or -EINVAL. Call before the guest runs. */
int pci_func_add_io_bar(struct pci_func *f, unsigned idx, uint32_t size, struct bus *pio,
			const struct bus_ops *ops, void *opaque, const char *name);

/* Declares an expansion ROM of `size` bytes (a power of two, PCI_ROM_MIN_SIZE..PCI_ROM_MAX_SIZE)
 * at config offset 0x30: the guest sizes it by writing all-ones (bits 31:11 follow the size,
 * bit 0 is its enable, bits 10:1 read 0). It is on `mmio` only while its enable bit AND the
 * command register's memory decode are on, at an address that passes the memory BARs' checks
 * (inside the window, over no other range); refused placements are counted in refused_maps.
 * Reads of any width (1..8) go to `read`; writes are dropped, counted in rom.writes_dropped and
 * logged rate-limited: nothing the guest does reaches the owner but reads. Returns 0 or
 * -EINVAL (bad size, a ROM already declared). Call before the guest runs. */
int pci_func_add_rom(struct pci_func *f, uint32_t size, pci_rom_read_fn read, void *opaque,
		     const char *name);

/* Programs the ROM BAR's address to `addr` (aligned to its size), its enable bit off, as
 * firmware would. No-op without a ROM. */
void pci_func_set_rom_addr(struct pci_func *f, uint64_t addr);

/* Marks memory BAR `idx` prefetchable (its read-only bit 3, as the device it stands for has
 * it). Call after pci_func_add_bar, before the guest runs. */
void pci_func_set_bar_prefetch(struct pci_func *f, unsigned idx);

/* Programs BAR `idx` to `addr`, as firmware would, without enabling decode. */
void pci_func_set_bar_addr(struct pci_func *f, unsigned idx, uint64_t addr);

/* The address BAR `idx` currently holds (not necessarily mapped). */
uint64_t pci_func_bar_addr(const struct pci_func *f, unsigned idx);

/* Appends a capability of `len` bytes (>= 2) with id `cap_id` to the list.
 * Returns its config offset, or -ENOSPC. `wmask` (len bytes, may be NULL for
 * read-only) gives the guest-writable bits of the capability body. */
int pci_func_add_cap(struct pci_func *f, uint8_t cap_id, uint8_t len, const uint8_t *wmask);

/* Marks config bytes [off, off+len) as the device's own (on) or msivm's (off): guest accesses
 * to them go to ops->config_passthrough, not to f->cfg, whose bytes there stay as they were.
 * Bytes past the 256-byte space are ignored. Call before the guest runs. */
void pci_func_set_passthrough(struct pci_func *f, uint32_t off, uint32_t len, bool on);

/* Whether config byte `off` is the device's own (pci_func_set_passthrough). */
static inline bool pci_func_is_passthrough(const struct pci_func *f, uint32_t off)
{
	return off < PCI_CFG_SIZE && (f->passthrough[off / 8] >> (off % 8)) & 1;
}

/* Guest config accesses: `offset` must be aligned to `len` (1, 2 or 4) and
 * inside the 256-byte space; other accesses read all-ones / are dropped
 * and logged. Reads and writes take the function's lock. */
uint32_t pci_func_cfg_read(struct pci_func *f, uint32_t offset, uint32_t len);
void pci_func_cfg_write(struct pci_func *f, uint32_t offset, uint32_t len, uint32_t value);

/* Reads / stores `len` (<= 4) bytes of the config space under the function's lock, ignoring
 * write masks: for owners outside the lock (config_trap). `off + len` must be <= 256. */
uint32_t pci_func_cfg_load(struct pci_func *f, uint32_t off, uint32_t len);
void pci_func_cfg_store(struct pci_func *f, uint32_t off, uint32_t len, uint32_t value);

/* Little-endian accessors for the owner's use on f->cfg (lock held or before running). */
static inline uint16_t pci_cfg_get16(const struct pci_func *f, uint32_t off)
{
	return (uint16_t)(f->cfg[off] | f->cfg[off + 1] << 8);
}
static inline uint32_t pci_cfg_get32(const struct pci_func *f, uint32_t off)
{
	return (uint32_t)pci_cfg_get16(f, off) | (uint32_t)pci_cfg_get16(f, off + 2) << 16;
}
/* The little-endian dword at `off` of a config space image (e.g. a saved one). */
static inline uint32_t pci_cfg_get32_raw(const uint8_t *cfg, uint32_t off)
{
	return (uint32_t)cfg[off] | (uint32_t)cfg[off + 1] << 8 | (uint32_t)cfg[off + 2] << 16 |
	       (uint32_t)cfg[off + 3] << 24;
}
static inline void pci_cfg_set16(struct pci_func *f, uint32_t off, uint16_t v)
{
	f->cfg[off] = (uint8_t)v;
	f->cfg[off + 1] = (uint8_t)(v >> 8);
}
static inline void pci_cfg_set32(struct pci_func *f, uint32_t off, uint32_t v)
{
	pci_cfg_set16(f, off, (uint16_t)v);
	pci_cfg_set16(f, off + 2, (uint16_t)(v >> 16));
}

#endif
