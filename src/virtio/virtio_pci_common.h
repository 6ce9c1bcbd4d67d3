/* Virtio-pci common configuration: feature negotiation, device status machine, queue registers. */
#ifndef MSIVM_VIRTIO_VIRTIO_PCI_COMMON_H
#define MSIVM_VIRTIO_VIRTIO_PCI_COMMON_H

#include <stdint.h>

/* A two-file circle on purpose: this half handles the common-config registers of the
 * transport's struct virtio_pci (virtio_pci.h), and virtio_pci.c routes BAR accesses here; the
 * struct stays one, so neither half can sit below the other. */
#include "virtio/virtio_pci.h"

/* Register offsets in struct virtio_pci_common_cfg (virtio 1.x 4.1.4.3). */
#define VPCI_DFSELECT      0x00
#define VPCI_DF            0x04
#define VPCI_GFSELECT      0x08
#define VPCI_GF            0x0c
#define VPCI_MSIX_CONFIG   0x10
#define VPCI_NUM_QUEUES    0x12
#define VPCI_STATUS        0x14
#define VPCI_CFG_GEN       0x15
#define VPCI_Q_SELECT      0x16
#define VPCI_Q_SIZE        0x18
#define VPCI_Q_MSIX        0x1a
#define VPCI_Q_ENABLE      0x1c
#define VPCI_Q_NOFF        0x1e
#define VPCI_Q_DESC_LO     0x20
#define VPCI_Q_DESC_HI     0x24
#define VPCI_Q_DRIVER_LO   0x28
#define VPCI_Q_DRIVER_HI   0x2c
#define VPCI_Q_DEVICE_LO   0x30
#define VPCI_Q_DEVICE_HI   0x34

/* Virtio vendor capability (id 0x09) and its cfg_type values. */
#define VIRTIO_CAP_VNDR    0x09
#define VIRTIO_CAP_COMMON  1
#define VIRTIO_CAP_NOTIFY  2
#define VIRTIO_CAP_ISR     3
#define VIRTIO_CAP_DEVICE  4
#define VIRTIO_CAP_PCI_CFG 5

/* Appends the PCI_CFG capability (before the guest runs) and makes its data bytes trap to
 * vpci_cfg_cap_access. Returns 0 or -ENOSPC. */
int vpci_cfg_cap_add(struct virtio_pci *t);

/* pci_func config_trap hook (no lock held): performs the access the PCI_CFG capability
 * describes on the selected BAR's handlers, a read before the guest reads pci_cfg_data, a write
 * after it wrote it. A BAR that does not exist, a length other than 1, 2 or 4, an unaligned or
 * out-of-range offset is refused with a log line (a read then sees zeros). */
void vpci_cfg_cap_access(void *opaque, bool write);

/* poll= (virtio_pci_poll.c). vpci_poll_init prepares queue q's poller (at creation). After the
 * device handled a kick of queue q (lock held, on whichever thread): on the loop's thread with
 * poll= set and a window left, turns the queue's notifications off and arms its poller, which
 * then handles new chains without kicks until a window passes without any (notifications back
 * on, the ring looked at once more). The window doubles (up to poll=) when a kick comes soon
 * after polling stopped and halves when a whole window found nothing. */
void vpci_poll_init(struct virtio_pci *t, uint16_t q);
void vpci_poll_after_kick(struct virtio_pci *t, uint16_t q);
/* Before the transport goes away (loop thread, or the loop no longer runs). */
void vpci_poll_destroy(struct virtio_pci *t);

/* Sends queue vq's notification now unless the driver asked not to be told of the used
 * elements since the last one (EVENT_IDX / NO_INTERRUPT): then counts it suppressed. Lock held. */
void vpci_queue_notify(struct virtio_pci *t, struct vpci_queue *vq);

/* coalesce= (virtio_pci_coalesce.c): interrupt moderation per queue. vpci_hold_init prepares
 * queue q's timer at creation when cfg.coalesce_us is set and there is a loop (0 or -errno).
 * With the lock held, after `batch` new used elements were published:
 *   vpci_hold_more: a notification is held: the batch joins it (the quiet timer starts over, or
 *     it goes out when its cap passed or half the ring waits); true. Else false.
 *   vpci_hold_start: held if coalescing is on, the driver wants a notification (EVENT_IDX /
 *     NO_INTERRUPT, decided without recording it), the batch is not a whole batch the driver
 *     gave at once (more than one element, nothing left in flight or in the avail ring: such
 *     a driver waits for all of it, and a hold could only delay it) and the queue is not
 *     backing off; the timer armed (quiet time adapted to the gaps between joining batches,
 *     or to the queue's reaction time before any joined; never past coalesce_us from the
 *     start); true if held. A hold that nothing joined makes the
 *     next 1, 2, 4 ... VPCI_HOLD_BACKOFF_MAX notifications go out at once, so a queue one
 *     request deep (whose driver waits for each completion) is almost never held.
 * vpci_hold_reset drops a held notification (device reset, queue re-enabled: nothing to tell);
 * vpci_hold_destroy closes the timers. */
#define VPCI_HOLD_BACKOFF_MAX 128u
int vpci_hold_init(struct virtio_pci *t, uint16_t q);
bool vpci_hold_more(struct virtio_pci *t, struct vpci_queue *vq);
bool vpci_hold_start(struct virtio_pci *t, struct vpci_queue *vq, uint64_t batch);
/* A notification of queue vq went out now: timed (for the reaction time the quiet time starts
 * from) only when the queue's next completion may be held, so a backing-off queue reads no clock. */
void vpci_hold_sent(struct vpci_queue *vq);
void vpci_hold_reset(struct vpci_queue *vq);
/* Every held notification of the transport goes out now (a snapshot; lock held). */
void vpci_hold_flush(struct virtio_pci *t);
/* Restore (lock held): ISR as saved; a queue or config cause still in it raises INTx again
 * when neither MSI-X nor MSI is on (the guest had not yet read it). */
void vpci_isr_restore(struct virtio_pci *t, uint8_t isr);
void vpci_hold_destroy(struct virtio_pci *t);

/* Features the transport offers on top of the device's. */
uint64_t vpci_offered_features(const struct virtio_pci *t);

/* Guest access to the common configuration (transport lock held). Reads of
 * any width inside the structure see the registers' bytes; writes must use
 * the register's width (64-bit queue addresses may also be written as two
 * 32-bit halves); other writes are logged and dropped. */
void vpci_common_read(struct virtio_pci *t, uint64_t off, void *data, uint32_t len);
void vpci_common_write(struct virtio_pci *t, uint64_t off, const void *data, uint32_t len);

/* Device reset (status written as 0, or at creation): features, status,
 * queues and vectors back to their initial values; the device's reset hook
 * runs. Lock held. */
void vpci_common_reset(struct virtio_pci *t);

#endif
