/* Fuzz target: the virtio-pci transport (common config, ISR, device config, notify, MSI-X table/PBA) as a sequence of BAR accesses. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "devices/virtio_console.h"
#include "devices/virtio_rng.h"
#include "fuzz_common.h"

#include <fcntl.h>

static uint8_t *ram;    /* the fixture: guest RAM, zeroed per run */
static int devnull = -1; /* the console's output */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(FZ_RAM_SIZE);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return ram && devnull >= 0 ? 0 : -1;
}

/* Mostly (offset, len, value, read/write) on BAR0 and the MSI-X BAR; ring
 * and descriptor writes only so that queue enables and kicks find something. */
static const uint8_t transport_ops[] = {
	FZ_OP_WRITE, FZ_OP_WRITE, FZ_OP_WRITE, FZ_OP_READ, FZ_OP_READ, FZ_OP_MSIX,
	FZ_OP_KICK, FZ_OP_STEP, FZ_OP_CFG, FZ_OP_DESC, FZ_OP_AVAIL, FZ_OP_BRINGUP,
};

/* Input: see fuzz_ops.h (device targets). The device byte picks virtio-rng
 * (even: no device config) or virtio-console (odd: 8 bytes of device config,
 * two queues); MSI-X vectors = device byte / 2 % 66 - 1 (-1: from the mode). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct fz_vm vm;
	if (fz_vm_init(&vm, ram, FZ_RAM_SIZE))
		abort();
	struct virtio_pci_config cfg = { .mode = (enum irq_mode)(fz_u8(&in) % 4) };
	uint8_t setup = fz_u8(&in);
	uint64_t drop = fz_u64(&in);
	uint8_t dev = fz_u8(&in);
	cfg.vectors = (int)((dev >> 1) % 66u) - 1;
	struct virtio_rng *r = NULL;
	struct virtio_console *c = NULL;
	struct virtio_pci *t;
	struct error err;
	if (dev & 1) {
		struct virtio_console_io io = { .out_fd = devnull, .in_fd = -1 };
		c = calloc(1, sizeof(*c));
		if (!c || virtio_console_init(c, 0, &io, &cfg, &vm.gm, -1, &vm.routes, NULL, &vm.mmio,
					      fz_window(), &err))
			abort();
		t = &c->pci;
	} else {
		r = calloc(1, sizeof(*r));
		if (!r || virtio_rng_init(r, 0, VIRTIO_RNG_GETRANDOM, &cfg, &vm.gm, -1,
					  &vm.routes, NULL, &vm.mmio,
					  fz_window(), &err))
			abort();
		t = &r->pci;
	}
	struct fz_drv d = { 0 };
	if (fz_drv_attach(&d, &vm, t))
		abort();
	fz_drv_main(&d, &in, setup, drop, transport_ops, sizeof(transport_ops));
	if (c)
		virtio_console_destroy(c);
	else
		virtio_rng_destroy(r);
	free(c);
	free(r);
	fz_vm_destroy(&vm);
	return 0;
}
