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

/* virtq_add_chain, with `head_flags` or'ed into the first descriptor's flags. */
static int add_chain(struct virtq *vq, const struct virtq_buf *bufs, unsigned int n,
                     uint16_t token, uint16_t head_flags)
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
                              (i + 1 < n ? VIRTQ_DESC_F_NEXT : 0) | (i ? 0 : head_flags));
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

int virtq_add_chain(struct virtq *vq, const struct virtq_buf *bufs, unsigned int n,
                    uint16_t token)
{
    return add_chain(vq, bufs, n, token, 0);
}

int virtq_add_buf(struct virtq *vq, uint64_t addr, uint32_t len, bool writable)
{
    struct virtq_buf b = { addr, len, writable };

    return virtq_add_chain(vq, &b, 1, 0);
}

int virtq_add_indirect(struct virtq *vq, uint64_t table, uint32_t len, uint16_t token)
{
    struct virtq_buf b = { table, len, false };

    return add_chain(vq, &b, 1, token, VIRTQ_DESC_F_INDIRECT);
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

unsigned int virtq_repost_used(struct virtq *vq, uint64_t *bytes)
{
    struct virtq_mem *m = vq->mem;
    uint16_t used = *(volatile const uint16_t *)&m->used.idx, mask = (uint16_t)(vq->size - 1);
    uint16_t first = vq->last_used, last = (uint16_t)(used - 1);
    unsigned int n = 0;
    uint64_t sum = 0;

    if (used == first)
        return 0;
    barrier();      /* elements only after the index */
    /* In-order fast path, O(1): every chain is posted (avail_idx is size
     * ahead) and the device used them in avail order (checked at the first
     * and last element), so the chain used at position k is the one in
     * avail slot k & size-1, which avail position k + size reuses as is. */
    if ((uint16_t)(vq->avail_idx - first) == vq->size &&
        m->used.ring[first & mask].id == m->avail.ring[first & mask] &&
        m->used.ring[last & mask].id == m->avail.ring[last & mask]) {
        n = (uint16_t)(used - first);
        vq->last_used = used;
        vq->avail_idx = (uint16_t)(vq->avail_idx + n);
        barrier();
        *(volatile uint16_t *)&m->avail.idx = vq->avail_idx;
        return n;
    }
    while (vq->last_used != used) {
        const volatile struct virtq_used_elem *e = &m->used.ring[vq->last_used & mask];
        uint32_t id = e->id;

        sum += e->len;
        vq->last_used++;
        if (id < vq->size) {
            m->avail.ring[vq->avail_idx & mask] = (uint16_t)id;
            vq->avail_idx++;
            n++;
        } else {
            vq->in_flight--;
        }
    }
    barrier();      /* ring entries before the index */
    *(volatile uint16_t *)&m->avail.idx = vq->avail_idx;
    if (bytes)
        *bytes += sum;
    return n;
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
