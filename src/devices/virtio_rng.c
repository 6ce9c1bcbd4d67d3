/* virtio-rng: queue kick -> chains of writable buffers -> getrandom -> used ring -> interrupt. */
#include "devices/virtio_rng.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "util/log.h"

/* Fills `len` bytes; returns how many were filled (short only on failure). */
static uint32_t fill_random(uint8_t *p, uint32_t len)
{
	uint32_t done = 0;
	while (done < len) {
		ssize_t n = getrandom(p + done, len - done, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_warn("virtio-rng: getrandom: %s", strerror(errno));
			break;
		}
		done += (uint32_t)n;
	}
	return done;
}

static void rng_notify(void *opaque, uint16_t qi)
{
	struct virtio_rng *r = opaque;
	struct virtq *q = virtio_pci_queue(&r->pci, qi);
	if (!q)
		return;
	while (virtq_pop(q, &r->chain) == 1) {
		uint32_t written = 0;
		for (uint32_t i = r->chain.n_out; i < r->chain.n_out + r->chain.n_in; i++) {
			uint32_t n = fill_random(r->chain.buf[i].host, r->chain.buf[i].len);
			written += n;
			if (n < r->chain.buf[i].len)
				break;
		}
		virtq_push(q, r->chain.head, written);
		r->bytes += written;
		r->requests++;
	}
	virtio_pci_queue_done(&r->pci, qi);
}

static const struct virtio_dev_ops rng_ops = {
	.queue_notify = rng_notify,
};

int virtio_rng_init(struct virtio_rng *r, unsigned index, const struct virtio_pci_config *cfg,
		    const struct guest_mem *mem, int vm_fd, struct gsi_routes *routes,
		    struct evloop *loop, struct bus *mmio, struct pci_window window,
		    struct error *err)
{
	snprintf(r->name, sizeof(r->name), "rng%u", index);
	r->bytes = r->requests = 0;
	struct virtio_dev_info info = {
		.name = r->name, .device_id = VIRTIO_ID_RNG, .nqueues = 1, .queue_max = 256,
		.config_size = 0, .pci_class = 0x00ff00, .features = 0,
	};
	return virtio_pci_init(&r->pci, &info, &rng_ops, r, cfg, mem, vm_fd, routes, loop, mmio,
			       window, err);
}

void virtio_rng_destroy(struct virtio_rng *r) { virtio_pci_destroy(&r->pci); }
