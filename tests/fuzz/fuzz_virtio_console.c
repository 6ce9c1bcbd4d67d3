/* Fuzz target: a malicious driver drives virtio-console transmitq (to /dev/null) and receiveq (from a pipe of fuzz bytes). */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "devices/virtio_console.h"
#include "fuzz_common.h"

static uint8_t *ram;     /* the fixture: guest RAM, zeroed per run */
static int devnull = -1; /* transmitq's output */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(FZ_RAM_SIZE);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	return ram && devnull >= 0 ? 0 : -1;
}

/* The event loop's input callback (there is no loop: the target runs it). */
static void step(void *opaque, uint8_t arg)
{
	struct virtio_console *c = opaque;
	c->in_handler.cb(c->in_handler.opaque, 1 /* EPOLLIN */);
}

/* Input: see fuzz_ops.h (device targets). Device byte: host input bytes
 * (0-255) taken from the input right after the header, written into the
 * input pipe, which is then closed (the device sees EOF after them). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	struct fz_vm vm;
	if (fz_vm_init(&vm, ram, FZ_RAM_SIZE))
		abort();
	struct virtio_pci_config cfg = { .mode = (enum irq_mode)(fz_u8(&in) % 4), .vectors = -1 };
	uint8_t setup = fz_u8(&in);
	uint64_t drop = fz_u64(&in);
	size_t nin = fz_u8(&in);
	if (nin > in.left)
		nin = in.left;
	int p[2];
	if (pipe2(p, O_CLOEXEC) || (nin && write(p[1], in.p, nin) != (ssize_t)nin))
		abort();
	close(p[1]);
	in.p += nin;
	in.left -= nin;
	struct virtio_console_io io = { .out_fd = devnull, .in_fd = p[0], .close_in = true };
	struct virtio_console *c = calloc(1, sizeof(*c));
	struct error err;
	if (!c || virtio_console_init(c, 0, &io, &cfg, &vm.gm, -1, &vm.routes, NULL, &vm.mmio,
				      fz_window(), &err))
		abort();
	struct fz_drv d = { .step = step, .opaque = c };
	if (fz_drv_attach(&d, &vm, &c->pci))
		abort();
	fz_drv_main(&d, &in, setup, drop, NULL, 0);
	virtio_console_destroy(c);
	free(c);
	fz_vm_destroy(&vm);
	return 0;
}
