/* MSI: a 64-bit, per-vector-maskable MSI capability with the multiple-message field honoured. */
#ifndef MSIVM_PCI_MSI_H
#define MSIVM_PCI_MSI_H

#include <stdbool.h>
#include <stdint.h>

#include "irq/irq_vec.h"
#include "pci/pci_func.h"

#define MSI_CAP_ID      0x05
#define MSI_CAP_LEN     24
#define MSI_MAX_VECTORS 32
#define MSI_OFF_PENDING 20 /* the pending bits' offset in the capability */

enum msi_path { MSI_DELIVERED, MSI_PENDED, MSI_DROPPED };

struct msi {
	struct pci_func *func;      /* its lock guards this struct too */
	uint8_t cap;
	uint8_t log2_capable;       /* MMC: 2^n messages offered */
	uint8_t log2_enabled;       /* MME as honoured (clamped to MMC) */
	bool enabled;
	bool commit_at_once;        /* a device signals the eventfds itself (VFIO): routes reach
				     * KVM at each config write, not at msivm's next delivery, and a
				     * masked message's eventfd count is its pending bit's to take */
	struct irq_vec vecs[MSI_MAX_VECTORS];
	uint64_t delivered[MSI_MAX_VECTORS], pended[MSI_MAX_VECTORS], replayed[MSI_MAX_VECTORS];
	uint64_t dropped;
};

/* Adds an MSI capability offering `nvec` messages (rounded up to a power of
 * two, at most 32) to `f`. Returns 0 or -errno. */
int msi_init(struct msi *m, struct pci_func *f, struct gsi_routes *routes, uint32_t nvec);
void msi_destroy(struct msi *m);

/* Delivery mechanism for every message (irqfd by default); before the guest runs. */
void msi_set_path(struct msi *m, enum irq_path path);

/* Re-reads the capability after a config write (function lock held): enable,
 * number of messages, address, data and mask bits; binds routes for
 * unmasked messages and replays pending ones. */
void msi_config_written(struct msi *m);

/* Before a guest read of the pending bits (takes the function lock): takes the signals a
 * device writing the eventfds itself (commit_at_once: VFIO) left in a masked message's
 * eventfd into its pending bit; the unmask then delivers it once (msi_config_written). */
void msi_collect_pending(struct msi *m);

/* Messages currently enabled (1, 2, 4...), 0 while MSI is disabled. Lock held. */
uint32_t msi_nr_enabled(const struct msi *m);

/* Signals message `idx` (taken modulo the enabled count). Takes the function
 * lock. A masked message gets its pending bit; MSI disabled drops it. */
enum msi_path msi_signal(struct msi *m, uint32_t idx);

#endif
