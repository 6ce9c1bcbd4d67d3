/* VFIO passthrough device: a host PCI function as one PCI function of the guest (config view, BARs, interrupts). */
#ifndef MSIVM_VFIO_VFIO_DEV_H
#define MSIVM_VFIO_VFIO_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "bus/bus.h"
#include "core/evloop.h"
#include "irq/gsi_routes.h"
#include "pci/intx.h"
#include "pci/irq_mode.h"
#include "pci/msi.h"
#include "pci/msix.h"
#include "pci/pci_func.h"
#include "util/error.h"
#include "util/log.h"

/* VFIO's PCI region and interrupt indexes (linux/vfio.h), without the kernel header. */
#define VFIO_DEV_ROM_REGION    6
#define VFIO_DEV_CONFIG_REGION 7
#define VFIO_DEV_IRQ_INTX 0
#define VFIO_DEV_IRQ_MSI  1
#define VFIO_DEV_IRQ_MSIX 2
#define VFIO_DEV_NIRQ     3
#define VFIO_DEV_MAX_AREAS 4      /* mmappable areas per BAR */

/* VFIO_DEVICE_SET_IRQS actions used. */
enum vfio_irq_action { VFIO_ACT_TRIGGER, VFIO_ACT_UNMASK };

/*
 * Everything msivm asks of the kernel for one device, as a table so that tests drive the
 * config, BAR and interrupt paths with a fake device. ctx is the ops' own. Each returns 0 or
 * -errno unless said otherwise.
 */
struct vfio_dev_ops {
	/* Reads / writes len bytes of region `region` (BAR 0-5, config 7) at off (pread/pwrite on
	 * the device fd); a short transfer is -EIO. */
	int (*read)(void *ctx, unsigned region, uint64_t off, void *buf, uint32_t len);
	int (*write)(void *ctx, unsigned region, uint64_t off, const void *buf, uint32_t len);
	/* VFIO_DEVICE_SET_IRQS for interrupt `index`: `count` eventfds from vector 0 (count 0:
	 * that index disabled, DATA_NONE | ACTION_TRIGGER). */
	int (*set_irqs)(void *ctx, unsigned index, enum vfio_irq_action act, uint32_t count,
			const int *fds);
	/* VFIO_DEVICE_RESET (-ENOTTY when the device offers none). */
	int (*reset)(void *ctx);
	/* Maps `size` bytes of region `region` at off into msivm (MAP_SHARED); NULL on failure. */
	void *(*map)(void *ctx, unsigned region, uint64_t off, uint64_t size);
	void (*unmap)(void *ctx, void *host, uint64_t size);
	/* KVM memory slot `slot`: guest [gpa, gpa+size) onto host (size 0: the slot removed). */
	int (*set_slot)(void *ctx, uint32_t slot, uint64_t gpa, uint64_t size, void *host);
};

/* A region as VFIO describes it (VFIO_DEVICE_GET_REGION_INFO). */
struct vfio_region_desc {
	uint64_t size;            /* 0: absent */
	bool mmap;                /* VFIO_REGION_INFO_FLAG_MMAP */
	unsigned nsparse;         /* sparse-mmap capability areas; 0 with mmap: the whole region */
	struct { uint64_t off, size; } sparse[VFIO_DEV_MAX_AREAS];
};

/* What the kernel said about the device, for vfio_dev_init. */
struct vfio_dev_desc {
	struct vfio_region_desc bars[PCI_NUM_BARS];
	uint32_t irq_count[VFIO_DEV_NIRQ];  /* VFIO_DEVICE_GET_IRQ_INFO counts */
	bool can_reset;                     /* VFIO_DEVICE_FLAGS_RESET */
	uint64_t rom_size;                  /* the ROM region's size (0: the device has none) */
};

/* One BAR of the device: its trapped accesses and the parts the guest reaches directly. */
struct vfio_bar {
	struct vfio_dev *dev;
	unsigned idx;
	uint64_t size;
	unsigned nareas;
	struct vfio_area {
		uint64_t off, size;   /* inside the BAR, page-aligned */
		void *host;           /* msivm's mapping of the device memory */
		uint32_t slot;        /* KVM memory slot while mapped */
		bool in_kvm;
	} areas[VFIO_DEV_MAX_AREAS + 2];
	char name[40];
};

/* relay=on (a lab/diagnostic mode, as QEMU's x-no-kvm-msix=on): VFIO signals an eventfd of
 * msivm's own per MSI-X vector; the I/O thread reads it and delivers the vector through
 * pci/msix.c (counted there as relayed, or pended while masked). */
struct vfio_relay {
	bool on;
	struct evloop *loop;                /* NULL: nobody watches (tests call vfio_relay_run) */
	uint16_t n;
	struct vfio_relay_vec {
		struct vfio_dev *dev;
		uint16_t vec;
		int fd;
		bool watched;
		struct evloop_handler h;
	} vecs[MSIX_MAX_VECTORS];
};

/* The device's own capability list, as found (vfio_cfg.c). */
#define VFIO_MAX_CAPS 48            /* a longer list loops */
struct vfio_cap {
	uint8_t id, off;
	uint16_t len;                   /* to its size, never past the next capability */
};
struct vfio_cap_map {
	unsigned n;
	struct vfio_cap caps[VFIO_MAX_CAPS];
};

/* The interrupt kind VFIO currently has enabled. */
enum vfio_irq_kind { VFIO_IRQ_NONE, VFIO_IRQ_INTX, VFIO_IRQ_MSI, VFIO_IRQ_MSIX };

struct vfio_dev_stats {
	uint64_t bar_reads, bar_writes;     /* trapped BAR accesses (each one a VM exit) */
	uint64_t msix_accesses;             /* ... of which the MSI-X table or PBA */
	uint64_t cmd_writes;                /* command register writes forwarded */
	uint64_t irq_switches;              /* VFIO_DEVICE_SET_IRQS calls */
	uint64_t device_errors;             /* failed device accesses or ioctls */
	uint64_t slots_set, slots_removed;  /* KVM slots for BAR areas */
	uint64_t refused;                   /* guest values refused (logged) */
	uint64_t cfg_reads, cfg_writes;     /* config accesses passed through to the device */
};

struct vfio_dev {
	char name[32];
	const struct vfio_dev_ops *ops;
	void *ctx;
	uint32_t slot_base;                 /* KVM slots slot_base.. for the BAR areas */
	enum irq_mode mode;                 /* irq=: the most the guest is offered */
	struct pci_func func;
	struct vfio_bar bars[PCI_NUM_BARS];
	struct msix msix;
	struct msi msi;
	bool has_msix, has_msi, has_intx, func_ready;
	bool dev_has_msix;                  /* the device's own MSI-X (offered or not) */
	struct msix_layout dev_msix;        /* ... where its table and PBA are: never forwarded */
	uint16_t dev_msix_nvec;             /* ... its table size */
	struct pci_intx intx;
	struct vfio_cap_map caps;           /* the device's capabilities */
	bool cfg_owned[PCI_CFG_SIZE];       /* config bytes of msivm's own capabilities */
	unsigned cfg_passthrough_bytes;     /* config bytes that are the device's own */
	enum vfio_irq_kind active;
	uint32_t msi_count;                 /* MSI messages VFIO has while active is MSI */
	bool broken;                        /* the device stopped answering: reads all-ones */
	struct vfio_relay relay;
	uint8_t *rom;                       /* rom=on: the device's expansion ROM, read at setup */
	uint32_t rom_len;                   /* ... its bytes (the BAR may be larger: reads 0 past) */
	struct vfio_dev_stats stats;
	struct ratelimit rl;
};

/* Builds the guest's view of the device: reads its config space through ops (ids, class,
 * BAR kinds, MSI-X and MSI capabilities), declares its memory BARs (sizes from desc) with
 * MSI-X table and PBA trapped and every other page of an mmappable area mapped for KVM slots
 * from slot_base, and the capabilities `mode` allows (MSI-X, MSI; the rest of the device's
 * list hidden). Resets the device when it can. Returns 0 or -errno with a message. */
int vfio_dev_init(struct vfio_dev *d, const char *name, const struct vfio_dev_ops *ops,
		  void *ctx, const struct vfio_dev_desc *desc, enum irq_mode mode,
		  struct gsi_routes *routes, struct bus *mmio, struct pci_window window,
		  uint32_t slot_base, struct error *err);

/* Once the function has a slot: INTx on `gsi` as a resampling irqfd (vm_fd < 0: tests),
 * handed to VFIO as the trigger and unmask eventfds, so level interrupts never pass through
 * msivm. Returns 0 or -errno. */
int vfio_dev_attach_intx(struct vfio_dev *d, int vm_fd, uint32_t gsi);

/* Leaves the device quiet: interrupts off in VFIO, bus master and decode off, reset, KVM
 * slots removed, mappings released. Safe on a partial init and twice. */
void vfio_dev_destroy(struct vfio_dev *d);

/* vfio_cfg.c: the device's capability list from its config space `cfg` into m: each
 * capability's ID, offset and length (its own size, cut at the next capability). A list that
 * loops, points into the header or runs past the space ends there. */
void vfio_cfg_scan(const uint8_t *cfg, struct vfio_cap_map *m);

/* vfio_cfg.c: the first capability `id` of m, or NULL. */
const struct vfio_cap *vfio_cfg_find(const struct vfio_cap_map *m, uint8_t id);

/* vfio_cfg.c: before msivm adds its own capability of `len` bytes standing for dev_cap (may be
 * NULL): puts it at the device's own offset (as QEMU does, so the device's other registers keep
 * their places) unless that runs past the space or over a capability msivm already placed; then
 * pci_func appends it where it would anyway. */
void vfio_cfg_place(struct vfio_dev *d, const struct vfio_cap *dev_cap, unsigned len);

/* vfio_cfg.c: config bytes [off, off+len) are msivm's (a capability it added; off < 0: none). */
void vfio_cfg_own(struct vfio_dev *d, int off, unsigned len);

/* vfio_cfg.c: after msivm's capabilities are in: the device's vendor-specific capabilities are
 * linked into the guest's list (ID and link msivm's, body the device's), every byte from 0x40
 * that is neither msivm's nor inside another of the device's capabilities (hidden: they read 0)
 * is passed through to the device, as vfio-pci and QEMU do (devices keep registers in those
 * gaps). Returns 0 or -ENOSPC. */
int vfio_cfg_passthrough_setup(struct vfio_dev *d, const struct vfio_cap_map *m);

/* vfio_cfg.c: the function's config_passthrough hook: a guest read or write of the device's own
 * config bytes done on the device (a failure logged and counted; a broken device reads
 * all-ones, takes no writes). */
int vfio_cfg_passthrough(void *opaque, bool write, uint32_t off, uint32_t len, uint8_t *buf);

/* vfio_irq.c: brings VFIO's enabled interrupt kind in line with the guest's view (MSI-X
 * enabled > MSI enabled > INTx). Function lock held. */
void vfio_irq_sync(struct vfio_dev *d);

/* vfio_irq.c: turns every interrupt kind off in VFIO. */
void vfio_irq_off(struct vfio_dev *d);

/* vfio_relay.c: relay=on, after vfio_dev_init and before the guest runs: one eventfd of
 * msivm's per offered MSI-X vector, watched by `loop` (the I/O thread's; NULL in tests), is
 * what VFIO gets as the vector's trigger in place of the vector's irqfd eventfd. Refuses a
 * device offered no MSI-X. Returns 0 or -errno with a message. */
int vfio_relay_start(struct vfio_dev *d, struct evloop *loop, struct error *err);

/* vfio_relay.c: one relayed signal of vector `vec` (what the loop's callback does when the
 * vector's relay eventfd is readable): the count read, the vector signalled once through
 * pci/msix.c. Returns the path taken, or -1 when the eventfd held nothing. */
int vfio_relay_run(struct vfio_dev *d, uint16_t vec);

/* vfio_relay.c: the relay eventfds unwatched and closed (VFIO must hold them no more).
 * Safe when the relay never started, and twice. */
void vfio_relay_stop(struct vfio_dev *d);

/* vfio_rom.c: rom=on, after vfio_dev_init and before the guest runs: the device's expansion
 * ROM (VFIO's ROM region of `rom_size` bytes) read once through ops->read and offered as the
 * function's ROM BAR (pci_func_add_rom, a power of two >= the ROM; the guest reads 0 past the
 * content, as QEMU's vfio-pci). rom_size 0 (the device has none): one log line, 0x30 keeps
 * reading 0, returns 0. A ROM over PCI_ROM_MAX_SIZE or one that cannot be read is refused:
 * returns -errno with a message. */
int vfio_rom_setup(struct vfio_dev *d, uint64_t rom_size, struct error *err);

/* vfio_rom.c: frees the ROM's copy (after the function is gone). Safe twice. */
void vfio_rom_release(struct vfio_dev *d);

/* vfio_bar.c: the BAR areas msivm maps (mmappable minus the MSI-X table and PBA pages),
 * mapped through ops->map. Returns 0 or -errno with a message. */
int vfio_bar_setup(struct vfio_dev *d, const struct vfio_dev_desc *desc, struct error *err);

/* vfio_bar.c: the function's bar_moved hook: KVM slots follow the BAR (lock held). */
void vfio_bar_moved(void *opaque, unsigned idx, bool mapped, uint64_t addr);

/* vfio_bar.c: removes the KVM slots and releases the mappings. */
void vfio_bar_release(struct vfio_dev *d);

/* vfio_bar.c: trapped BAR accesses: MSI-X table/PBA to msix, the rest to the device. */
extern const struct bus_ops vfio_bar_ops;

/* vfio_error.c: records a failed device access or ioctl: a rate-limited line; after it the
 * device is marked broken (reads all-ones, writes dropped) when `fatal`. */
void vfio_dev_error(struct vfio_dev *d, bool fatal, const char *what, int err);

#endif
