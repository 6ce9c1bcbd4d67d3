/* Fuzz input formats shared by the targets and the seed generator: opcodes, guest layout, encoders. */
#ifndef MSIVM_TESTS_FUZZ_OPS_H
#define MSIVM_TESTS_FUZZ_OPS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- Virtio device targets (fuzz_virtio_*): a fake driver's program ----
 *
 * Input: header, then ops until the input ends (a missing byte reads as 0).
 *   header: u8 irq mode (% 4: msix, msix-shared, msi, intx)
 *           u8 setup: bit0 skip the bring-up (raw transport), bits 4-7 log2 queue size (% 9)
 *           u64 features the driver refuses (dropped from the offered set)
 *           u8 device byte (target-specific: blk read-only, net pairs, ...)
 * Bring-up (unless skipped): reset, ACK, DRIVER, features, FEATURES_OK, every queue at
 * FZ_DESC/FZ_AVAIL/FZ_USED(q) with vector q+1, interrupts programmed for the mode, DRIVER_OK. */
enum fz_op {
	FZ_OP_DESC,    /* u8 q, u8 idx, u8 asel, u16 aoff, u16 len, u8 flags, u8 next [u64 addr, u32 len if asel%4==3] */
	FZ_OP_AVAIL,   /* u8 q, u16 head: publish head in q's avail ring */
	FZ_OP_KICK,    /* u8 q: write to q's notify address (q past the queues too) */
	FZ_OP_WRITE,   /* u16 off, u8 len (1 + len%8), u64 value: BAR0 write through the MMIO bus */
	FZ_OP_READ,    /* u16 off, u8 len: BAR0 read */
	FZ_OP_RAM,     /* u32 off, u8 n, n bytes: the driver writes guest RAM (clipped) */
	FZ_OP_STEP,    /* u8 arg: the device's host-side step (completions, backend poll) and an INTx EOI */
	FZ_OP_RING,    /* u8 q, u8 field, u16 value: avail flags/idx/used_event, used flags/idx/avail_event */
	FZ_OP_MSIX,    /* u16 off, u8 len (bit 7: read), u64 value: MSI-X table/PBA through the MMIO bus */
	FZ_OP_CFG,     /* u8 off, u8 len (1,2,4), u32 value: config space write (BAR moves, MSI, MSI-X) */
	FZ_OP_BRINGUP, /* nothing: reset and bring the device up again (FZ_MAX_BRINGUPS per input) */
	FZ_NOPS
};

/* Guest RAM of the device targets: per-queue rings, then a data area. */
#define FZ_RAM_SIZE   0x40000u
#define FZ_RING(q)    (0x1000u + (uint32_t)(q) * 0x3000u)
#define FZ_DESC(q)    FZ_RING(q)
#define FZ_AVAIL(q)   (FZ_RING(q) + 0x1000u)
#define FZ_USED(q)    (FZ_RING(q) + 0x2000u)
#define FZ_DATA       0x32000u
#define FZ_DATA_SIZE  (FZ_RAM_SIZE - FZ_DATA)
#define FZ_MAXQ       16u
#define FZ_MAX_BRINGUPS 4u /* FZ_OP_BRINGUP ops per input that run; later ones do nothing */
#define FZ_BAR0       0xC0000000ull
#define FZ_BAR2       0xC0010000ull
#define FZ_MSI_ADDR   0xFEE00000u

/* ---- PCI target (fuzz_pci) ----
 * Input: u8 MSI-X vectors of device 0 (% 66, 65 = derive from the mode), then ops. */
enum fz_pci_op {
	FZP_PIO,       /* u8 port (0xcf8 + %8), u8 len (1,2,4; bit 7 read), u32 value */
	FZP_ECAM,      /* u32 off (% 1 MiB), u8 len (1..8; bit 7 read), u64 value */
	FZP_BAR,       /* u8 dev (% 4: 3 is pci-testdev, BAR0 MMIO / BAR1 I/O), u8 bar, u16 off,
			* u8 len (1..8; bit 7 read), u64 value: at the BAR's address */
	FZP_MMIO,      /* u32 addr (in the MMIO hole), u8 len, u64 value: anywhere */
	FZP_SIGNAL,    /* u8 dev, u8 vector: the device raises an MSI-X vector or MSI message */
	FZP_EOI,       /* u8 dev: the INTx resample of an EOI */
	FZP_NOPS
};

/* ---- Virtqueue target (fuzz_virtq) ----
 * Input: u8 log2 size (% 16), u8 flags (bit0 event_idx, bit1 raw addresses),
 *        desc/avail/used: u16 each (offsets in RAM) or u64 each when raw,
 *        u8 rounds, u8 per round (action), then the RAM image copied at 0. */
#define FZQ_RAM_SIZE 0x10000u

/* Little-endian appenders for generators; `p` must have room. Return the advanced pointer. */
static inline uint8_t *fz_put(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

#endif
