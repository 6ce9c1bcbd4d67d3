/* Virtio-pci modern transport: capabilities, common/notify/ISR/device regions, status machine, interrupt modes. */
#ifndef MSIVM_VIRTIO_VIRTIO_PCI_H
#define MSIVM_VIRTIO_VIRTIO_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "irq/gsi_routes.h"
#include "pci/intx.h"
#include "pci/irq_mode.h"
#include "pci/msi.h"
#include "pci/msix.h"
#include "pci/pci_func.h"
#include "util/error.h"
#include "util/log.h"
#include "virtio/budget.h"
#include "virtio/virtio_dev.h"
#include "virtio/virtq.h"
#include "core/evloop.h"

#define VIRTIO_PCI_MAX_QUEUES 16
#define VIRTIO_NO_VECTOR      0xffff

#define VIRTIO_STATUS_ACK         0x01
#define VIRTIO_STATUS_DRIVER      0x02
#define VIRTIO_STATUS_DRIVER_OK   0x04
#define VIRTIO_STATUS_FEATURES_OK 0x08
#define VIRTIO_STATUS_NEEDS_RESET 0x40
#define VIRTIO_STATUS_FAILED      0x80


struct virtio_pci_config {
	enum irq_mode mode;
	int vectors;              /* MSI-X table size; -1: derive from mode; 0: no MSI-X */
	enum irq_path path;       /* MSI/MSI-X delivery: irqfd (default) or KVM_SIGNAL_MSI */
	uint32_t poll_us;         /* poll=: busy-poll a queue's avail ring up to this long after
				   * its work, notifications off meanwhile (0: never) */
	uint32_t coalesce_us;     /* coalesce=: hold a queue's notification at most this long so
				   * that more completions join it (0: off, notify at once) */
};

#define VIRTIO_PCI_POLL_MAX_US 1000 /* poll= at most: the I/O thread spins this long at most */
#define VIRTIO_PCI_COALESCE_MAX_US 10000 /* coalesce= at most */
/* coalesce=on: the cap where none is given (see docs/architecture.md, "Completion batching"). */
#define VIRTIO_PCI_COALESCE_DEFAULT_US 1000

struct virtio_pci;

/* coalesce= (virtio_pci_coalesce.c): a queue's notification held back so that more completions
 * join it, while holding pays. */
struct vpci_hold {
	int timer_fd;             /* -1: coalescing off for this queue */
	struct evloop_handler timer_handler;
	bool held;                /* a notification the driver wants is being held */
	uint64_t start_ns, deadline_ns, last_ns;
	uint32_t joins;           /* batches of completions that joined the held notification */
	uint32_t skip;            /* notifications to send at once before holding again */
	uint32_t backoff;         /* the next skip after a hold nothing joined (doubles, capped) */
	uint64_t gap_ns;          /* moving average of the time between joining batches (0: none yet) */
	uint64_t sent_ns;         /* when the last notification went out (0: none since the last batch) */
	uint64_t react_ns;        /* moving average of notification -> next completion (0: none yet) */
	bool kicks_off;           /* the driver's kicks are off while held: the timer looks at the ring */
};

/* Per queue, for --stats and the lab. */
struct vpci_queue_stats {
	uint64_t completions;     /* used elements published */
	uint64_t notifications;   /* interrupts raised for the queue */
	uint64_t suppressed;      /* ... not raised: the driver asked not to be told (EVENT_IDX or
				   * NO_INTERRUPT) */
	uint64_t holds;           /* notifications held back by coalesce= */
	uint64_t holds_joined;    /* ... that more completions joined before they went out */
	uint64_t hold_ns;         /* time notifications spent held, in all */
	uint64_t hold_pickups;    /* hold timer passes that found requests submitted without a kick */
	uint64_t whole_batches;   /* notifications not held: a whole batch the driver gave at once
				   * completed together, nothing left in flight */
};

struct vpci_queue {
	struct virtio_pci *owner;
	uint16_t index;
	uint16_t size;            /* as the driver set it (validated at enable) */
	uint16_t msix_vector;
	bool enabled;
	uint64_t desc, driver, device;
	struct virtq vq;
	int kick_fd;              /* ioeventfd on the queue's notify address */
	bool kick_released;       /* kick_fd left the event loop: another reader (vhost) has it */
	struct evloop_handler kick_handler;
	uint64_t pushed_seen;     /* vq.pushed at the last interrupt decision */
	char name[32];
	/* poll= (virtio_pci_poll.c): the window adapts between 0 and cfg.poll_us. */
	struct evloop_poller poller;
	uint64_t poll_ns;         /* the current window (0: wait for kicks) */
	uint64_t last_work_ns;    /* when the queue's work last ended (kick or poll) */
	bool poll_hit;            /* the armed window found work */
	struct vpci_hold hold;
	struct vpci_queue_stats stats;
};

/* Interrupts raised, by path, for --stats. */
struct vpci_irq_stats {
	uint64_t intx_asserts;    /* INTx line raised (level) */
	uint64_t intx_resamples;  /* EOI seen with a cause still pending: raised again */
	uint64_t suppressed;      /* used buffers the driver asked not to be told about */
	uint64_t no_vector;       /* a queue/config with VIRTIO_NO_VECTOR under MSI-X */
	uint64_t isr_reads;       /* ISR register reads (each one a VM exit) */
	uint64_t kicks;           /* queue notifications handled */
	uint64_t kicks_mmio;      /* ... of which arrived as an MMIO exit, not an ioeventfd */
	uint64_t resumes;         /* handler stopped on its budget and rescheduled itself */
	uint64_t cfg_window;      /* BAR accesses through the PCI_CFG capability */
	uint64_t cfg_window_refused; /* ... refused (bad BAR, length, offset) */
	uint64_t poll_hits;       /* polls of an avail ring that found work (no kick needed) */
	uint64_t poll_windows;    /* polling windows that ended without work (kicks back on) */
};

struct virtio_pci {
	pthread_mutex_t lock;     /* transport + device state; taken by every entry point */
	struct virtio_dev_info info;
	const struct virtio_dev_ops *ops;
	void *opaque;
	struct virtio_pci_config cfg;
	const struct guest_mem *mem;
	int vm_fd;
	struct evloop *loop;

	struct pci_func func;
	struct msix msix;
	struct msi msi;
	bool has_msix, has_msi;

	/* Common configuration. */
	uint32_t dfselect, gfselect;
	uint64_t driver_features;
	uint64_t negotiated;      /* frozen at FEATURES_OK */
	uint8_t status;
	uint8_t config_generation;
	uint16_t queue_select;
	uint16_t config_vector;
	struct vpci_queue queues[VIRTIO_PCI_MAX_QUEUES];
	uint8_t isr;
	uint8_t cfg_cap;          /* config offset of the PCI_CFG capability */

	/* INTx through an irqfd with a resample fd. */
	struct pci_intx intx;
	bool intx_level;          /* we raised the line and KVM has not lowered it (EOI) yet */
	uint32_t vec_use[MSIX_MAX_VECTORS]; /* per MSI-X vector: bit 31 config, bit q queue q */
	struct evloop_handler resample_handler;
	uint64_t notify_base;     /* guest address of the notify region while BAR0 is mapped */
	bool notify_mapped;

	struct vpci_irq_stats stats;
	struct ratelimit rl;
};

/* Creates the PCI function for a virtio device: BAR0 (64-bit, common, ISR,
 * device and notify regions), capabilities, and the interrupt sources the
 * mode asks for. `vm_fd` < 0 (tests) skips ioeventfd/irqfd registration.
 * Returns 0 or -errno with a message. */
int virtio_pci_init(struct virtio_pci *t, const struct virtio_dev_info *info,
		    const struct virtio_dev_ops *ops, void *opaque,
		    const struct virtio_pci_config *cfg, const struct guest_mem *mem, int vm_fd,
		    struct gsi_routes *routes, struct evloop *loop, struct bus *mmio,
		    struct pci_window window, struct error *err);
void virtio_pci_destroy(struct virtio_pci *t);

/* Called once the function has a slot: wires INTx to `gsi`. Returns 0 or -errno. */
int virtio_pci_attach_intx(struct virtio_pci *t, uint32_t gsi);

/* For device hooks (lock held): the live virtqueue `q`, or NULL if the queue
 * is not enabled, the driver is not ready, or the device needs a reset. */
struct virtq *virtio_pci_queue(struct virtio_pci *t, uint16_t q);

/* For device hooks (lock held): after pushing used buffers on queue `q`,
 * raise its interrupt if the driver wants one; a broken queue puts the
 * device into NEEDS_RESET. */
void virtio_pci_queue_done(struct virtio_pci *t, uint16_t q);

/* For device hooks (lock held): the handler of queue `q` stopped with work
 * left (its budget per wake-up ran out, see virtio/budget.h): the queue is
 * notified again on a later turn of the event loop, after the fds that are
 * ready now. Counted in stats.resumes. */
void virtio_pci_queue_resume(struct virtio_pci *t, uint16_t q);

/* For device hooks (lock held): the next chain of queue `q` for a handler that spends budget
 * `b`. Returns 1 with the chain in *c; 0 when the handler should stop, because the budget is
 * spent (the queue is resumed on a later loop turn) or the ring is empty (kicks are asked for
 * again and the ring is looked at once more, so a chain added meanwhile is not missed; once
 * only, so a guest flipping avail->idx cannot hold the thread here); -EIO on a broken ring
 * (virtq_pop's verdict; virtio_pci_queue_done then asks for a reset). The caller charges b. */
int virtio_pci_pop(struct virtio_pci *t, uint16_t q, struct vbudget *b, struct virtq_chain *c);

/* Marks the device as needing a reset (a guest error) and tells the driver
 * with a config interrupt. Lock held. */
void virtio_pci_set_needs_reset(struct virtio_pci *t, const char *why);

/* For device hooks (lock held): the device configuration changed (capacity, console size,
 * link status): bumps config_generation and, once the driver is ready, sends the
 * configuration-change notification (ISR bit 1 set first, in every interrupt mode). */
void virtio_pci_config_changed(struct virtio_pci *t);

/* For device hooks (lock held): raises queue `q`'s interrupt now, whatever the ring says (the
 * caller, e.g. vhost, has already decided that the driver wants it): its MSI-X vector (pending
 * while masked), else the ISR bit with MSI or INTx. */
void virtio_pci_queue_signal(struct virtio_pci *t, uint16_t q);

/* The eventfd that delivers queue `q`'s interrupt through KVM without msivm: its MSI-X vector's
 * irqfd eventfd, while MSI-X is enabled, the queue has a vector and delivery is by irqfd; -1
 * otherwise. A write while the vector is masked waits in the eventfd: a PBA read takes it into
 * the pending bit (pci/msix.c), and the unmask delivers it once (KVM also looks at the eventfd
 * when the irqfd is assigned again). Lock held. */
int virtio_pci_queue_irqfd(struct virtio_pci *t, uint16_t q);

/* Takes queue `q`'s kick eventfd out of the event loop and returns it: from now on another
 * reader (vhost) consumes the guest's ioeventfd kicks; kicks that arrive as MMIO exits still
 * reach queue_notify. Returns -1 if there is no such queue or the loop refused. */
int virtio_pci_release_kick(struct virtio_pci *t, uint16_t q);

/* Handles a guest kick of queue `q` as if it came through the ioeventfd
 * (used by the notify region's MMIO handler and by tests). */
void virtio_pci_kick(struct virtio_pci *t, uint16_t q);

/* BAR0 layout. */
#define VPCI_COMMON_OFF  0x0000
#define VPCI_COMMON_LEN  0x38
#define VPCI_ISR_OFF     0x1000
#define VPCI_DEVICE_OFF  0x2000
#define VPCI_DEVICE_LEN  0x1000
#define VPCI_NOTIFY_OFF  0x3000
#define VPCI_NOTIFY_MULT 4
#define VPCI_BAR0_SIZE   0x4000
#define VPCI_MSIX_BAR    2

#endif
