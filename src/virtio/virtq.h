/* Virtio split virtqueue: guest rings in RAM -> checked buffer chains for a device, and back. */
#ifndef MSIVM_VIRTIO_VIRTQ_H
#define MSIVM_VIRTIO_VIRTQ_H

#include <stdbool.h>
#include <stdint.h>

#include "util/log.h"
#include "core/guest_mem.h"

#define VIRTQ_MAX_SIZE  32768
#define VIRTQ_CHAIN_MAX 1024          /* max buffers in one chain */

/* Ring layout (virtio 1.x, little-endian in guest memory). */
#define VIRTQ_DESC_F_NEXT       1
#define VIRTQ_DESC_F_WRITE      2
#define VIRTQ_DESC_F_INDIRECT   4
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1
#define VIRTQ_USED_F_NO_NOTIFY     1
#define VIRTQ_DESC_SIZE       16u     /* one descriptor: addr u64, len u32, flags u16, next u16 */
#define VIRTQ_USED_ELEM_SIZE   8u     /* one used element: id u32, len u32 */

/* Bytes of each ring for a queue of `size` entries, including the trailing
 * used_event / avail_event fields (always counted, as the spec does). */
#define VIRTQ_DESC_BYTES(size)  ((uint64_t)(size) * VIRTQ_DESC_SIZE)
#define VIRTQ_AVAIL_BYTES(size) (4u + 2u * (uint64_t)(size) + 2u)
#define VIRTQ_USED_BYTES(size)  (4u + VIRTQ_USED_ELEM_SIZE * (uint64_t)(size) + 2u)

struct virtq_buf { void *host; uint32_t len; };   /* host pointer into guest RAM */

struct virtq_chain {
	uint16_t head;                  /* id to pass to virtq_push */
	uint32_t n_out, n_in;           /* device-readable buffers first, then device-writable */
	uint32_t out_bytes, in_bytes;
	struct virtq_buf buf[VIRTQ_CHAIN_MAX]; /* [0, n_out) readable, [n_out, n_out+n_in) writable */
};

/* One split virtqueue. Not thread-safe: the owner (the device's queue
 * handler) serialises every call on one queue, including init. */
struct virtq {
	const struct guest_mem *mem;
	const char *name;               /* for log lines, e.g. "rng0 q0" */
	uint16_t size;                  /* 0 until virtq_init succeeds */
	uint64_t desc_gpa, avail_gpa, used_gpa;
	bool event_idx;
	bool indirect;                  /* VIRTIO_F_INDIRECT_DESC negotiated (false after init) */
	bool notify_off;                /* virtq_set_notify(false): the device polls, no kicks wanted */
	uint16_t last_avail;            /* next avail ring slot to consume */
	uint16_t used_idx;              /* next used element to fill (shadow of used->idx + unpublished) */
	uint16_t published_idx;         /* the value last stored to used->idx */
	uint16_t signalled_used; bool signalled_used_valid;
	bool broken;                    /* a malformed value was seen: device must go to NEEDS_RESET */
	struct ratelimit rl;
	uint64_t popped, pushed;        /* counters */
	uint64_t publishes;             /* used->idx stores: pushed / publishes = chains per batch */
	/* Host views of the three rings, from gm_ptr at init (RAM never moves). */
	uint8_t *desc_host, *avail_host, *used_host;
};

/* Validates and binds a queue: size a power of two in [1, VIRTQ_MAX_SIZE]; desc 16-byte, avail 2-byte,
 * used 4-byte aligned; the three rings (with the event-idx trailing fields) entirely inside guest RAM.
 * Indices start at 0 (the values a freshly reset device has); guest memory is not written.
 * q->rl survives re-initialisation so a guest cannot reset the rate limit. Indirect descriptors
 * are refused until the owner sets q->indirect (the driver negotiated VIRTIO_F_INDIRECT_DESC).
 * Returns 0 or -EINVAL (log why); on failure q is unbound and broken, so virtq_pop returns -EIO. */
int virtq_init(struct virtq *q, const struct guest_mem *mem, const char *name, uint16_t size,
	       uint64_t desc, uint64_t avail, uint64_t used, bool event_idx);

/* Takes the next available chain. With event_idx it keeps avail_event at
 * last_avail (after each chain, and before reporting an empty ring, followed
 * by a fence and a second look), so the driver always kicks for new work;
 * not while notifications are off (virtq_set_notify), when avail_event stays behind. Returns 1 and fills *c, 0 if none, -EIO if the chain or the avail
 * index is malformed (q->broken is set, a rate-limited log line says what; later calls return -EIO).
 * Every buffer in *c lies inside guest RAM. Zero-length descriptors are checked for order but add no
 * buffer. An INDIRECT descriptor may end a direct chain if q->indirect. On -EIO *c is unspecified and nothing is
 * consumed. The host pointers alias memory the guest can change at any time: copy before validating. */
int virtq_pop(struct virtq *q, struct virtq_chain *c);

/* Fills the next used element with (head, written) without publishing it: the driver sees it
 * only at the next virtq_flush. A batch of fills (all buffers of one frame, or all completions of
 * one wake-up) thus becomes visible with a single used->idx store. `head` must come from
 * virtq_pop and `written` must not exceed that chain's in_bytes (the caller's duty). */
void virtq_fill(struct virtq *q, uint16_t head, uint32_t written);

/* Publishes every element filled since the last flush with one release store of used->idx
 * (elements before index). No-op when nothing is pending. */
void virtq_flush(struct virtq *q);

/* virtq_fill + virtq_flush: returns one chain to the driver at once. */
void virtq_push(struct virtq *q, uint16_t head, uint32_t written);

/* After pushes: flushes, then true if the driver wants an interrupt now (VIRTQ_AVAIL_F_NO_INTERRUPT, or with event_idx the used_event rule with a wrap-safe comparison). Updates signalled_used. */
bool virtq_should_notify(struct virtq *q);

/* What virtq_should_notify would answer now, without recording anything: a caller may hold the
 * notification back and ask virtq_should_notify later, over all the used elements since the
 * last one. */
bool virtq_would_notify(struct virtq *q);

/* Enables or disables driver->device notifications (used->flags VIRTQ_USED_F_NO_NOTIFY, or with event_idx writes avail_event = the current avail index, so the next chain added kicks even while earlier ones wait unused).
 * Enabling ends with a full fence; the caller must then check virtq_has_work once more before
 * sleeping, or a chain added just before the enable is never seen. With event_idx, disabling
 * writes avail_event = the avail index - 1, a point the driver has passed, and pops stop moving
 * it: the driver's next chains send no kick. */
void virtq_set_notify(struct virtq *q, bool enable);

/* True if the avail ring has chains not yet popped (acquire read of avail->idx). False once broken. */
bool virtq_has_work(struct virtq *q);

/* Gives back the last `cnt` chains popped and not pushed: the next pops
 * return them again (a device that could not use them yet, e.g. net RX
 * waiting for enough buffers). `cnt` must not exceed what was popped since
 * the last push of those chains. */
void virtq_unpop(struct virtq *q, uint16_t cnt);

/* Chains the driver has made available and the device has not taken. */
uint16_t virtq_avail_pending(struct virtq *q);

/* Copies `len` bytes found `skip` bytes into the chain's device-readable
 * buffers into dst (a short chain leaves the rest of dst untouched). Guest
 * memory is read once: validate the copy, never the buffer. */
void virtq_chain_gather(const struct virtq_chain *c, uint32_t skip, void *dst, uint32_t len);

/* Copies up to `len` bytes of src to the start of the chain's
 * device-writable buffers, in order. */
void virtq_chain_scatter(const struct virtq_chain *c, const void *src, uint32_t len);

#endif
