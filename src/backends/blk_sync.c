/* Block backend, sync engine: each attempt is one preadv/pwritev/fdatasync/fallocate/BLK ioctl, inline; big transfers a chunk per loop turn. */
/* Link circle, on purpose (blk_backend.c, blk_sync.c, blk_uring.c): the core picks an engine and owns the retry of short transfers, which every engine reports to (blk_attempt_done); io_uring hands what would block to the sync engine's inline I/O. */
#include "backends/blk_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/log.h"

#define SYNC_CHUNKS_PER_TURN 4

/* Chunks done and waiting to be reported on the next turn. */
struct sync_priv {
	struct blk_io *head, *tail;
};

/* BLKDISCARD wants whole logical blocks: a discard is a hint, so the range
 * shrinks to the blocks it covers entirely (nothing left: done). */
static int bdev_discard(struct blk_backend *b, uint64_t off, uint64_t len)
{
	uint64_t bs = b->topo.logical_block ? b->topo.logical_block : BLK_SECTOR_SIZE;
	uint64_t start = (off + bs - 1) / bs * bs, end = (off + len) / bs * bs;
	if (end <= start)
		return 0;
	uint64_t range[2] = { start, end - start };
	return ioctl(b->fd, BLKDISCARD, range);
}

int64_t blk_sync_rw(struct blk_backend *b, struct blk_io *io)
{
	off_t off = (off_t)(io->offset + io->progress);
	int cnt = io->iovcnt < IOV_MAX ? io->iovcnt : IOV_MAX; /* the rest is a short transfer */
	ssize_t n;
	switch (io->op) {
	case BLK_OP_READ:
		n = preadv(b->fd, io->iov, cnt, off);
		break;
	case BLK_OP_WRITE:
		n = pwritev(b->fd, io->iov, cnt, off);
		break;
	case BLK_OP_FLUSH:
		n = fdatasync(b->fd);
		break;
	case BLK_OP_DISCARD:
		if (b->blkdev)
			n = bdev_discard(b, (uint64_t)off, io->len);
		else
			n = fallocate(b->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
				      (off_t)io->len);
		break;
	case BLK_OP_WRITE_ZEROES:
		if (b->blkdev) {
			uint64_t range[2] = { (uint64_t)off, io->len };
			n = ioctl(b->fd, BLKZEROOUT, range);
		} else {
			n = fallocate(b->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off,
				      (off_t)io->len);
		}
		break;
	default:
		return -EINVAL;
	}
	return n < 0 ? -errno : n;
}

/* One BLK_SYNC_CHUNK of io's remaining transfer (the iovecs cut there). */
static int64_t sync_chunk(struct blk_backend *b, struct blk_io *io)
{
	struct iovec v[IOV_MAX];
	int cnt = 0;
	uint64_t room = BLK_SYNC_CHUNK;
	for (int i = 0; i < io->iovcnt && i < IOV_MAX && room; i++, cnt++) {
		v[i] = io->iov[i];
		if (v[i].iov_len > room)
			v[i].iov_len = room;
		room -= v[i].iov_len;
	}
	off_t off = (off_t)(io->offset + io->progress);
	ssize_t n = io->op == BLK_OP_READ ? preadv(b->fd, v, cnt, off) : pwritev(b->fd, v, cnt, off);
	return n < 0 ? -errno : n;
}

static int sync_start(struct blk_backend *b, struct blk_io *io, int64_t *res)
{
	struct sync_priv *p = b->priv;
	bool data = io->op == BLK_OP_READ || io->op == BLK_OP_WRITE;
	if (!p || !data || io->len - io->progress <= BLK_SYNC_CHUNK) {
		*res = blk_sync_rw(b, io);
		return 1;
	}
	/* A big transfer: its chunks are done by sync_poll, a few per turn of
	 * the event loop. */
	io->deferred_res = 0;
	io->next_deferred = NULL;
	if (p->tail)
		p->tail->next_deferred = io;
	else
		p->head = io;
	p->tail = io;
	uint64_t one = 1;
	if (write(b->event_fd, &one, sizeof(one)) != sizeof(one))
		log_warn("disk backend: cannot signal a deferred chunk: %s", strerror(errno));
	return 0;
}

static int sync_poll(struct blk_backend *b, bool wait)
{
	struct sync_priv *p = b->priv;
	uint64_t v;
	if (read(b->event_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	/* At most SYNC_CHUNKS_PER_TURN chunks, oldest transfer first; the rest
	 * wait for the next turn. */
	struct blk_io *batch = p->head, *last = NULL;
	int n = 0;
	for (struct blk_io *io = p->head; io && n < SYNC_CHUNKS_PER_TURN; io = io->next_deferred) {
		last = io;
		n++;
	}
	if (!last)
		return 0;
	p->head = last->next_deferred;
	if (!p->head)
		p->tail = NULL;
	last->next_deferred = NULL;
	if (p->head) {
		uint64_t one = 1;
		if (write(b->event_fd, &one, sizeof(one)) != sizeof(one))
			log_warn("disk backend: cannot signal deferred chunks: %s", strerror(errno));
	}
	while (batch) {
		struct blk_io *next = batch->next_deferred;
		int64_t res = batch->deferred_res == -ECANCELED ? -ECANCELED : sync_chunk(b, batch);
		blk_attempt_done(b, batch, res); /* may queue the transfer's next chunk */
		batch = next;
	}
	return n;
}

/* Queued transfers end where they are: no further chunk is done. */
static void sync_cancel(struct blk_backend *b)
{
	struct sync_priv *p = b->priv;
	if (!p)
		return;
	for (struct blk_io *io = p->head; io; io = io->next_deferred)
		io->deferred_res = -ECANCELED;
}

static void sync_close(struct blk_backend *b)
{
	free(b->priv);
	b->priv = NULL;
	if (b->event_fd >= 0)
		close(b->event_fd);
	b->event_fd = -1;
}

const struct blk_engine_ops blk_sync_ops = {
	.name = "sync",
	.start = sync_start,
	.poll = sync_poll,
	.cancel = sync_cancel,
	.close = sync_close,
};

int blk_sync_init(struct blk_backend *b, struct error *err)
{
	struct sync_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return error_set(err, -ENOMEM, "out of memory");
	b->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->event_fd < 0) {
		free(p);
		return error_set(err, -errno, "eventfd: %s", strerror(errno));
	}
	b->priv = p;
	b->ops = &blk_sync_ops;
	return 0;
}
