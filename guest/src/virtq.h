/* guest/src/virtq.h - split virtqueue (virtio 1.x, 2.7) in static memory, driver side: descriptor chains from a free list. */
#ifndef PROBE_VIRTQ_H
#define PROBE_VIRTQ_H

#include <stdbool.h>
#include <stdint.h>

#define VIRTQ_MAX_SIZE      256

#define VIRTQ_DESC_F_NEXT   1
#define VIRTQ_DESC_F_WRITE  2   /* device writes the buffer */
#define VIRTQ_DESC_F_INDIRECT 4 /* the buffer is a table of descriptors (VIRTIO_F_INDIRECT_DESC) */
#define VIRTQ_USED_F_NO_NOTIFY 1 /* used.flags: the device needs no kick (it polls) */
#define VIRTIO_F_INDIRECT_DESC (1ull << 28)
#define VIRTIO_F_EVENT_IDX  (1ull << 29)

struct virtq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct virtq_avail {
    uint16_t flags;
    uint16_t idx;
    uint16_t ring[VIRTQ_MAX_SIZE];
    uint16_t used_event;
};

struct virtq_used_elem {
    uint32_t id;
    uint32_t len;
};

struct virtq_used {
    uint16_t flags;
    uint16_t idx;
    struct virtq_used_elem ring[VIRTQ_MAX_SIZE];
    uint16_t avail_event;
};

/* Ring memory of one queue (guest-physical == virtual); 8 KiB, page aligned.
 * Large enough for any size <= VIRTQ_MAX_SIZE. `token` is driver-private
 * (never shown to the device): the caller's cookie per chain head. */
struct virtq_mem {
    struct virtq_desc desc[VIRTQ_MAX_SIZE];         /* 16-byte aligned */
    struct virtq_avail avail;                       /* 2-byte aligned */
    struct virtq_used used __attribute__((aligned(4)));
    uint16_t token[VIRTQ_MAX_SIZE];
} __attribute__((aligned(4096)));

/* One buffer of a descriptor chain. */
struct virtq_buf {
    uint64_t addr;
    uint32_t len;
    bool writable;              /* device writes it (VIRTQ_DESC_F_WRITE) */
};

struct virtq {
    struct virtq_mem *mem;
    uint16_t index;             /* queue number on the device */
    uint16_t size;              /* negotiated size (power of 2) */
    uint16_t avail_idx;         /* driver's copy of avail.idx */
    uint16_t last_used;         /* next used.idx entry to consume */
    uint16_t in_flight;         /* chains posted and not yet consumed */
    uint16_t free_head;         /* free descriptors, linked through .next */
    uint16_t num_free;
    uintptr_t notify_addr;      /* where to write `index` to kick */
    volatile uint32_t irqs;     /* interrupts that signalled this queue */
    volatile bool signalled;    /* set by the interrupt handler */
    /* Optional, called in interrupt context (IF=0, before the EOI) after
     * every interrupt that signalled this queue. */
    void (*irq_hook)(struct virtq *vq, void *ctx);
    void *irq_ctx;
};

/* Zero ring memory `mem` (the part a queue of `size` uses), link all
 * descriptors into the free list and bind vq to it for device queue `index`
 * of `size` (1..VIRTQ_MAX_SIZE). */
void virtq_init(struct virtq *vq, struct virtq_mem *mem, uint16_t index, uint16_t size);

/*
 * Post one chain of n >= 1 buffers (descriptors taken from the free list,
 * linked with VIRTQ_DESC_F_NEXT; spec 2.7.13: device-readable buffers must
 * come before device-writable ones) and publish its head in the avail ring.
 * `token` is remembered for the head (virtq_token). The caller kicks the
 * device afterwards. Returns the head descriptor id, or -1 if fewer than n
 * descriptors are free.
 */
int virtq_add_chain(struct virtq *vq, const struct virtq_buf *bufs, unsigned int n,
                    uint16_t token);

/* One-descriptor chain (token 0). Same return value as virtq_add_chain. */
int virtq_add_buf(struct virtq *vq, uint64_t addr, uint32_t len, bool writable);

/* One-descriptor chain whose descriptor has VIRTQ_DESC_F_INDIRECT: `table`
 * holds len / 16 descriptors (filled by the caller, never changed while the
 * chain is posted). Same return value as virtq_add_chain. */
int virtq_add_indirect(struct virtq *vq, uint64_t table, uint32_t len, uint16_t token);

/* Free descriptors. */
static inline unsigned int virtq_num_free(const struct virtq *vq)
{
    return vq->num_free;
}

/* True if the device has returned a buffer not yet consumed (reads used.idx). */
bool virtq_has_used(const struct virtq *vq);

/* Consume the next used element: its head descriptor id and written length;
 * the chain's descriptors go back to the free list (unless the device
 * returned an id >= size, which the caller must treat as a device error).
 * Returns false if there is none. */
bool virtq_pop_used(struct virtq *vq, uint32_t *id, uint32_t *len);

/*
 * Put every used chain straight back into the avail ring as it is (its
 * descriptors untouched, not through the free list): for chains the device
 * only reads, posted again and again (flood=). Publishes avail.idx once.
 * While every chain is posted and the device uses them in order, this is
 * O(1) (nothing is read but the first and last used element, and *bytes
 * is not updated); otherwise each used element is put back one by one
 * (*bytes, if non-NULL, gets their used lengths added). Returns how many
 * were re-posted (chains with an id >= size are dropped).
 */
unsigned int virtq_repost_used(struct virtq *vq, uint64_t *bytes);

/* Token given to virtq_add_chain for head `id` (id < size). */
static inline uint16_t virtq_token(const struct virtq *vq, uint32_t id)
{
    return vq->mem->token[id];
}

/* VIRTIO_F_EVENT_IDX: ask for an interrupt once used.idx passes `idx`
 * (the used_event field after the avail ring). */
static inline void virtq_set_used_event(struct virtq *vq, uint16_t idx)
{
    ((volatile uint16_t *)vq->mem->avail.ring)[vq->size] = idx;
}

/* Physical addresses of the three parts, for the device's queue registers. */
uint64_t virtq_desc_addr(const struct virtq *vq);
uint64_t virtq_driver_addr(const struct virtq *vq);
uint64_t virtq_device_addr(const struct virtq *vq);

#endif
