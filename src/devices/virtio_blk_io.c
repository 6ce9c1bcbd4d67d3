/* virtio-blk's completion path: the request pool, starting a request's backend I/O, its completion (status byte, used ring, signal). */
#include "devices/virtio_blk_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices/virtio_blk_config.h"
#include "util/log.h"

/* Writes the status byte and returns the chain, unless the queue went away
 * (reset or NEEDS_RESET): then the guest is not told. */
void vblk_push(struct virtio_blk *b, uint16_t qi, uint16_t head, uint8_t *status, uint8_t s,
	       uint32_t written)
{
	if (s == VIRTIO_BLK_S_IOERR)
		b->stats.ioerr++;
	else if (s == VIRTIO_BLK_S_UNSUPP)
		b->stats.unsupp++;
	struct virtq *q = virtio_pci_queue(&b->pci, qi);
	if (!q)
		return;
	__atomic_store_n(status, s, __ATOMIC_RELAXED);
	virtq_fill(q, head, written); /* published once per batch, by signal_queue */
	b->pushed[qi] = true;
}


void vblk_signal_queue(struct virtio_blk *b, uint16_t qi)
{
	b->pushed[qi] = false;
	if (virtio_pci_queue(&b->pci, qi))
		virtio_pci_queue_done(&b->pci, qi);
}

static bool is_write(uint32_t type)
{
	return type == VIRTIO_BLK_T_OUT || type == VIRTIO_BLK_T_DISCARD ||
	       type == VIRTIO_BLK_T_WRITE_ZEROES;
}

static void req_free(struct virtio_blk *b, struct vblk_req *r)
{
	r->next_free = b->free_reqs[r->queue];
	b->free_reqs[r->queue] = r;
}

/* The first free request of queue qi, or NULL when all VIRTIO_BLK_QUEUE_SIZE are in flight (or,
 * out of host memory, all that exist: the device is then marked NEEDS_RESET). Requests are
 * allocated VBLK_REQ_CHUNK at a time the first time the queue needs them, so a device costs
 * memory only as deep as its driver ever fills each queue. */
static struct vblk_req *free_req(struct virtio_blk *b, uint16_t qi)
{
	uint16_t n = b->fresh_reqs[qi];
	if (b->free_reqs[qi] || n >= VIRTIO_BLK_QUEUE_SIZE)
		return b->free_reqs[qi];
	struct vblk_req **chunk = &b->req_chunks[qi][n / VBLK_REQ_CHUNK];
	if (!*chunk && !(*chunk = calloc(VBLK_REQ_CHUNK, sizeof(**chunk)))) {
		virtio_pci_set_needs_reset(&b->pci, "out of host memory for requests");
		return NULL;
	}
	struct vblk_req *r = &(*chunk)[n % VBLK_REQ_CHUNK];
	b->fresh_reqs[qi]++;
	r->dev = b;
	r->queue = qi;
	req_free(b, r);
	return r;
}

/* Whether queue qi may start another request: one is free and the queue's bytes in flight are
 * under VBLK_INFLIGHT_BYTES. */
struct vblk_req *vblk_startable_req(struct virtio_blk *b, uint16_t qi)
{
	return b->inflight_bytes[qi] < VBLK_INFLIGHT_BYTES ? free_req(b, qi) : NULL;
}

static void io_done(void *cookie, int64_t result);

static void start_flush(struct vblk_req *r)
{
	r->io = (struct blk_io){ .op = BLK_OP_FLUSH, .done = io_done, .cookie = r };
	blk_backend_submit(r->dev->be, &r->io);
}

/* The backend finished r's I/O (transport lock held). */
static void io_done(void *cookie, int64_t result)
{
	struct vblk_req *r = cookie;
	struct virtio_blk *b = r->dev;
	b->inflight_bytes[r->queue] -= r->charged;
	r->charged = 0;
	bool flushing = r->type == VIRTIO_BLK_T_FLUSH || r->syncing;
	uint8_t s = VIRTIO_BLK_S_OK;
	if (result < 0) {
		if (flushing && !b->flush_error)
			b->flush_error = (int)result;
		log_ratelimited(&b->rl, result == -ECANCELED ? LOG_DEBUG : LOG_WARN,
				"%s q%u: request %u (type %u%s): host I/O failed: %s",
				b->name, r->queue, r->head, r->type, r->syncing ? ", flush" : "",
				strerror((int)-result));
		bool dwz = r->type == VIRTIO_BLK_T_DISCARD || r->type == VIRTIO_BLK_T_WRITE_ZEROES;
		s = result == -EOPNOTSUPP && dwz && !flushing ? VIRTIO_BLK_S_UNSUPP : VIRTIO_BLK_S_IOERR;
	} else if (flushing && b->flush_error) {
		s = VIRTIO_BLK_S_IOERR; /* an earlier flush failed: this one proves nothing */
	} else if (is_write(r->type) && !r->syncing && !vblk_writeback(b)) {
		r->syncing = true; /* writethrough */
		if (!b->flush_error) {
			start_flush(r);
			return;
		}
		s = VIRTIO_BLK_S_IOERR;
	}
	if (s == VIRTIO_BLK_S_OK && r->type == VIRTIO_BLK_T_IN)
		b->stats.bytes_read += r->bytes;
	else if (s == VIRTIO_BLK_S_OK && r->type == VIRTIO_BLK_T_OUT)
		b->stats.bytes_written += r->bytes;
	/* Cancelled (reset, end of the VM): no driver will look, and a teardown must stay quick. */
	if (s != VIRTIO_BLK_S_OK && r->type == VIRTIO_BLK_T_IN && result != -ECANCELED &&
	    virtio_pci_queue(&b->pci, r->queue))
		for (int i = 0; i < r->io.iovcnt; i++) /* what the failed read left: zeroes */
			memset(r->iov[i].iov_base, 0, r->iov[i].iov_len);
	vblk_push(b, r->queue, r->head, r->status, s, r->written);
	req_free(b, r);
}

/* Takes r from the free list and starts its I/O. */
void vblk_submit(struct virtio_blk *b, uint16_t qi, struct vblk_req *r, enum blk_op op,
	         uint64_t sector, uint64_t len, int iovcnt)
{
	b->free_reqs[qi] = r->next_free;
	r->charged = op == BLK_OP_READ || op == BLK_OP_WRITE ? (uint32_t)len : 0;
	b->inflight_bytes[qi] += r->charged;
	r->io = (struct blk_io){
		.op = op, .offset = sector * BLK_SECTOR_SIZE, .len = len, .iov = r->iov,
		.iovcnt = iovcnt, .done = io_done, .cookie = r,
	};
	blk_backend_submit(b->be, &r->io);
}


/* Completions reaped inline (during an unplug) may belong to any queue: each queue with new
 * used elements is signalled, and a queue that ran out of requests is rescheduled (its kick was
 * consumed; the completion eventfd did not fire for what was reaped here). */
void vblk_after_completions(struct virtio_blk *b)
{
	for (uint16_t q = 0; q < b->nqueues; q++) {
		if (b->pushed[q])
			vblk_signal_queue(b, q);
		if (b->starved[q] && vblk_startable_req(b, q) && virtio_pci_queue(&b->pci, q))
			virtio_pci_queue_resume(&b->pci, q);
	}
}
