/* Fuzz target: a malicious driver drives virtio-rng (buffers filled from getrandom) through BAR0, rings and MSI-X/MSI/INTx. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "devices/virtio_rng.h"
#include "fuzz_common.h"

static uint8_t *ram; /* the fixture: guest RAM, zeroed per run */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(FZ_RAM_SIZE);
	return ram ? 0 : -1;
}

/* Input: see fuzz_ops.h (device targets); device byte bit 0: getrandom source (DRBG otherwise). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct fz_vm vm;
	if (fz_vm_init(&vm, ram, FZ_RAM_SIZE))
		abort();
	struct virtio_pci_config cfg = { .mode = (enum irq_mode)(fz_u8(&in) % 4), .vectors = -1 };
	uint8_t setup = fz_u8(&in);
	uint64_t drop = fz_u64(&in);
	enum virtio_rng_source src = fz_u8(&in) & 1 ? VIRTIO_RNG_GETRANDOM : VIRTIO_RNG_DRBG;
	struct virtio_rng *r = calloc(1, sizeof(*r));
	struct error err;
	if (!r || virtio_rng_init(r, 0, src, &cfg, &vm.gm, -1, &vm.routes, NULL, &vm.mmio, fz_window(),
				  &err))
		abort();
	struct fz_drv d = { 0 };
	if (fz_drv_attach(&d, &vm, &r->pci))
		abort();
	fz_drv_main(&d, &in, setup, drop, NULL, 0);
	virtio_rng_destroy(r);
	free(r);
	fz_vm_destroy(&vm);
	return 0;
}
