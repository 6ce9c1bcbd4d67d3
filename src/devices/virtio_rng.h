/* virtio-rng: one queue of device-writable buffers filled from the host's getrandom. */
#ifndef MSIVM_DEVICES_VIRTIO_RNG_H
#define MSIVM_DEVICES_VIRTIO_RNG_H

#include <stdint.h>

#include "virtio/virtio_pci.h"

#define VIRTIO_ID_RNG 4

struct virtio_rng {
	struct virtio_pci pci;
	char name[16];
	uint64_t bytes;             /* entropy handed to the guest */
	uint64_t requests;
	struct virtq_chain chain;   /* scratch for the chain being served */
};

/* Creates virtio-rng number `index` on the transport. Arguments as for
 * virtio_pci_init. Returns 0 or -errno with a message. */
int virtio_rng_init(struct virtio_rng *r, unsigned index, const struct virtio_pci_config *cfg,
		    const struct guest_mem *mem, int vm_fd, struct gsi_routes *routes,
		    struct evloop *loop, struct bus *mmio, struct pci_window window,
		    struct error *err);
void virtio_rng_destroy(struct virtio_rng *r);

#endif
