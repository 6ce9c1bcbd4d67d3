/* Block backend, sync engine: each attempt is one preadv/pwritev/fdatasync/fallocate, completed inline. */
#include "backends/blk_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/falloc.h>
#include <unistd.h>

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
		n = fallocate(b->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, (off_t)io->len);
		break;
	case BLK_OP_WRITE_ZEROES:
		n = fallocate(b->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off, (off_t)io->len);
		break;
	default:
		return -EINVAL;
	}
	return n < 0 ? -errno : n;
}

static int sync_start(struct blk_backend *b, struct blk_io *io, int64_t *res)
{
	*res = blk_sync_rw(b, io);
	return 1;
}

const struct blk_engine_ops blk_sync_ops = {
	.name = "sync",
	.start = sync_start,
};
