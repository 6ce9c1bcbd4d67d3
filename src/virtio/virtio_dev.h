/* Virtio device interface: what a device (rng, blk, net) gives the transport and may call back. */
#ifndef MSIVM_VIRTIO_VIRTIO_DEV_H
#define MSIVM_VIRTIO_VIRTIO_DEV_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"

#define VIRTIO_F_INDIRECT_DESC 28
#define VIRTIO_F_EVENT_IDX     29
#define VIRTIO_F_VERSION_1     32

struct virtio_pci;

/* A device's hooks. The transport calls every hook with its lock held, so
 * hooks never race with each other or with a reset; a missing hook is a no-op. */
struct virtio_dev_ops {
	/* Device config space reads/writes; the transport has checked that
	 * [offset, offset+len) lies inside `config_size`. */
	void (*config_read)(void *opaque, uint32_t offset, void *data, uint32_t len);
	void (*config_write)(void *opaque, uint32_t offset, const void *data, uint32_t len);
	/* The guest kicked queue `q` (I/O thread). Process with
	 * virtio_pci_queue() and finish with virtio_pci_queue_done(). */
	void (*queue_notify)(void *opaque, uint16_t q);
	/* The driver set DRIVER_OK (the queues it enabled are live): before the transport passes
	 * on buffers made available earlier (queue_notify per live queue). */
	void (*driver_ok)(void *opaque);
	/* The driver reset the device: forget in-flight state. */
	void (*reset)(void *opaque);
	/* Snapshot (I/O thread, vCPUs stopped): finish every request the backend has in flight;
	 * their completions are pushed and signalled as usual. NULL: nothing is ever in flight. */
	void (*quiesce)(void *opaque);
	/* Snapshot: the device's own state beyond the transport's, as a JSON object, or NULL with
	 * a message in *err when the device cannot be saved (the snapshot is refused). NULL hook:
	 * nothing of its own to save. */
	json_t *(*save)(void *opaque, struct error *err);
	/* Restore, in a new process before the guest runs, after the queues are set up and before
	 * the driver's DRIVER_OK is replayed: puts back what save wrote. Returns 0 or -EINVAL with
	 * a message. NULL hook: the saved object is ignored. */
	int (*load)(void *opaque, const json_t *state, struct error *err);
};

struct virtio_dev_info {
	const char *name;         /* "rng0": log lines and stats */
	uint16_t device_id;       /* virtio device type (4 = rng); PCI id is 0x1040 + type */
	uint16_t nqueues;
	uint16_t queue_max;       /* largest queue size offered (power of two) */
	uint32_t config_size;     /* device config bytes (0: none) */
	uint32_t pci_class;       /* class code, e.g. 0x00ff00 */
	uint64_t features;        /* device-specific feature bits offered */
};

#endif
