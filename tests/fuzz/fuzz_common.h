/* Fuzz harness: an input reader, a fake VM (RAM, MMIO bus, GSI routes without KVM) and a malicious virtio driver. */
#ifndef MSIVM_TESTS_FUZZ_COMMON_H
#define MSIVM_TESTS_FUZZ_COMMON_H

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus/bus.h"
#include "fuzz_ops.h"
#include "irq/gsi_routes.h"
#include "pci/msi.h"
#include "pci/msix.h"
#include "pci/pci_func.h"
#include "util/log.h"
#include "virtio/virtio_pci.h"
#include "virtio/virtio_pci_common.h"
#include "core/guest_mem.h"

#define FZ_HOLE_START 0xC0000000ull
#define FZ_HOLE_END   0x100000000ull
#define FZ_WIN_START  0xC0000000ull
#define FZ_WIN_END    0xE0000000ull

/* An invariant the code under test promised is broken: report like a crash. */
#define FZ_CHECK(cond)                                                                   \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "fuzz: %s:%d: invariant failed: %s\n", __FILE__, \
				__LINE__, #cond);                                        \
			abort();                                                         \
		}                                                                        \
	} while (0)

/* ---- input reader: every read past the end yields zeros ---- */

struct fz_in {
	const uint8_t *p;
	size_t left;
};

static inline uint64_t fz_take(struct fz_in *in, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n && in->left; i++, in->p++, in->left--)
		v |= (uint64_t)*in->p << (8 * i);
	return v;
}
static inline uint8_t fz_u8(struct fz_in *in) { return (uint8_t)fz_take(in, 1); }
static inline uint16_t fz_u16(struct fz_in *in) { return (uint16_t)fz_take(in, 2); }
static inline uint32_t fz_u32(struct fz_in *in) { return (uint32_t)fz_take(in, 4); }
static inline uint64_t fz_u64(struct fz_in *in) { return fz_take(in, 8); }

/* The rest of the input up to its first NUL, as a malloc'd string in an exact-size buffer
 * (so that ASan sees its end); *len gets its length. */
static inline char *fz_str(const struct fz_in *in, size_t *len)
{
	size_t n = strnlen((const char *)in->p, in->left);
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, in->p, n);
	s[n] = '\0';
	*len = n;
	return s;
}

/* Silences msivm's guest-error log lines (they are rate-limited, but a fuzzer
 * makes millions); errors still print. Call from LLVMFuzzerInitialize. */
static inline void fz_quiet(void)
{
	if (!getenv("FUZZ_VERBOSE"))
		log_set_level(LOG_ERROR);
}

/* ---- the fake VM of one input: created and destroyed per run ---- */

struct fz_vm {
	uint8_t *ram;              /* the fixture's RAM, zeroed per run */
	uint64_t ram_size;
	struct guest_mem gm;
	struct bus pio, mmio;
	struct gsi_routes routes;
};

/* Zeroes `ram` (ram_size bytes) and builds buses and routes (vm_fd -1: no ioctls). 0 or -1. */
static inline int fz_vm_init(struct fz_vm *vm, uint8_t *ram, uint64_t ram_size)
{
	memset(vm, 0, sizeof(*vm));
	memset(ram, 0, ram_size);
	vm->ram = ram;
	vm->ram_size = ram_size;
	if (guest_mem_init(&vm->gm, ram, ram_size, FZ_HOLE_START, FZ_HOLE_END) ||
	    bus_init(&vm->pio, "pio") || bus_init(&vm->mmio, "mmio") ||
	    gsi_routes_init(&vm->routes, -1))
		return -1;
	return 0;
}

/* After every device is destroyed. */
static inline void fz_vm_destroy(struct fz_vm *vm)
{
	gsi_routes_destroy(&vm->routes);
	bus_destroy(&vm->mmio);
	bus_destroy(&vm->pio);
}

static inline struct pci_window fz_window(void)
{
	return (struct pci_window){ FZ_WIN_START, FZ_WIN_END };
}

/* ---- the malicious driver of a virtio device ---- */

struct fz_drv {
	struct fz_vm *vm;
	struct virtio_pci *t;
	/* The device's host-side work between guest accesses (NULL: none). */
	void (*step)(void *opaque, uint8_t arg);
	void *opaque;
	uint16_t qsize[FZ_MAXQ];
	uint16_t avail_idx[FZ_MAXQ];
	unsigned bringups;     /* FZ_OP_BRINGUP ops run so far (at most FZ_MAX_BRINGUPS) */
};

static inline void fz_le16(uint8_t *p, uint16_t v) { v = htole16(v); memcpy(p, &v, 2); }
static inline void fz_le32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static inline void fz_le64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }

static inline void fz_mmio_write(struct fz_drv *d, uint64_t addr, uint64_t v, uint32_t len)
{
	v = htole64(v);
	bus_write(&d->vm->mmio, addr, &v, len);
}

static inline uint64_t fz_mmio_read(struct fz_drv *d, uint64_t addr, uint32_t len)
{
	uint64_t v = 0;
	bus_read(&d->vm->mmio, addr, &v, len);
	return le64toh(v);
}

#define FZ_CW(d, reg, v, len) fz_mmio_write((d), FZ_BAR0 + VPCI_COMMON_OFF + (reg), (v), (len))
#define FZ_CR(d, reg, len)    fz_mmio_read((d), FZ_BAR0 + VPCI_COMMON_OFF + (reg), (len))

/* Maps BAR0 (and the MSI-X BAR) where firmware would and turns on memory
 * decode and bus mastering; wires INTx to GSI 17, as slot 1 would be. */
static inline int fz_drv_attach(struct fz_drv *d, struct fz_vm *vm, struct virtio_pci *t)
{
	d->vm = vm;
	d->t = t;
	if (virtio_pci_attach_intx(t, 17))
		return -1;
	pci_func_set_bar_addr(&t->func, 0, FZ_BAR0);
	if (t->func.bars[VPCI_MSIX_BAR].size)
		pci_func_set_bar_addr(&t->func, VPCI_MSIX_BAR, FZ_BAR2);
	pci_func_cfg_write(&t->func, PCI_COMMAND, 2, PCI_CMD_MEMORY | PCI_CMD_MASTER);
	return 0;
}

/* MSI-X: every vector at the LAPIC, unmasked, then enabled. MSI: address,
 * data, every message enabled. INTx: nothing to program. */
static inline void fz_drv_irqs(struct fz_drv *d)
{
	struct virtio_pci *t = d->t;
	if (t->has_msix) {
		for (unsigned v = 0; v < t->msix.nvec; v++) {
			uint64_t e = FZ_BAR2 + (uint64_t)v * MSIX_ENTRY_SIZE;
			fz_mmio_write(d, e, FZ_MSI_ADDR, 4);
			fz_mmio_write(d, e + 4, 0, 4);
			fz_mmio_write(d, e + 8, 0x40 + v, 4);
			fz_mmio_write(d, e + 12, 0, 4);
		}
		pci_func_cfg_write(&t->func, t->msix.cap + 2u, 2, MSIX_CTRL_ENABLE);
	}
	if (t->has_msi) {
		pci_func_cfg_write(&t->func, t->msi.cap + 4u, 4, FZ_MSI_ADDR);
		pci_func_cfg_write(&t->func, t->msi.cap + 8u, 4, 0);
		pci_func_cfg_write(&t->func, t->msi.cap + 12u, 2, 0x50);
		pci_func_cfg_write(&t->func, t->msi.cap + 2u, 2, 0x1 | 5u << 4); /* enable, MME 32 */
	}
}

/* Reset, negotiation of offered & ~drop, every queue at its fixed rings with
 * 2^log2q entries (clamped to the device's maximum), DRIVER_OK. */
static inline void fz_drv_bringup(struct fz_drv *d, uint64_t drop, unsigned log2q)
{
	FZ_CW(d, VPCI_STATUS, 0, 1);
	FZ_CW(d, VPCI_STATUS, VIRTIO_STATUS_ACK, 1);
	FZ_CW(d, VPCI_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER, 1);
	FZ_CW(d, VPCI_DFSELECT, 0, 4);
	uint64_t offered = FZ_CR(d, VPCI_DF, 4);
	FZ_CW(d, VPCI_DFSELECT, 1, 4);
	offered |= FZ_CR(d, VPCI_DF, 4) << 32;
	uint64_t want = offered & ~drop;
	FZ_CW(d, VPCI_GFSELECT, 0, 4);
	FZ_CW(d, VPCI_GF, (uint32_t)want, 4);
	FZ_CW(d, VPCI_GFSELECT, 1, 4);
	FZ_CW(d, VPCI_GF, want >> 32, 4);
	FZ_CW(d, VPCI_STATUS,
	      VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK, 1);
	FZ_CW(d, VPCI_MSIX_CONFIG, 0, 2);
	uint16_t nq = (uint16_t)FZ_CR(d, VPCI_NUM_QUEUES, 2);
	for (uint16_t q = 0; q < nq && q < FZ_MAXQ; q++) {
		FZ_CW(d, VPCI_Q_SELECT, q, 2);
		uint16_t max = (uint16_t)FZ_CR(d, VPCI_Q_SIZE, 2);
		uint16_t size = (uint16_t)(1u << log2q);
		if (size > max)
			size = max;
		d->qsize[q] = size;
		d->avail_idx[q] = 0;
		FZ_CW(d, VPCI_Q_SIZE, size, 2);
		FZ_CW(d, VPCI_Q_DESC_LO, FZ_DESC(q), 8);
		FZ_CW(d, VPCI_Q_DRIVER_LO, FZ_AVAIL(q), 8);
		FZ_CW(d, VPCI_Q_DEVICE_LO, FZ_USED(q), 8);
		FZ_CW(d, VPCI_Q_MSIX, q + 1u, 2);
		FZ_CW(d, VPCI_Q_ENABLE, 1, 2);
	}
	fz_drv_irqs(d);
	FZ_CW(d, VPCI_STATUS,
	      VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK |
		      VIRTIO_STATUS_DRIVER_OK, 1);
}

/* What KVM does at the guest's EOI of a level INTx line: signal the resample fd. */
static inline void fz_drv_eoi(struct fz_drv *d)
{
	struct virtio_pci *t = d->t;
	if (t->intx.resample_fd < 0 || !t->resample_handler.cb)
		return;
	uint64_t one = 1;
	if (write(t->intx.resample_fd, &one, sizeof(one)) == sizeof(one))
		t->resample_handler.cb(t->resample_handler.opaque, 1 /* EPOLLIN */);
}

/* A descriptor address the driver chose: in the data area, over q's own rings,
 * straddling the end of RAM, or anything. */
static inline uint64_t fz_addr(struct fz_in *in, uint16_t q, uint8_t asel, uint16_t aoff)
{
	switch (asel % 4) {
	case 0: return FZ_DATA + aoff % FZ_DATA_SIZE;
	case 1: return FZ_RING(q % FZ_MAXQ) + aoff % 0x3000u;
	case 2: return FZ_RAM_SIZE - aoff % 64u;
	default: return fz_u64(in);
	}
}

/* Runs the driver program of `in` (after its header) to the end. */
static inline void fz_drv_run(struct fz_drv *d, struct fz_in *in, uint64_t drop, unsigned log2q,
			      const uint8_t *allowed, unsigned nallowed)
{
	uint8_t *ram = d->vm->ram;
	while (in->left) {
		uint8_t op = fz_u8(in);
		op = allowed ? allowed[op % nallowed] : op % FZ_NOPS;
		switch (op) {
		case FZ_OP_DESC: {
			uint8_t q = fz_u8(in) % FZ_MAXQ, idx = fz_u8(in), asel = fz_u8(in);
			uint16_t aoff = fz_u16(in), len16 = fz_u16(in);
			uint8_t flags = fz_u8(in), next = fz_u8(in);
			uint64_t addr = fz_addr(in, q, asel, aoff);
			uint32_t len = asel % 4 == 3 ? fz_u32(in) : len16;
			uint16_t size = d->qsize[q] ? d->qsize[q] : 256;
			uint8_t *p = ram + FZ_DESC(q) + 16u * (idx % size);
			fz_le64(p, addr);
			fz_le32(p + 8, len);
			fz_le16(p + 12, flags);
			fz_le16(p + 14, next);
			break;
		}
		case FZ_OP_AVAIL: {
			uint8_t q = fz_u8(in) % FZ_MAXQ;
			uint16_t head = fz_u16(in);
			uint16_t size = d->qsize[q] ? d->qsize[q] : 256;
			fz_le16(ram + FZ_AVAIL(q) + 4 + 2u * (d->avail_idx[q] % size), head);
			d->avail_idx[q]++;
			fz_le16(ram + FZ_AVAIL(q) + 2, d->avail_idx[q]);
			break;
		}
		case FZ_OP_KICK:
			fz_mmio_write(d, FZ_BAR0 + VPCI_NOTIFY_OFF + VPCI_NOTIFY_MULT * (fz_u8(in) % 20u),
				      0, 2);
			break;
		case FZ_OP_WRITE: {
			uint16_t off = fz_u16(in) % VPCI_BAR0_SIZE;
			uint32_t len = 1u + fz_u8(in) % 8u;
			fz_mmio_write(d, FZ_BAR0 + off, fz_u64(in), len);
			break;
		}
		case FZ_OP_READ: {
			uint16_t off = fz_u16(in) % VPCI_BAR0_SIZE;
			(void)fz_mmio_read(d, FZ_BAR0 + off, 1u + fz_u8(in) % 8u);
			break;
		}
		case FZ_OP_RAM: {
			uint32_t off = fz_u32(in) % FZ_RAM_SIZE;
			uint32_t n = fz_u8(in);
			if (n > in->left)
				n = (uint32_t)in->left;
			if (n > FZ_RAM_SIZE - off)
				n = FZ_RAM_SIZE - off;
			memcpy(ram + off, in->p, n);
			in->p += n;
			in->left -= n;
			break;
		}
		case FZ_OP_STEP: {
			uint8_t arg = fz_u8(in);
			if (d->step)
				d->step(d->opaque, arg);
			fz_drv_eoi(d);
			break;
		}
		case FZ_OP_RING: {
			uint8_t q = fz_u8(in) % FZ_MAXQ, field = fz_u8(in);
			uint16_t v = fz_u16(in);
			uint16_t size = d->qsize[q] ? d->qsize[q] : 256;
			switch (field % 6) {
			case 0: fz_le16(ram + FZ_AVAIL(q), v); break;                  /* avail flags */
			case 1: fz_le16(ram + FZ_AVAIL(q) + 2, v); d->avail_idx[q] = v; break;
			case 2: fz_le16(ram + FZ_AVAIL(q) + 4 + 2u * size, v); break;  /* used_event */
			case 3: fz_le16(ram + FZ_USED(q), v); break;                   /* used flags */
			case 4: fz_le16(ram + FZ_USED(q) + 2, v); break;               /* used idx */
			default: fz_le16(ram + FZ_USED(q) + 4 + 8u * size, v); break;  /* avail_event */
			}
			break;
		}
		case FZ_OP_MSIX: {
			uint16_t off = fz_u16(in) % 0x1000u;
			uint8_t l = fz_u8(in);
			uint64_t v = fz_u64(in);
			if (l & 0x80)
				(void)fz_mmio_read(d, FZ_BAR2 + off, 1u + l % 8u);
			else
				fz_mmio_write(d, FZ_BAR2 + off, v, 1u + l % 8u);
			break;
		}
		case FZ_OP_CFG: {
			static const uint32_t lens[4] = { 1, 2, 4, 4 };
			uint8_t off = fz_u8(in);
			uint32_t len = lens[fz_u8(in) % 4];
			pci_func_cfg_write(&d->t->func, off & ~(len - 1u), len, fz_u32(in));
			break;
		}
		default:
			/* One byte buys ~100 register writes: past a few per input
			 * they only cost executions. */
			if (d->bringups < FZ_MAX_BRINGUPS) {
				d->bringups++;
				fz_drv_bringup(d, drop, log2q);
			}
			break;
		}
	}
}

/* The device targets' common header and program: reads the header (mode
 * already taken by the caller), brings the device up unless told not to,
 * and runs the ops. `allowed` restricts the opcodes (NULL: all). */
static inline void fz_drv_main(struct fz_drv *d, struct fz_in *in, uint8_t setup, uint64_t drop,
			       const uint8_t *allowed, unsigned nallowed)
{
	unsigned log2q = (setup >> 4) % 9u;
	if (!(setup & 1))
		fz_drv_bringup(d, drop, log2q);
	fz_drv_run(d, in, drop, log2q, allowed, nallowed);
}

#endif
