/* Fuzz target: PCI config space through CF8/CFC and ECAM, BAR and expansion ROM moves (memory and I/O), MSI-X table/PBA and MSI, three virtio functions and pci-testdev on bus 0. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "devices/pci_testdev.h"
#include "devices/virtio_console.h"
#include "devices/virtio_rng.h"
#include "fuzz_common.h"
#include "pci/pci_host.h"

#define ECAM_BASE 0xE0000000ull
#define ECAM_SIZE (1u << 20)
#define NDEV      3

static uint8_t *ram;     /* the fixture: guest RAM, zeroed per run */
static int devnull = -1; /* the console's output */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(FZ_RAM_SIZE);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return ram && devnull >= 0 ? 0 : -1;
}

struct rig {
	struct fz_vm vm;
	struct pci_host host;
	struct virtio_rng *rng0, *rng2;   /* MSI-X (vectors from the input), INTx */
	struct virtio_console *con1;      /* MSI */
	struct virtio_pci *t[NDEV];
	struct pci_testdev *td;           /* slot 4: an I/O BAR, test registers */
};

/* Every mapped BAR lies inside the window and overlaps no other mapped BAR:
 * what pci_func promises whatever the guest wrote. */
static void check_bars(const struct rig *r)
{
	for (unsigned a = 0; a < NDEV * PCI_NUM_BARS; a++) {
		const struct pci_bar *x = &r->t[a / PCI_NUM_BARS]->func.bars[a % PCI_NUM_BARS];
		if (!x->mapped)
			continue;
		FZ_CHECK(x->mapped_at >= FZ_WIN_START && x->mapped_at + x->size <= FZ_WIN_END);
		FZ_CHECK(x->mapped_at % x->size == 0);
		for (unsigned b = a + 1; b < NDEV * PCI_NUM_BARS; b++) {
			const struct pci_bar *y = &r->t[b / PCI_NUM_BARS]->func.bars[b % PCI_NUM_BARS];
			if (y->mapped)
				FZ_CHECK(x->mapped_at + x->size <= y->mapped_at ||
					 y->mapped_at + y->size <= x->mapped_at);
		}
	}
	/* pci-testdev: its memory BAR as above, its I/O BAR at a non-zero port below 64 KiB, never
	 * over the config ports; a selected test is one of the six. */
	const struct pci_bar *m = &r->td->func.bars[0], *io = &r->td->func.bars[1];
	if (m->mapped)
		FZ_CHECK(m->mapped_at >= FZ_WIN_START && m->mapped_at + m->size <= FZ_WIN_END);
	if (io->mapped)
		FZ_CHECK(io->mapped_at && io->mapped_at + io->size <= PCI_IO_SPACE_END &&
			 (io->mapped_at + io->size <= PCI_CONFIG_ADDR_PORT ||
			  io->mapped_at >= PCI_CONFIG_DATA_PORT + 4));
	FZ_CHECK(r->td->current >= -1 && r->td->current < PCI_TESTDEV_NTESTS);
	/* pci-testdev's expansion ROM: on the bus only with its enable bit and memory decode on, at
	 * its config address, inside the window, over no BAR. */
	const struct pci_func *tf = &r->td->func;
	const struct pci_rom *rom = &tf->rom;
	if (rom->mapped) {
		uint32_t reg = pci_cfg_get32(tf, PCI_ROM_ADDRESS);
		FZ_CHECK((reg & PCI_ROM_ENABLE) && (pci_cfg_get16(tf, PCI_COMMAND) & PCI_CMD_MEMORY));
		FZ_CHECK(rom->mapped_at == (reg & PCI_ROM_ADDR_MASK) && rom->mapped_at % rom->size == 0);
		FZ_CHECK(rom->mapped_at >= FZ_WIN_START && rom->mapped_at + rom->size <= FZ_WIN_END);
		if (m->mapped)
			FZ_CHECK(m->mapped_at + m->size <= rom->mapped_at ||
				 rom->mapped_at + rom->size <= m->mapped_at);
		for (unsigned a = 0; a < NDEV * PCI_NUM_BARS; a++) {
			const struct pci_bar *x = &r->t[a / PCI_NUM_BARS]->func.bars[a % PCI_NUM_BARS];
			if (x->mapped)
				FZ_CHECK(x->mapped_at + x->size <= rom->mapped_at ||
					 rom->mapped_at + rom->size <= x->mapped_at);
		}
	}
}

#define FZ_ROM_SIZE 0x1000u

/* pci-testdev's ROM for the fuzzer: a pattern, every byte in the BAR readable. */
static void fz_rom_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	(void)opaque;
	FZ_CHECK(off + len <= FZ_ROM_SIZE && len >= 1 && len <= 8);
	for (uint32_t i = 0; i < len; i++)
		((uint8_t *)data)[i] = (uint8_t)(off + i);
}

static void bus_access(struct bus *bus, uint64_t addr, uint8_t l, uint64_t v)
{
	uint32_t len = 1u + (l & 0x7f) % 8u;
	if (l & 0x80)
		bus_read(bus, addr, &v, len);
	else
		bus_write(bus, addr, &v, len);
}

/* Input: see fuzz_ops.h (PCI target). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct rig *r = calloc(1, sizeof(*r));
	if (!r || fz_vm_init(&r->vm, ram, FZ_RAM_SIZE) ||
	    pci_host_init(&r->host, &r->vm.pio, &r->vm.mmio, ECAM_BASE, fz_window()))
		abort();
	struct fz_vm *vm = &r->vm;
	struct error err;
	struct virtio_pci_config c0 = { .mode = IRQ_MODE_MSIX, .vectors = fz_u8(&in) % 66 - 1 };
	struct virtio_pci_config c1 = { .mode = IRQ_MODE_MSI, .vectors = 0 };
	struct virtio_pci_config c2 = { .mode = IRQ_MODE_INTX, .vectors = 0 };
	struct virtio_console_io io = { .out_fd = devnull, .in_fd = -1 };
	r->rng0 = calloc(1, sizeof(*r->rng0));
	r->con1 = calloc(1, sizeof(*r->con1));
	r->rng2 = calloc(1, sizeof(*r->rng2));
	if (!r->rng0 || !r->con1 || !r->rng2 ||
	    virtio_rng_init(r->rng0, 0, VIRTIO_RNG_GETRANDOM, &c0, &vm->gm, -1,
			    &vm->routes, NULL, &vm->mmio, fz_window(), &err) ||
	    virtio_console_init(r->con1, 1, &io, &c1, &vm->gm, -1, &vm->routes, NULL, &vm->mmio,
				fz_window(), &err) ||
	    virtio_rng_init(r->rng2, 2, VIRTIO_RNG_GETRANDOM, &c2, &vm->gm, -1,
			    &vm->routes, NULL, &vm->mmio, fz_window(), &err))
		abort();
	r->t[0] = &r->rng0->pci;
	r->t[1] = &r->con1->pci;
	r->t[2] = &r->rng2->pci;
	/* Slots 1-3 with firmware-style BAR addresses, decode off (the guest turns it on). */
	uint64_t next = FZ_WIN_START;
	for (unsigned i = 0; i < NDEV; i++) {
		int slot = pci_host_add(&r->host, &r->t[i]->func);
		if (slot < 0 || virtio_pci_attach_intx(r->t[i], pci_host_intx_gsi((uint8_t)slot)))
			abort();
		for (unsigned b = 0; b < PCI_NUM_BARS; b++) {
			uint64_t bsz = r->t[i]->func.bars[b].size;
			if (!bsz)
				continue;
			next = (next + bsz - 1) & ~(bsz - 1);
			pci_func_set_bar_addr(&r->t[i]->func, b, next);
			next += bsz;
		}
	}
	r->td = calloc(1, sizeof(*r->td));
	if (!r->td || pci_testdev_init(r->td, -1, &vm->mmio, &vm->pio, fz_window()) ||
	    pci_host_add(&r->host, &r->td->func) < 0)
		abort();
	next = (next + PCI_TESTDEV_MEM_SIZE - 1) & ~(uint64_t)(PCI_TESTDEV_MEM_SIZE - 1);
	pci_func_set_bar_addr(&r->td->func, 0, next);
	pci_func_set_bar_addr(&r->td->func, 1, 0xc000);
	if (pci_func_add_rom(&r->td->func, FZ_ROM_SIZE, fz_rom_read, NULL, "fz-rom"))
		abort();
	next += PCI_TESTDEV_MEM_SIZE;
	pci_func_set_rom_addr(&r->td->func, (next + FZ_ROM_SIZE - 1) & ~(uint64_t)(FZ_ROM_SIZE - 1));
	while (in.left) {
		uint8_t op = fz_u8(&in) % FZP_NOPS;
		switch (op) {
		case FZP_PIO: {
			static const uint32_t lens[4] = { 1, 2, 4, 4 };
			uint16_t port = (uint16_t)(PCI_CONFIG_ADDR_PORT + fz_u8(&in) % 8u);
			uint8_t l = fz_u8(&in);
			uint64_t v = fz_u32(&in);
			if (l & 0x80)
				bus_read(&vm->pio, port, &v, lens[l % 4]);
			else
				bus_write(&vm->pio, port, &v, lens[l % 4]);
			break;
		}
		case FZP_ECAM: {
			uint32_t off = fz_u32(&in) % ECAM_SIZE;
			uint8_t l = fz_u8(&in);
			bus_access(&vm->mmio, ECAM_BASE + off, l, fz_u64(&in));
			break;
		}
		case FZP_BAR: {
			unsigned dev = fz_u8(&in) % (NDEV + 1);
			struct pci_func *f = dev < NDEV ? &r->t[dev]->func : &r->td->func;
			unsigned b = fz_u8(&in) % PCI_NUM_BARS;
			uint64_t base = pci_func_bar_addr(f, b);
			uint16_t off = fz_u16(&in);
			uint8_t l = fz_u8(&in);
			bus_access(f->bars[b].io ? &vm->pio : &vm->mmio, base + off, l, fz_u64(&in));
			break;
		}
		case FZP_MMIO: {
			uint32_t a = fz_u32(&in);
			uint8_t l = fz_u8(&in);
			bus_access(&vm->mmio, FZ_HOLE_START + a % (FZ_HOLE_END - FZ_HOLE_START), l, fz_u64(&in));
			break;
		}
		case FZP_SIGNAL: {
			struct virtio_pci *t = r->t[fz_u8(&in) % NDEV];
			uint8_t v = fz_u8(&in);
			if (t->has_msix)
				(void)msix_signal(&t->msix, v);
			if (t->has_msi)
				(void)msi_signal(&t->msi, v);
			break;
		}
		default: {
			struct fz_drv d = { .vm = vm, .t = r->t[fz_u8(&in) % NDEV] };
			fz_drv_eoi(&d);
			break;
		}
		}
		check_bars(r);
	}
	virtio_rng_destroy(r->rng0);
	virtio_console_destroy(r->con1);
	virtio_rng_destroy(r->rng2);
	free(r->rng0);
	free(r->con1);
	free(r->rng2);
	pci_host_destroy(&r->host, &vm->pio, &vm->mmio);
	pci_testdev_destroy(r->td);
	free(r->td);
	fz_vm_destroy(vm);
	free(r);
	return 0;
}
