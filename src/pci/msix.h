/* MSI-X: capability, vector table and PBA; masked vectors keep a pending bit and are replayed on unmask. */
#ifndef MSIVM_PCI_MSIX_H
#define MSIVM_PCI_MSIX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus/bus.h"
#include "irq/irq_vec.h"
#include "pci/pci_func.h"
#include "util/log.h"

#define MSIX_MAX_VECTORS 64
#define MSIX_ENTRY_SIZE  16
#define MSIX_CAP_ID      0x11
#define MSIX_CAP_LEN     12
#define MSIX_CTRL_ENABLE 0x8000
#define MSIX_CTRL_FMASK  0x4000
#define MSIX_ENTRY_MASKED 0x1

/* How one signal reached (or did not reach) the guest. */
enum msix_path {
	MSIX_DELIVERED,    /* irqfd written: KVM injects without an exit */
	MSIX_PENDED,       /* vector or function masked: PBA bit set */
	MSIX_DROPPED,      /* MSI-X disabled or the entry's address is not an x86 MSI address */
};

struct msix_entry {
	uint32_t addr_lo, addr_hi, data, ctrl;
};

struct msix_vec_stats {
	uint64_t irqfd;     /* delivered at once */
	uint64_t pended;    /* signalled while masked */
	uint64_t replayed;  /* pending bit delivered on unmask */
	uint64_t dropped;
};

struct msix {
	pthread_mutex_t lock;
	struct pci_func *func;
	uint8_t cap;                 /* config offset of the capability */
	uint16_t nvec;
	bool enabled, fmask;
	struct msix_entry table[MSIX_MAX_VECTORS];
	uint64_t pba;                /* bit i: vector i pending (MSIX_MAX_VECTORS <= 64) */
	struct irq_vec vecs[MSIX_MAX_VECTORS];
	struct msix_vec_stats stats[MSIX_MAX_VECTORS];
	uint8_t table_bar, pba_bar;  /* BARs holding the table and the PBA */
	uint32_t table_offset;       /* the table's offset in its BAR */
	uint32_t pba_offset;         /* the PBA's offset in its BAR */
	bool commit_at_once;         /* another writer (a VFIO device) signals the eventfds:
				      * route changes reach KVM at each guest write, not at
				      * msivm's next delivery */
	struct ratelimit rl;
	uint64_t bad_accesses;
};

/* Adds an MSI-X capability with `nvec` (1..MSIX_MAX_VECTORS) vectors to `f`,
 * table at offset 0 and PBA at `pba_offset` of BAR `bar` (the caller adds
 * the BAR with msix_bar_ops and `m` as opaque). Every vector starts masked.
 * Returns 0 or -errno. */
int msix_init(struct msix *m, struct pci_func *f, struct gsi_routes *routes, uint16_t nvec,
	      unsigned bar, uint32_t pba_offset);
void msix_destroy(struct msix *m);

/* Where a device's own table and PBA are (a passed-through device: any BAR, any offset). */
struct msix_layout {
	unsigned table_bar, pba_bar;
	uint32_t table_offset, pba_offset;
};

/* As msix_init, with the table and PBA where `l` says (the caller routes those BAR ranges to
 * msix_bar_access). Returns 0 or -errno. */
int msix_init_layout(struct msix *m, struct pci_func *f, struct gsi_routes *routes,
		     uint16_t nvec, const struct msix_layout *l);

/* Delivery mechanism for every vector (irqfd by default); before the guest runs. */
void msix_set_path(struct msix *m, enum irq_path path);

/* Bytes the table and PBA need in the BAR (a power of two). */
uint64_t msix_bar_size(uint16_t nvec, uint32_t *pba_offset);

/* Re-reads enable and function mask from config space after a config write
 * (called by the function's owner with the function lock held): routes are
 * created for vectors that became deliverable, pending ones are replayed. */
void msix_config_written(struct msix *m);

/* True while MSI-X is enabled in the capability. */
bool msix_enabled(struct msix *m);

/* Signals vector `vec`. Delivers through the irqfd if the vector is
 * deliverable, otherwise sets its pending bit (never lost) or, if MSI-X is
 * disabled or vec is out of range, drops it. Returns the path taken. */
enum msix_path msix_signal(struct msix *m, uint16_t vec);

/* Table (offset 0) and PBA (pba_offset) accesses: 4- or 8-byte, naturally
 * aligned, inside the structures; anything else reads all-ones / is dropped
 * and logged. PBA is read-only; reading it first takes signals another writer
 * (vhost) left in a masked vector's eventfd into its pending bit. */
extern const struct bus_ops msix_bar_ops;

/* An access of BAR `bar` at `off`: if it falls in the table or the PBA, handles it as
 * msix_bar_ops does (a bad size or alignment there reads all-ones / is dropped and logged)
 * and returns true; otherwise leaves data alone and returns false (the caller's access). */
bool msix_bar_access(struct msix *m, unsigned bar, uint64_t off, void *data, uint32_t len,
		     bool write);

/* Table and PBA bytes the layout occupies from its offsets (nvec entries, PBA in 8-byte words). */
static inline uint32_t msix_table_len(uint16_t nvec) { return (uint32_t)nvec * MSIX_ENTRY_SIZE; }
static inline uint32_t msix_pba_len(uint16_t nvec) { return (uint32_t)(nvec + 63) / 64 * 8; }

#endif
