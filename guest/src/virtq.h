/* guest/src/virtq.h - split virtqueue (virtio 1.x, 2.7) in static memory, driver side. */
#ifndef PROBE_VIRTQ_H
#define PROBE_VIRTQ_H

#include <stdbool.h>
#include <stdint.h>

#define VIRTQ_MAX_SIZE      256

#define VIRTQ_DESC_F_NEXT   1
#define VIRTQ_DESC_F_WRITE  2   /* device writes the buffer */

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
 * Large enough for any size <= VIRTQ_MAX_SIZE. */
struct virtq_mem {
    struct virtq_desc desc[VIRTQ_MAX_SIZE];         /* 16-byte aligned */
    struct virtq_avail avail;                       /* 2-byte aligned */
    struct virtq_used used __attribute__((aligned(4)));
} __attribute__((aligned(4096)));

struct virtq {
    struct virtq_mem *mem;
    uint16_t index;             /* queue number on the device */
    uint16_t size;              /* negotiated size (power of 2) */
    uint16_t avail_idx;         /* driver's copy of avail.idx */
    uint16_t last_used;         /* next used.idx entry to consume */
    uint16_t in_flight;         /* buffers posted and not yet consumed */
    uint16_t next_desc;         /* descriptors are handed out round robin */
    uintptr_t notify_addr;      /* where to write `index` to kick */
    volatile uint32_t irqs;     /* interrupts that signalled this queue */
    volatile bool signalled;    /* set by the interrupt handler */
};

/* Zero ring memory `mem` and bind vq to it for device queue `index` of `size`
 * (1..VIRTQ_MAX_SIZE). */
void virtq_init(struct virtq *vq, struct virtq_mem *mem, uint16_t index, uint16_t size);

/*
 * Post one buffer (single descriptor, device-writable if `writable`) and
 * publish it in the avail ring. The caller kicks the device afterwards.
 * Returns the descriptor id, or -1 if all descriptors are in flight.
 */
int virtq_add_buf(struct virtq *vq, uint64_t addr, uint32_t len, bool writable);

/* True if the device has returned a buffer not yet consumed (reads used.idx). */
bool virtq_has_used(const struct virtq *vq);

/* Consume the next used element: its descriptor id and written length.
 * Returns false if there is none. */
bool virtq_pop_used(struct virtq *vq, uint32_t *id, uint32_t *len);

/* Physical addresses of the three parts, for the device's queue registers. */
uint64_t virtq_desc_addr(const struct virtq *vq);
uint64_t virtq_driver_addr(const struct virtq *vq);
uint64_t virtq_device_addr(const struct virtq *vq);

#endif
