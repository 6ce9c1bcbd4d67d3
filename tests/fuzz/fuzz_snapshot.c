/* Fuzz target: snapshot state files (header, checksum, JSON) and the loaders of a transport's and COM1's saved state, with a save -> load round trip. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fcntl.h>
#include <nettle/sha2.h>

#include "devices/uart8250.h"
#include "devices/virtio_console.h"
#include "devices/virtio_rng.h"
#include "fuzz_common.h"
#include "virtio/virtio_pci_state.h"
#include "vmm/vm_snapshot.h"

static uint8_t *ram;     /* the fixture: guest RAM, zeroed per transport */
static int devnull = -1; /* the console's output */
static int memfd = -1;   /* the state file under test */
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(FZ_RAM_SIZE);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	memfd = memfd_create("fuzz-state", MFD_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	return ram && devnull >= 0 && memfd >= 0 ? 0 : -1;
}

/* The state file `path` holds: `body` behind a header (valid, with its SHA-256, when `wrap`). */
static json_t *read_state(const uint8_t *body, size_t len, bool wrap)
{
	struct vm_snapshot_header h = { .format = VM_SNAPSHOT_FORMAT, .header_size = sizeof(h),
					.body_len = len };
	memcpy(h.magic, VM_SNAPSHOT_MAGIC, 8);
	if (wrap) {
		struct sha256_ctx c;
		sha256_init(&c);
		sha256_update(&c, len, body);
		sha256_digest(&c, SHA256_DIGEST_SIZE, h.sha256);
	}
	if (ftruncate(memfd, 0) ||
	    (wrap && pwrite(memfd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) ||
	    pwrite(memfd, body, len, wrap ? sizeof(h) : 0) != (ssize_t)len)
		abort();
	struct error err;
	return vm_snapshot_read(path, &err);
}

/* A fresh transport: virtio-rng (kind 0) or virtio-console (1) in `mode`, on a fresh VM. */
struct dev {
	struct fz_vm vm;
	struct virtio_rng *r;
	struct virtio_console *c;
	struct virtio_pci *t;
};

static void dev_new(struct dev *d, unsigned kind, enum irq_mode mode)
{
	struct virtio_pci_config cfg = { .mode = mode, .vectors = -1 };
	struct error err;
	memset(d, 0, sizeof(*d));
	if (fz_vm_init(&d->vm, ram, FZ_RAM_SIZE))
		abort();
	if (kind) {
		struct virtio_console_io io = { .out_fd = devnull, .in_fd = -1 };
		if (!(d->c = calloc(1, sizeof(*d->c))) ||
		    virtio_console_init(d->c, 0, &io, &cfg, &d->vm.gm, -1, &d->vm.routes, NULL,
					&d->vm.mmio, fz_window(), &err))
			abort();
		d->t = &d->c->pci;
	} else {
		if (!(d->r = calloc(1, sizeof(*d->r))) ||
		    virtio_rng_init(d->r, 0, VIRTIO_RNG_GETRANDOM, &cfg, &d->vm.gm, -1, &d->vm.routes,
				    NULL, &d->vm.mmio, fz_window(), &err))
			abort();
		d->t = &d->r->pci;
	}
	if (virtio_pci_attach_intx(d->t, 17))
		abort();
}

static void dev_free(struct dev *d)
{
	if (d->c)
		virtio_console_destroy(d->c);
	if (d->r)
		virtio_rng_destroy(d->r);
	free(d->c);
	free(d->r);
	fz_vm_destroy(&d->vm);
}

/* What a restore must give back exactly. */
static void same(const struct virtio_pci *a, const struct virtio_pci *b)
{
	FZ_CHECK(a->status == b->status && a->negotiated == b->negotiated &&
		 a->config_generation == b->config_generation);
	for (uint16_t q = 0; q < a->info.nqueues; q++) {
		const struct vpci_queue *x = &a->queues[q], *y = &b->queues[q];
		FZ_CHECK(x->enabled == y->enabled && x->size == y->size);
		FZ_CHECK(!x->enabled || (x->vq.last_avail == y->vq.last_avail &&
					 x->vq.used_idx == y->vq.used_idx));
	}
}

/* Loads `st` into a fresh transport; if that is accepted, what the transport saves must load
 * into another fresh one and give the same registers and indices. */
static void load_transport(const json_t *st, unsigned kind, enum irq_mode mode)
{
	struct dev a, b;
	struct error err;
	dev_new(&a, kind, mode);
	if (virtio_pci_state_load(a.t, st, &err) == 0) {
		json_t *again = virtio_pci_state_save(a.t, &err);
		FZ_CHECK(again != NULL);
		dev_free(&a); /* the RAM is the fixture's: b starts from zeroes as a did */
		dev_new(&a, kind, mode);
		dev_new(&b, kind, mode);
		FZ_CHECK(virtio_pci_state_load(a.t, st, &err) == 0);
		FZ_CHECK(virtio_pci_state_load(b.t, again, &err) == 0);
		same(a.t, b.t);
		json_decref(again);
		dev_free(&b);
	}
	dev_free(&a);
}

static void no_irq(void *opaque, uint32_t line, int level)
{
	(void)opaque;
	(void)line;
	(void)level;
}

/* Input: byte 0 picks the device (bit 0: rng or console) and the interrupt mode (bits 1-2),
 * the rest is the state file's body (a state's JSON, or one transport's object). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned kind = data[0] & 1;
	enum irq_mode mode = (enum irq_mode)((data[0] >> 1) % 4);
	json_t *raw = read_state(data + 1, size - 1, false); /* no header: always refused */
	FZ_CHECK(raw == NULL);
	json_t *root = read_state(data + 1, size - 1, true);
	if (!root)
		return 0;
	const json_t *devs = json_object_get(root, "devices");
	if (json_is_array(devs)) {
		for (size_t i = 0; i < json_array_size(devs) && i < 4; i++)
			load_transport(json_object_get(json_array_get(devs, i), "transport"), kind, mode);
	} else {
		load_transport(root, kind, mode);
	}
	struct uart8250 u;
	struct irq_line line = { no_irq, NULL, 4 };
	if (uart8250_init(&u, -1, line))
		abort();
	(void)uart8250_load(&u, json_object_get(root, "com1"));
	uart8250_destroy(&u);
	(void)vm_snapshot_config(root);
	json_decref(root);
	return 0;
}
