/* Device types: one ops entry per kind of virtio device (build, tear down, count, host events), in one table. */
#ifndef MSIVM_DEVICES_DEVICE_TYPE_H
#define MSIVM_DEVICES_DEVICE_TYPE_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "bus/bus.h"
#include "devices/rate_limiter.h"
#include "devices/virtio_blk.h"
#include "devices/virtio_console.h"
#include "devices/virtio_net.h"
#include "devices/virtio_rng.h"
#include "irq/gsi_routes.h"
#include "util/error.h"
#include "virtio/virtio_pci.h"
#include "core/evloop.h"
#include "core/guest_mem.h"

/* The kinds, in the order their devices take PCI slots. */
enum vm_device_type { VM_DEV_RNG, VM_DEV_BLK, VM_DEV_CONSOLE, VM_DEV_NET, VM_DEV_NTYPES };

/* One --rng/--disk/--console/--net option as parsed; only the part of its type is used. */
struct vm_device_spec {
	enum vm_device_type type;
	struct virtio_pci_config irq;
	struct virtio_blk_opts blk;   /* VM_DEV_BLK: image path, ro, queues, engine */
	struct virtio_net_opts net;   /* VM_DEV_NET: backend, MAC, queue pairs, MTU */
	struct virtio_console_opts console; /* VM_DEV_CONSOLE: output and input files */
	uint32_t rng_latency_us;      /* VM_DEV_RNG: latency mode period, 0: entropy */
	enum virtio_rng_source rng_source; /* VM_DEV_RNG: source= (0: the DRBG) */
	struct rate_limit_opts limit; /* VM_DEV_RNG, _BLK, _NET: bps=, ops= (0: none) */
};

/* What a device is built in: the VM's memory, KVM, routes, loop and MMIO bus. */
struct device_env {
	const struct guest_mem *mem;
	int vm_fd;
	struct gsi_routes *routes;
	struct evloop *loop;
	struct bus *mmio;
	struct pci_window window;
	const int64_t *tsc_offset;    /* guest TSC - host TSC (rng latency stamps) */
};

/* Host events a device may care about (the VM's signals and API requests). */
#define DEVICE_EV_WINCH 1u   /* SIGWINCH: the terminal behind a console changed size */
#define DEVICE_EV_DISKS 2u   /* SIGUSR2 or the API: disk images may have grown or shrunk */

struct device_type {
	const char *name;             /* "rng", "blk", ...: the stats JSON "type" */
	/* Builds device `index` (counted within its type) from spec, with its backend and rate
	 * limit. Returns it, with *pci its transport, or NULL with a message in *err and nothing
	 * left open. */
	void *(*create)(const struct device_env *env, const struct vm_device_spec *spec,
			unsigned index, struct virtio_pci **pci, struct error *err);
	/* Releases a device create returned (backend, files, the memory itself). */
	void (*destroy)(void *dev);
	/* Its --stats line(s): counters beyond the transport's interrupt table. */
	void (*print_stats)(const void *dev, FILE *out);
	/* Adds its counters to its --stats-json object (type, transport and kicks are there). */
	void (*stats_json)(const void *dev, json_t *obj);
	/* Re-reads what DEVICE_EV_* `ev` says changed on the host: 1 when the device changed,
	 * 0 when not, -1 when the event is not its kind. NULL: no host events. */
	int (*host_event)(void *dev, unsigned ev);
};

/* A device of a VM: its type, the device and its transport. */
struct vm_device {
	const struct device_type *type;
	void *dev;
	struct virtio_pci *pci;
};

/* The entry of `t` (every enum vm_device_type has one), or NULL if t is out of range. */
const struct device_type *device_type_get(enum vm_device_type t);

/* The types' entries, each in its own file. */
extern const struct device_type rng_device_type, blk_device_type, console_device_type,
	net_device_type;

#endif
