/* guest/src/virtq.c - split virtqueue bookkeeping: post single-descriptor buffers, reap used ones. */
#include "virtq.h"
#include "cpu.h"
#include "lib.h"

#include <stddef.h>

void virtq_init(struct virtq *vq, struct virtq_mem *mem, uint16_t index, uint16_t size)
{
    memset(vq, 0, sizeof(*vq));
    /* Zero only what a queue of this size uses (mem is not pre-zeroed and
     * clearing costs ~1 us per qword at CPL0 under PVM). */
    memset(mem->desc, 0, size * sizeof(mem->desc[0]));
    memset(&mem->avail, 0, offsetof(struct virtq_avail, ring) + (size + 1) * sizeof(uint16_t));
    memset(&mem->used, 0, offsetof(struct virtq_used, ring) +
           size * sizeof(struct virtq_used_elem) + sizeof(uint16_t));
    vq->mem = mem;
    vq->index = index;
    vq->size = size;
}

int virtq_add_buf(struct virtq *vq, uint64_t addr, uint32_t len, bool writable)
{
    struct virtq_mem *m = vq->mem;
    uint16_t id;

    if (vq->in_flight >= vq->size)
        return -1;
    id = vq->next_desc;
    vq->next_desc = (uint16_t)((id + 1) & (vq->size - 1));
    m->desc[id].addr = addr;
    m->desc[id].len = len;
    m->desc[id].flags = writable ? VIRTQ_DESC_F_WRITE : 0;
    m->desc[id].next = 0;
    m->avail.ring[vq->avail_idx & (vq->size - 1)] = id;
    barrier();      /* descriptor and ring entry before the index (x86: TSO) */
    vq->avail_idx++;
    *(volatile uint16_t *)&m->avail.idx = vq->avail_idx;
    vq->in_flight++;
    return id;
}

bool virtq_has_used(const struct virtq *vq)
{
    return *(volatile const uint16_t *)&vq->mem->used.idx != vq->last_used;
}

bool virtq_pop_used(struct virtq *vq, uint32_t *id, uint32_t *len)
{
    const volatile struct virtq_used_elem *e;

    if (!virtq_has_used(vq))
        return false;
    barrier();      /* read the element only after seeing the index */
    e = &vq->mem->used.ring[vq->last_used & (vq->size - 1)];
    *id = e->id;
    *len = e->len;
    vq->last_used++;
    vq->in_flight--;
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
