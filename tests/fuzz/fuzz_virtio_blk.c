/* Fuzz target: a malicious driver sends virtio-blk requests (headers, segments, status bytes, discard ranges) over a memfd image. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "devices/virtio_blk.h"
#include "fuzz_common.h"

#define IMG_SIZE (64u * 1024u) /* 128 sectors: requests past the end are easy to make */

/* The fixture: guest RAM (zeroed per run) and a memfd image (emptied per run). */
static uint8_t *ram;
static int img_fd = -1;
static char img_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(FZ_RAM_SIZE);
	img_fd = memfd_create("fuzz-blk", MFD_CLOEXEC);
	if (!ram || img_fd < 0)
		return -1;
	snprintf(img_path, sizeof(img_path), "/proc/self/fd/%d", img_fd);
	return 0;
}

static void step(void *opaque, uint8_t arg)
{
	virtio_blk_complete(opaque);
}

/* Input: see fuzz_ops.h (device targets). Device byte: bit0 read-only image,
 * bit1 io_uring engine (sync otherwise), bits 2-4: queues - 1. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct fz_vm vm;
	if (fz_vm_init(&vm, ram, FZ_RAM_SIZE))
		abort();
	if (ftruncate(img_fd, 0) || ftruncate(img_fd, IMG_SIZE))
		abort();
	struct virtio_pci_config cfg = { .mode = (enum irq_mode)(fz_u8(&in) % 4), .vectors = -1 };
	uint8_t setup = fz_u8(&in);
	uint64_t drop = fz_u64(&in);
	uint8_t dev = fz_u8(&in);
	struct blk_open_cfg oc = {
		.path = img_path, .ro = dev & 1, .depth = 256,
		.engine = dev & 2 ? BLK_ENGINE_AUTO : BLK_ENGINE_SYNC,
	};
	uint16_t nq = (uint16_t)(1u + (dev >> 2) % VIRTIO_BLK_MAX_QUEUES);
	struct blk_backend *be;
	struct error err;
	if (blk_backend_open(&be, &oc, &err)) {
		fprintf(stderr, "fuzz_virtio_blk: %s\n", err.msg);
		abort();
	}
	struct virtio_blk *b = calloc(1, sizeof(*b));
	if (!b || virtio_blk_init(b, 0, nq, be, &cfg, &vm.gm, -1, &vm.routes, NULL, &vm.mmio,
				  fz_window(), &err))
		abort();
	struct fz_drv d = { .step = step, .opaque = b };
	if (fz_drv_attach(&d, &vm, &b->pci))
		abort();
	fz_drv_main(&d, &in, setup, drop, NULL, 0);
	virtio_blk_destroy(b);
	free(b);
	fz_vm_destroy(&vm);
	return 0;
}
