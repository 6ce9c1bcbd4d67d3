/* virtio-blk: queue kick -> chain checks -> backend I/O (virtio_blk_io.c: completion -> status byte, used ring, interrupt); the device's life (init, reset, snapshot). */
#include "devices/virtio_blk.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "devices/virtio_blk_config.h"
#include "devices/virtio_blk_io.h"
#include "util/log.h"
#include "virtio/budget.h"

#define HDR_SIZE 16u   /* type u32, reserved u32, sector u64 */
#define DWZ_SIZE 16u   /* discard/write-zeroes segment: sector u64, num_sectors u32, flags u32 */
#define VBLK_BUDGET_BYTES (8u << 20) /* per wake-up: a queue depth of large reads or writes */
#define VBLK_ZERO_MAX (1u << 20)     /* data bytes a completion at once may have zeroed */

/*
 * Cache mode: writeback. Data goes through the host page cache (no O_DIRECT);
 * VIRTIO_BLK_F_FLUSH is offered and a FLUSH completes only after fdatasync
 * succeeded. A driver that does not negotiate FLUSH gets writethrough: every
 * write, discard and write-zeroes is followed by fdatasync before it
 * completes (virtio 1.2, 5.2.6.2: without FLUSH negotiated, completed writes
 * must be stable). With VIRTIO_BLK_F_CONFIG_WCE the driver picks the mode by
 * writing the config byte `writeback` (0 writethrough, 1 writeback; 1 is
 * refused unless FLUSH is negotiated, as the driver could then never make
 * its data stable); until it does, and after every reset, the byte reads
 * 1 iff FLUSH is negotiated (5.2.5.1). The first failed fdatasync is
 * latched: Linux forgets a writeback error once fsync reported it, so a
 * later fsync could succeed although data was lost; every later FLUSH fails
 * until the device is reset.
 *
 * Used length: the status byte is the last device-writable byte, so every
 * completion (OK, IOERR, UNSUPP, GET_ID) reports the whole device-writable
 * area, status byte included. The length must not claim bytes the device did
 * not write (2.7.8.2), so whatever a completion leaves unwritten before the
 * status byte is zeroed: the data of a failed or refused read, the rest of a
 * GET_ID buffer after the id. Exceptions: a refused or GET_ID request with
 * more than VBLK_ZERO_MAX writable data bytes gets length 0 (bounded work per
 * wake-up), and a cancelled read (reset, teardown) is not zeroed.
 */

/* ---- chain access: the guest may rewrite its buffers at any time, so
 * every value is copied out once and only the copy is checked ---- */

/* Fills `iov` with bytes [skip, end) of buffers [first, first + n), counted
 * from the start of buffer `first`.
 * Returns the segment count, -E2BIG past seg_max, -EMSGSIZE for a segment
 * over size_max. */
static int carve(const struct virtio_blk *b, uint32_t first, uint32_t n, uint64_t skip,
		 uint64_t end, struct iovec *iov)
{
	const struct virtq_chain *c = &b->chain;
	uint64_t pos = 0;
	int cnt = 0;
	for (uint32_t i = first; i < first + n; i++) {
		uint64_t start = pos, stop = pos + c->buf[i].len;
		pos = stop;
		uint64_t lo = start > skip ? start : skip, hi = stop < end ? stop : end;
		if (lo >= hi)
			continue;
		if ((uint32_t)cnt == b->seg_max)
			return -E2BIG;
		if (hi - lo > b->size_max)
			return -EMSGSIZE;
		iov[cnt++] = (struct iovec){ (uint8_t *)c->buf[i].host + (lo - start), hi - lo };
	}
	return cnt;
}

/* ---- completion ---- */

static unsigned stat_of(uint32_t type)
{
	switch (type) {
	case VIRTIO_BLK_T_IN: return VBLK_IN;
	case VIRTIO_BLK_T_OUT: return VBLK_OUT;
	case VIRTIO_BLK_T_FLUSH: return VBLK_FLUSH;
	case VIRTIO_BLK_T_GET_ID: return VBLK_GET_ID;
	case VIRTIO_BLK_T_DISCARD: return VBLK_DISCARD;
	case VIRTIO_BLK_T_WRITE_ZEROES: return VBLK_WRITE_ZEROES;
	default: return VBLK_OTHER;
	}
}

/* Zeroes device-writable bytes [from, to) of chain c (offsets into its writable area). */
static void zero_in(const struct virtq_chain *c, uint64_t from, uint64_t to)
{
	uint64_t pos = 0;
	for (uint32_t i = c->n_out; i < c->n_out + c->n_in && pos < to; i++) {
		uint64_t start = pos, stop = pos + c->buf[i].len;
		pos = stop;
		uint64_t lo = start > from ? start : from, hi = stop < to ? stop : to;
		if (lo < hi)
			memset((uint8_t *)c->buf[i].host + (lo - start), 0, hi - lo);
	}
}

/* The used length of chain c completed at once, the device having written its first `from`
 * writable bytes and the status byte: the rest before the status byte is zeroed and the whole
 * writable area reported; with more than VBLK_ZERO_MAX writable data bytes (never a request a
 * driver means: a hostile flood) nothing is zeroed and the length is 0 (nothing promised). */
static uint32_t covered_len(const struct virtq_chain *c, uint32_t from)
{
	uint32_t data = c->in_bytes - 1u; /* in_bytes >= 1: handle_chain checked the status byte */
	if (data > VBLK_ZERO_MAX)
		return 0;
	zero_in(c, from, data);
	return c->in_bytes;
}

/* Completes the chain in b->chain at once. Returns 0 (keep going). */
__attribute__((format(printf, 5, 6)))
static int reject(struct virtio_blk *b, uint16_t qi, uint8_t *status, uint8_t s,
		  const char *fmt, ...)
{
	char why[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	log_ratelimited(&b->rl, LOG_WARN, "%s q%u: request %u: %s; status %s", b->name, qi,
			b->chain.head, why, s == VIRTIO_BLK_S_UNSUPP ? "UNSUPP" : "IOERR");
	/* Called from process_queue only: the queue is live. */
	vblk_push(b, qi, b->chain.head, status, s, covered_len(&b->chain, 0));
	return 0;
}

/* ---- requests ---- */
/* Sector range check without overflow: [sector, sector + n) inside the disk. */
static bool range_ok(const struct virtio_blk *b, uint64_t sector, uint64_t n)
{
	uint64_t cap = vblk_capacity(b);
	return sector <= cap && n <= cap - sector;
}

static int rw_request(struct virtio_blk *b, uint16_t qi, struct vblk_req *r, uint64_t sector)
{
	const struct virtq_chain *c = &b->chain;
	bool in = r->type == VIRTIO_BLK_T_IN;
	if (!in && b->be->ro)
		return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR, "write to a read-only disk");
	if (in ? c->out_bytes != HDR_SIZE : c->in_bytes != 1)
		return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR, "%s with %u %s bytes",
			      in ? "read" : "write", in ? c->out_bytes : c->in_bytes,
			      in ? "device-readable" : "device-writable");
	uint64_t len = in ? c->in_bytes - 1u : c->out_bytes - HDR_SIZE;
	int cnt = in ? carve(b, c->n_out, c->n_in, 0, len, r->iov)
		     : carve(b, 0, c->n_out, HDR_SIZE, c->out_bytes, r->iov);
	if (cnt < 0)
		return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR, "%s",
			      cnt == -E2BIG ? "more data segments than seg_max"
					    : "a data segment larger than size_max");
	if (len % BLK_SECTOR_SIZE)
		return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR,
			      "data length %" PRIu64 " is not a multiple of 512", len);
	if (!range_ok(b, sector, len / BLK_SECTOR_SIZE))
		return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR, "sectors [%" PRIu64 ", +%" PRIu64
			      ") past the end (%" PRIu64 " sectors)", sector, len / BLK_SECTOR_SIZE,
			      vblk_capacity(b));
	r->bytes = (uint32_t)len;
	vblk_submit(b, qi, r, in ? BLK_OP_READ : BLK_OP_WRITE, sector, len, cnt);
	return 0;
}

static int dwz_request(struct virtio_blk *b, uint16_t qi, struct vblk_req *r)
{
	const struct virtq_chain *c = &b->chain;
	bool discard = r->type == VIRTIO_BLK_T_DISCARD;
	if (b->be->ro)
		return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR, "discard/write-zeroes on a "
			      "read-only disk");
	if (!vblk_negotiated(b, discard ? VIRTIO_BLK_F_DISCARD : VIRTIO_BLK_F_WRITE_ZEROES))
		return reject(b, qi, r->status, VIRTIO_BLK_S_UNSUPP, "%s not negotiated",
			      discard ? "DISCARD" : "WRITE_ZEROES");
	if (c->in_bytes != 1 || c->out_bytes != HDR_SIZE + DWZ_SIZE)
		return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR, "%u data bytes, %u writable: "
			      "want one 16-byte segment", c->out_bytes - HDR_SIZE, c->in_bytes);
	uint8_t seg[DWZ_SIZE];
	virtq_chain_gather(c, HDR_SIZE, seg, DWZ_SIZE);
	uint64_t sector;
	uint32_t num, flags;
	memcpy(&sector, seg, 8);
	memcpy(&num, seg + 8, 4);
	memcpy(&flags, seg + 12, 4);
	sector = le64toh(sector);
	num = le32toh(num);
	flags = le32toh(flags);
	if ((flags & ~VIRTIO_BLK_DWZ_F_UNMAP) || (discard && flags))
		return reject(b, qi, r->status, VIRTIO_BLK_S_UNSUPP, "flags 0x%x", flags);
	if (num == 0 || num > (discard ? b->max_discard_sectors : b->max_write_zeroes_sectors) ||
	    !range_ok(b, sector, num))
		return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR, "range [%" PRIu64 ", +%u) is "
			      "empty, too long or past the end", sector, num);
	/* Unmapping zeroes only where a discarded range reads as zeroes (a
	 * punched file); a block device's BLKZEROOUT unmaps by itself if it can. */
	bool punch = discard || ((flags & VIRTIO_BLK_DWZ_F_UNMAP) && b->be->can_discard &&
				 b->be->discard_zeroes);
	vblk_submit(b, qi, r, punch ? BLK_OP_DISCARD : BLK_OP_WRITE_ZEROES, sector,
	       (uint64_t)num * BLK_SECTOR_SIZE, 0);
	return 0;
}

/* Handles the chain in b->chain with the free request r. Returns 0, or -EIO
 * if the device needs a reset (no status byte to report through). */
static int handle_chain(struct virtio_blk *b, uint16_t qi, struct vblk_req *r)
{
	const struct virtq_chain *c = &b->chain;
	if (c->n_in == 0) {
		b->stats.requests[VBLK_OTHER]++;
		char why[64];
		snprintf(why, sizeof(why), "q%u request %u has no device-writable status byte", qi,
			 c->head);
		virtio_pci_set_needs_reset(&b->pci, why);
		return -EIO;
	}
	const struct virtq_buf *last = &c->buf[c->n_out + c->n_in - 1];
	r->status = (uint8_t *)last->host + last->len - 1;
	r->head = c->head;
	r->written = c->in_bytes;
	if (c->out_bytes < HDR_SIZE) {
		b->stats.requests[VBLK_OTHER]++;
		return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR, "header of %u bytes, want 16",
			      c->out_bytes);
	}
	uint8_t hdr[HDR_SIZE];
	virtq_chain_gather(c, 0, hdr, HDR_SIZE);
	uint32_t type;
	uint64_t sector;
	memcpy(&type, hdr, 4);
	memcpy(&sector, hdr + 8, 8);
	r->type = le32toh(type);
	sector = le64toh(sector);
	r->syncing = false;
	b->stats.requests[stat_of(r->type)]++;
	switch (r->type) {
	case VIRTIO_BLK_T_IN:
	case VIRTIO_BLK_T_OUT:
		return rw_request(b, qi, r, sector);
	case VIRTIO_BLK_T_FLUSH:
		if (c->out_bytes != HDR_SIZE || c->in_bytes != 1)
			return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR, "flush with data");
		if (b->flush_error)
			return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR, "an earlier flush failed "
				      "(%s); flushes fail until reset", strerror(-b->flush_error));
		vblk_submit(b, qi, r, BLK_OP_FLUSH, 0, 0, 0);
		return 0;
	case VIRTIO_BLK_T_GET_ID: {
		if (c->out_bytes != HDR_SIZE)
			return reject(b, qi, r->status, VIRTIO_BLK_S_IOERR, "get-id with data to read");
		uint32_t n = c->in_bytes - 1 < VIRTIO_BLK_ID_BYTES ? c->in_bytes - 1 : VIRTIO_BLK_ID_BYTES;
		virtq_chain_scatter(c, b->id, n);
		vblk_push(b, qi, r->head, r->status, VIRTIO_BLK_S_OK, covered_len(c, n));
		return 0;
	}
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		return dwz_request(b, qi, r);
	default:
		return reject(b, qi, r->status, VIRTIO_BLK_S_UNSUPP, "type %u", r->type);
	}
}

/* Pops and starts the chains of queue qi while requests are free and the
 * budget lasts (the sync engine does the I/O right here). Lock held. */
static void process_queue(struct virtio_blk *b, uint16_t qi)
{
	struct virtq *q = virtio_pci_queue(&b->pci, qi);
	if (!q)
		return;
	b->starved[qi] = false;
	struct vbudget budget = vbudget_start(VBLK_BUDGET_BYTES);
	for (;;) {
		struct vblk_req *r = vblk_startable_req(b, qi);
		if (!r) {
			b->starved[qi] = true; /* resumed when a request completes */
			break;
		}
		if (!vbudget_left(&budget)) {
			if (virtq_has_work(q))
				virtio_pci_queue_resume(&b->pci, qi);
			break;
		}
		if (virtq_pop(q, &b->chain) != 1)
			break;
		uint64_t bytes = (uint64_t)b->chain.out_bytes + b->chain.in_bytes;
		if (!rate_limiter_admit(&b->limiter, bytes)) {
			virtq_unpop(q, 1); /* the limiter's timer kicks the queues again */
			break;
		}
		vbudget_charge(&budget, bytes);
		if (handle_chain(b, qi, r))
			break;
	}
	blk_backend_unplug(b->be); /* io_uring: what completed during the submit is done now */
	vblk_signal_queue(b, qi);
	vblk_after_completions(b);
}

static void blk_notify(void *opaque, uint16_t qi)
{
	process_queue(opaque, qi);
}

/* Device reset (lock held): wait for I/O in flight, whose completions find
 * the queues gone and are dropped; forget the latched flush error. */
static void blk_reset(void *opaque)
{
	struct virtio_blk *b = opaque;
	if (b->be)
		blk_backend_cancel(b->be); /* what has not started is dropped, the rest finishes */
	b->flush_error = 0;
	b->writeback = -1; /* back to what FLUSH negotiation says */
	memset(b->starved, 0, sizeof(b->starved));
	memset(b->pushed, 0, sizeof(b->pushed));
	/* every request's io_done ran (cancel waits for what started), so nothing is charged */
}

/* Snapshot (lock held): every request in flight completes; starved queues are rescheduled. */
static void blk_quiesce(void *opaque)
{
	struct virtio_blk *b = opaque;
	if (b->be)
		blk_backend_drain(b->be);
	vblk_after_completions(b);
}

/* Snapshot: the cache mode the driver chose, a latched flush error, and the image's size (a
 * restore refuses an image that changed size: the guest's view of it is in the snapshot). */
static json_t *blk_save(void *opaque, struct error *err)
{
	(void)err;
	struct virtio_blk *b = opaque;
	return json_pack("{s:i,s:i,s:I}", "writeback", b->writeback, "flush_error", b->flush_error,
			 "bytes", (json_int_t)b->be->size);
}

static int blk_load(void *opaque, const json_t *o, struct error *err)
{
	struct virtio_blk *b = opaque;
	int wb, fe;
	json_int_t bytes;
	if (json_unpack((json_t *)o, "{s:i,s:i,s:I}", "writeback", &wb, "flush_error", &fe, "bytes",
			&bytes) || wb < -1 || wb > 1 || fe > 0 || fe < -4095)
		return error_set(err, -EINVAL, "%s: the saved cache mode or flush error is invalid",
				 b->name);
	if ((uint64_t)bytes != b->be->size)
		return error_set(err, -EINVAL, "%s: the disk image is %llu bytes, it was %lld when the "
				 "snapshot was taken", b->name, (unsigned long long)b->be->size,
				 (long long)bytes);
	if (wb == 1 && !(b->pci.negotiated & (1ULL << VIRTIO_BLK_F_FLUSH)))
		return error_set(err, -EINVAL, "%s: saved writeback without FLUSH", b->name);
	b->writeback = (int8_t)wb;
	b->flush_error = fe;
	return 0;
}

static const struct virtio_dev_ops blk_ops = {
	.config_read = vblk_config_read,
	.config_write = vblk_config_write,
	.queue_notify = blk_notify,
	.reset = blk_reset,
	.quiesce = blk_quiesce,
	.save = blk_save,
	.load = blk_load,
};

void virtio_blk_complete(struct virtio_blk *b)
{
	pthread_mutex_lock(&b->pci.lock);
	blk_backend_complete(b->be);
	for (uint16_t qi = 0; qi < b->nqueues; qi++) {
		if (b->starved[qi] && vblk_startable_req(b, qi))
			process_queue(b, qi); /* signals the queue too */
		else if (b->pushed[qi])
			vblk_signal_queue(b, qi);
	}
	pthread_mutex_unlock(&b->pci.lock);
}

static void on_io_event(void *opaque, uint32_t events) { virtio_blk_complete(opaque); }

int virtio_blk_init(struct virtio_blk *b, unsigned index, uint16_t nqueues,
		    struct blk_backend *be, const struct virtio_pci_config *cfg,
		    const struct guest_mem *mem, int vm_fd, struct gsi_routes *routes,
		    struct evloop *loop, struct bus *mmio, struct pci_window window,
		    struct error *err)
{
	memset(b, 0, sizeof(*b));
	b->be = be;
	snprintf(b->name, sizeof(b->name), "blk%u", index);
	snprintf(b->id, sizeof(b->id), "msivm-blk%u", index);
	if (nqueues < 1 || nqueues > VIRTIO_BLK_MAX_QUEUES)
		return error_set(err, -EINVAL, "%s: %u queues, want 1 to %u", b->name, nqueues,
				 VIRTIO_BLK_MAX_QUEUES);
	b->nqueues = nqueues;
	b->writeback = -1;
	vblk_limits(b);
	b->features = vblk_bit(VIRTIO_BLK_F_SIZE_MAX) | vblk_bit(VIRTIO_BLK_F_SEG_MAX) | vblk_bit(VIRTIO_BLK_F_FLUSH) |
		      vblk_bit(VIRTIO_BLK_F_BLK_SIZE) | vblk_bit(VIRTIO_BLK_F_TOPOLOGY) |
		      vblk_bit(VIRTIO_BLK_F_CONFIG_WCE);
	if (be->ro)
		b->features |= vblk_bit(VIRTIO_BLK_F_RO);
	if (nqueues > 1)
		b->features |= vblk_bit(VIRTIO_BLK_F_MQ);
	if (!be->ro && be->can_discard && b->max_discard_sectors)
		b->features |= vblk_bit(VIRTIO_BLK_F_DISCARD);
	if (!be->ro && be->can_write_zeroes && b->max_write_zeroes_sectors)
		b->features |= vblk_bit(VIRTIO_BLK_F_WRITE_ZEROES);
	struct virtio_dev_info info = {
		.name = b->name, .device_id = VIRTIO_ID_BLOCK, .nqueues = nqueues,
		.queue_max = VIRTIO_BLK_QUEUE_SIZE, .config_size = VIRTIO_BLK_CONFIG_SIZE,
		.pci_class = 0x010000, .features = b->features,
	};
	b->pci_ready = true; /* virtio_pci_destroy is safe from here on */
	int ret = virtio_pci_init(&b->pci, &info, &blk_ops, b, cfg, mem, vm_fd, routes, loop, mmio,
				  window, err);
	if (ret)
		return ret;
	if (loop && be->event_fd >= 0) {
		b->io_handler = (struct evloop_handler){ on_io_event, b };
		ret = evloop_add(loop, be->event_fd, EPOLLIN, &b->io_handler);
		if (ret)
			return error_set(err, ret, "%s: epoll: %s", b->name, strerror(-ret));
		b->loop = loop;
		b->io_registered = true;
	}
	return 0;
}

static void blk_resume(void *opaque)
{
	struct virtio_blk *b = opaque;
	for (uint16_t qi = 0; qi < b->nqueues; qi++)
		virtio_pci_kick(&b->pci, qi);
}

int virtio_blk_set_limit(struct virtio_blk *b, const struct rate_limit_opts *o,
			 struct evloop *loop, struct error *err)
{
	return rate_limiter_init(&b->limiter, o, loop, blk_resume, b, b->name, err);
}

int virtio_blk_update_limit(struct virtio_blk *b, const struct rate_limit_opts *o,
			    struct error *err)
{
	pthread_mutex_lock(&b->pci.lock);
	int ret = rate_limiter_update(&b->limiter, o, b->name, err);
	pthread_mutex_unlock(&b->pci.lock);
	return ret;
}

int virtio_blk_resize(struct virtio_blk *b)
{
	pthread_mutex_lock(&b->pci.lock);
	uint64_t old = b->be->size;
	int ret = blk_backend_refresh_size(b->be);
	if (ret < 0)
		log_warn("%s: cannot read the image's size again: %s", b->name, strerror(-ret));
	else if (ret == 1) {
		log_info("%s: image size %" PRIu64 " -> %" PRIu64 " bytes; telling the driver",
			 b->name, old, b->be->size);
		virtio_pci_config_changed(&b->pci);
	}
	pthread_mutex_unlock(&b->pci.lock);
	return ret;
}

void virtio_blk_destroy(struct virtio_blk *b)
{
	rate_limiter_destroy(&b->limiter);
	if (b->be) {
		blk_backend_cancel(b->be); /* nothing else runs now: no lock needed */
		if (b->io_registered)
			evloop_del(b->loop, b->be->event_fd);
		blk_backend_close(b->be);
		b->be = NULL;
	}
	b->io_registered = false;
	if (b->pci_ready)
		virtio_pci_destroy(&b->pci);
	b->pci_ready = false;
	for (uint16_t q = 0; q < VIRTIO_BLK_MAX_QUEUES; q++)
		for (unsigned c = 0; c < VBLK_REQ_CHUNKS; c++) {
			free(b->req_chunks[q][c]);
			b->req_chunks[q][c] = NULL;
		}
}

int virtio_blk_swap_backend(struct virtio_blk *b, struct blk_backend *be,
			    struct blk_backend **old, struct error *err)
{
	pthread_mutex_lock(&b->pci.lock);
	int ret = 0;
	if (b->loop && be->event_fd >= 0) {
		b->io_handler = (struct evloop_handler){ on_io_event, b };
		ret = evloop_add(b->loop, be->event_fd, EPOLLIN, &b->io_handler);
	}
	if (ret) {
		pthread_mutex_unlock(&b->pci.lock);
		return error_set(err, ret, "%s: epoll: %s", b->name, strerror(-ret));
	}
	if (b->io_registered)
		evloop_del(b->loop, b->be->event_fd);
	b->io_registered = b->loop && be->event_fd >= 0;
	log_info("%s: image replaced (%" PRIu64 " -> %" PRIu64 " bytes); telling the driver",
		 b->name, b->be->size, be->size);
	*old = b->be;
	b->be = be;
	virtio_pci_config_changed(&b->pci);
	pthread_mutex_unlock(&b->pci.lock);
	return 0;
}
