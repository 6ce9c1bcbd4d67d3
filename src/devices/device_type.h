/* Device types: one ops entry per kind of virtio device (its options, build, tear down, count, host events), in one table. */
#ifndef MSIVM_DEVICES_DEVICE_TYPE_H
#define MSIVM_DEVICES_DEVICE_TYPE_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "bus/bus.h"
#include "devices/device_opts.h"
#include "devices/rate_limiter.h"
#include "devices/virtio_blk.h"
#include "devices/virtio_console.h"
#include "devices/virtio_net.h"
#include "devices/virtio_rng.h"
#include "devices/virtio_vsock.h"
#include "irq/gsi_routes.h"
#include "pci/pci_func.h"
#include "util/error.h"
#include "virtio/virtio_pci.h"
#include "core/evloop.h"
#include "core/guest_mem.h"

/*
 * The device types, in the order their devices take PCI slots: X(enum value, entry, option).
 * The option is `msivm run --OPTION` and the config file's key. Adding a device type is its
 * files (the device, and an entry `const struct device_type NAME`) plus one line here.
 */
#define DEVICE_TYPES(X)                                   \
	X(VM_DEV_RNG, rng_device_type, "rng")             \
	X(VM_DEV_BLK, blk_device_type, "disk")            \
	X(VM_DEV_CONSOLE, console_device_type, "console") \
	X(VM_DEV_NET, net_device_type, "net")            \
	X(VM_DEV_VSOCK, vsock_device_type, "vsock")       \
	X(VM_DEV_VFIO, vfio_device_type, "device")

#define DEVICE_TYPE_ENUM(e, entry, option) e,
enum vm_device_type { DEVICE_TYPES(DEVICE_TYPE_ENUM) VM_DEV_NTYPES };
#undef DEVICE_TYPE_ENUM

/* One --rng/--disk/--console/--net option as parsed; only the part of its type is used. */
struct vm_device_spec {
	enum vm_device_type type;
	struct virtio_pci_config irq;
	struct virtio_blk_opts blk;   /* VM_DEV_BLK: image path, ro, queues, engine */
	struct virtio_net_opts net;   /* VM_DEV_NET: backend, MAC, queue pairs, MTU */
	struct virtio_console_opts console; /* VM_DEV_CONSOLE: output and input files */
	struct virtio_vsock_opts vsock; /* VM_DEV_VSOCK: guest CID, host unix socket */
	uint32_t rng_latency_us;      /* VM_DEV_RNG: latency mode period, 0: entropy */
	enum virtio_rng_source rng_source; /* VM_DEV_RNG: source= (0: the DRBG) */
	struct rate_limit_opts limit; /* VM_DEV_RNG, _BLK, _NET: bps=, ops= (0: none) */
	struct rate_limit_opts rx_limit; /* VM_DEV_NET: rx-bps=, rx-ops=: received frames */
	bool rx_limit_own;            /* rx_limit given: else what the NIC receives has `limit` too */
	struct vfio_opts {            /* VM_DEV_VFIO: the host device passed through */
		char path[256];       /* path=/sys/bus/pci/devices/DDDD:BB:DD.F */
		char id[32];          /* id=: its name in logs and --stats ("" : vfioN) */
		bool relay;           /* relay=on: msivm's I/O thread relays each MSI-X interrupt
				       * (a lab/diagnostic mode, as QEMU's x-no-kvm-msix=on) */
		bool rom;             /* rom=on: the device's expansion ROM offered at 0x30 */
	} vfio;
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
	/* ---- its options (--OPTION key=value,... and the config file's objects) ---- */
	const char *usage;            /* its lines of --help, after "  --OPTION OPTS " */
	const struct device_key *keys; /* its own keys, up to one with a NULL name */
	bool rate_limit;              /* takes bps= and ops= */
	/* Sets its defaults in spec (type and transport defaults are set). NULL: none. */
	void (*spec_init)(struct vm_device_spec *spec);
	/* Reads key k's value (NULL: the key alone) into o->spec. Returns 0, or -EINVAL with a
	 * message and o->msg saying how to word it. NULL: the type has no keys of its own. */
	int (*spec_set)(struct device_opts *o, const struct device_key *k, const char *val,
			struct error *err);
	/* Checks what needs several keys once all are read. Returns 0 or -errno as spec_set.
	 * NULL: nothing to check. */
	int (*spec_check)(struct device_opts *o, struct error *err);
	/* Completes spec for a VM of `ncpus` vCPUs (defaults that depend on it). NULL: none. */
	void (*spec_finish)(struct vm_device_spec *spec, uint32_t ncpus);
	/* Adds its own keys' values to obj, for --print-config (in keys order, each key that
	 * applies, a default as null). Returns NULL, or the key whose value JSON refused. */
	const char *(*spec_print)(const struct vm_device_spec *spec, json_t *obj);
	/* ---- the device ---- */
	/* Builds device `index` (counted within its type) from spec, with its backend and rate
	 * limit. Returns it, with *pci its virtio transport (NULL for a device that is not virtio:
	 * pci_func and attach_intx then say the rest), or NULL with a message in *err and nothing
	 * left open. */
	void *(*create)(const struct device_env *env, const struct vm_device_spec *spec,
			unsigned index, struct virtio_pci **pci, struct error *err);
	/* Releases a device create returned (backend, files, the memory itself). */
	void (*destroy)(void *dev);
	/* A device without a virtio transport (VFIO): its PCI function, and its INTx wired to
	 * `gsi` once it has a slot (returns 0 or -errno). NULL for virtio types. */
	struct pci_func *(*pci_func)(void *dev);
	int (*attach_intx)(void *dev, uint32_t gsi);
	/* Its --stats line(s): counters beyond the transport's interrupt table. */
	void (*print_stats)(const void *dev, FILE *out);
	/* Adds its counters to its --stats-json object (type, transport and kicks are there). */
	void (*stats_json)(const void *dev, json_t *obj);
	/* Re-reads what DEVICE_EV_* `ev` says changed on the host: 1 when the device changed,
	 * 0 when not, -1 when the event is not its kind. NULL: no host events. */
	int (*host_event)(void *dev, unsigned ev);
	/* Opens `path` in place of the device's host file (a disk's image: Firecracker's PATCH
	 * /drives), with spec's other options, and tells the guest. The caller parked the vCPUs and
	 * the I/O thread. Returns 0 or -errno with a message (the old file is then kept). NULL: the
	 * type has no such file. */
	int (*replace)(void *dev, const struct vm_device_spec *spec, const char *path,
		       struct error *err);
	/* Applies spec's rate limits (limit, and rx_limit on a NIC) to the running device, taking
	 * its own lock (Firecracker's PATCH of a rate limiter). Returns 0 or -errno with a
	 * message. NULL: its limits cannot change while it runs. */
	int (*update_limit)(void *dev, const struct vm_device_spec *spec, struct error *err);
};

/* A device of a VM: its type, the device, its PCI function and, for virtio, its transport. */
struct vm_device {
	const struct device_type *type;
	void *dev;
	struct virtio_pci *pci;       /* NULL: not a virtio device (VFIO) */
	struct pci_func *func;
};

/* The entry of `t` (every enum vm_device_type has one), or NULL if t is out of range. */
const struct device_type *device_type_get(enum vm_device_type t);

/* The option of type t ("disk" for VM_DEV_BLK), or NULL if t is out of range. */
const char *device_type_option(enum vm_device_type t);

/* The types' entries, each in its own file. */
#define DEVICE_TYPE_EXTERN(e, entry, option) extern const struct device_type entry;
DEVICE_TYPES(DEVICE_TYPE_EXTERN)
#undef DEVICE_TYPE_EXTERN

#endif
