/* virtio-blk inside: the completion path virtio_blk.c's request parsing hands requests to. */
#ifndef MSIVM_DEVICES_VIRTIO_BLK_IO_H
#define MSIVM_DEVICES_VIRTIO_BLK_IO_H

#include "devices/virtio_blk.h"

/* Writes the status byte `s` at `status` and fills used element `head` with `written` bytes on
 * queue qi (published by vblk_signal_queue), unless the queue went away (reset or NEEDS_RESET):
 * then the guest is not told. Counts IOERR and UNSUPP. Lock held. */
void vblk_push(struct virtio_blk *b, uint16_t qi, uint16_t head, uint8_t *status, uint8_t s,
	       uint32_t written);

/* Publishes queue qi's filled used elements and signals the driver (if the queue is live). */
void vblk_signal_queue(struct virtio_blk *b, uint16_t qi);

/* A free request of queue qi if the queue may start another one (a request is free, or can be
 * allocated, and the queue's bytes in flight are under VBLK_INFLIGHT_BYTES), else NULL. */
struct vblk_req *vblk_startable_req(struct virtio_blk *b, uint16_t qi);

/* Takes r (from vblk_startable_req) off the free list and starts its I/O: `op` on `len` bytes
 * at `sector` through r->iov[0, iovcnt). Its completion pushes the status and frees r. */
void vblk_submit(struct virtio_blk *b, uint16_t qi, struct vblk_req *r, enum blk_op op,
		 uint64_t sector, uint64_t len, int iovcnt);

/* After completions reaped inline: signals each queue with new used elements and reschedules
 * the queues that ran out of requests. Lock held. */
void vblk_after_completions(struct virtio_blk *b);

#endif
