/* vhost: a virtio-pci device's rings handed to a kernel vhost device (vhost-net, vhost-vsock) and taken back. */
#ifndef MSIVM_VIRTIO_VHOST_RINGS_H
#define MSIVM_VIRTIO_VHOST_RINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/evloop.h"
#include "core/guest_mem.h"
#include "util/error.h"

struct virtio_pci;

#define VHOST_RINGS_MAX 2

/* One ring the kernel runs: vhost's ring index is its place in vhost_rings.ring[]. */
struct vhost_ring {
	struct vhost_rings *owner;
	uint16_t qi;               /* the virtio queue index */
	int call_fd;               /* vhost signals here when the interrupt is not wired past msivm */
	struct evloop_handler handler;
	bool direct;               /* vhost signals the MSI-X vector's irqfd itself */
	bool started;
};

/*
 * Data path while running: the guest's notify write is an ioeventfd that vhost reads (msivm's
 * event loop no longer watches it); vhost moves the data and signals the queue's "call"
 * eventfd. That eventfd is the MSI-X vector's own irqfd eventfd when the driver gave the queue
 * a vector and delivery is by irqfd: the interrupt reaches the guest without msivm waking at
 * all. Otherwise (MSI, INTx, signal-msi, no MSI-X yet at DRIVER_OK) it is an eventfd of ours,
 * and the I/O thread raises the queue's interrupt through the transport, which keeps the ISR,
 * INTx and pending-bit rules. A malformed ring reported by vhost puts the device in NEEDS_RESET.
 */
struct vhost_rings {
	struct virtio_pci *pci;
	const char *name;          /* the device's name, for log lines */
	const char *what;          /* "vhost-net", "vhost-vsock" */
	int fd;                    /* the vhost device (the caller owns it) */
	struct evloop *loop;
	unsigned n;                /* rings in ring[] */
	struct vhost_ring ring[VHOST_RINGS_MAX];
	int err_fd;                /* vhost reports a malformed ring here */
	struct evloop_handler err_handler;
	bool ready;                /* vhost_rings_init ran: destroy has fds to close */
	bool running;              /* between start and stop */
};

/* Gives vhost (fd, already owned by this process) guest memory, takes the kicks of queues
 * qis[0..n) out of the event loop and watches our call and error eventfds in `loop` (NULL:
 * tests without a loop). 0 or -errno with a message; vhost_rings_destroy is safe after either. */
int vhost_rings_init(struct vhost_rings *h, struct virtio_pci *pci, const char *name,
		     const char *what, int fd, const uint16_t *qis, unsigned n,
		     const struct guest_mem *mem, struct evloop *loop, struct error *err);

/* DRIVER_OK (pci lock held): VHOST_SET_FEATURES(features), then every ring whose queue the
 * driver enabled gets its size, base, addresses, kick, call and error eventfds. Returns NULL,
 * or what vhost refused with *e its errno; `running` is set either way, so that
 * vhost_rings_stop undoes what started. The caller attaches its backend after. */
const char *vhost_rings_start(struct vhost_rings *h, uint64_t features, int *e);

/* Reset (pci lock held, the caller's backend already detached, so vhost's worker no longer
 * touches guest memory): every started ring is stopped (VHOST_GET_VRING_BASE). */
void vhost_rings_stop(struct vhost_rings *h);

/* Passes a kick of queue qi that arrived as an MMIO exit on to vhost; false if it could not. */
bool vhost_rings_kick(struct vhost_rings *h, uint16_t qi);

/* Stops (if running) and closes our eventfds; the caller closes fd. */
void vhost_rings_destroy(struct vhost_rings *h);

#endif
