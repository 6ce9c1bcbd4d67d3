/* guest/src/virtq.c - split virtqueue bookkeeping: post descriptor chains from a free list, reap used ones. */
#include "virtq.h"
#include "cpu.h"
#include "lib.h"

#include <stddef.h>

void virtq_init(struct virtq *vq, struct virtq_mem *mem, uint16_t index, uint16_t size)
{
    uint16_t i;

    memset(vq, 0, sizeof(*vq));
    /* Zero only what a queue of this size uses (mem is not pre-zeroed and
     * clearing costs ~1 us per qword at CPL0 under PVM). */
    memset(mem->desc, 0, size * sizeof(mem->desc[0]));
    memset(&mem->avail, 0, offsetof(struct virtq_avail, ring) + (size + 1) * sizeof(uint16_t));
    memset(&mem->used, 0, offsetof(struct virtq_used, ring) +
           size * sizeof(struct virtq_used_elem) + sizeof(uint16_t));
    for (i = 0; i + 1 < size; i++)
        mem->desc[i].next = (uint16_t)(i + 1);
    vq->mem = mem;
    vq->index = index;
    vq->size = size;
    vq->num_free = size;
}

int virtq_add_chain(struct virtq *vq, const struct virtq_buf *bufs, unsigned int n,
                    uint16_t token)
{
    struct virtq_mem *m = vq->mem;
    uint16_t head = vq->free_head, id = head;
    unsigned int i;

    if (n == 0 || vq->num_free < n)
        return -1;
    /* The free list is linked through .next, so n free descriptors taken in
     * list order are already chained; the last one's .next (no F_NEXT) keeps
     * pointing at the rest of the free list. */
    for (i = 0; i < n; i++) {
        struct virtq_desc *d = &m->desc[id];

        d->addr = bufs[i].addr;
        d->len = bufs[i].len;
        d->flags = (uint16_t)((bufs[i].writable ? VIRTQ_DESC_F_WRITE : 0) |
                              (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0));
        id = d->next;
    }
    vq->free_head = id;
    vq->num_free = (uint16_t)(vq->num_free - n);
    m->token[head] = token;
    m->avail.ring[vq->avail_idx & (vq->size - 1)] = head;
    barrier();      /* descriptors and ring entry before the index (x86: TSO) */
    vq->avail_idx++;
    *(volatile uint16_t *)&m->avail.idx = vq->avail_idx;
    vq->in_flight++;
    return head;
}

int virtq_add_buf(struct virtq *vq, uint64_t addr, uint32_t len, bool writable)
{
    struct virtq_buf b = { addr, len, writable };

    return virtq_add_chain(vq, &b, 1, 0);
}

bool virtq_has_used(const struct virtq *vq)
{
    return *(volatile const uint16_t *)&vq->mem->used.idx != vq->last_used;
}

bool virtq_pop_used(struct virtq *vq, uint32_t *id, uint32_t *len)
{
    const volatile struct virtq_used_elem *e;
    struct virtq_desc *desc = vq->mem->desc;
    uint16_t last, n = 1;

    if (!virtq_has_used(vq))
        return false;
    barrier();      /* read the element only after seeing the index */
    e = &vq->mem->used.ring[vq->last_used & (vq->size - 1)];
    *id = e->id;
    *len = e->len;
    vq->last_used++;
    vq->in_flight--;
    if (*id >= vq->size)
        return true;
    /* Return the chain to the free list (bounded by size against a loop). */
    last = (uint16_t)*id;
    while ((desc[last].flags & VIRTQ_DESC_F_NEXT) && n < vq->size) {
        last = desc[last].next;
        n++;
    }
    desc[last].next = vq->free_head;
    vq->free_head = (uint16_t)*id;
    vq->num_free = (uint16_t)(vq->num_free + n);
    return true;
}

uint64_t virtq_desc_addr(const struct virtq *vq)
{
    return (uintptr_t)vq->mem->desc;
}

uint64_t virtq_driver_addr(const struct virtq *vq)
{
    return (uintptr_t)&vq->mem->avail;
}

uint64_t virtq_device_addr(const struct virtq *vq)
{
    return (uintptr_t)&vq->mem->used;
}
