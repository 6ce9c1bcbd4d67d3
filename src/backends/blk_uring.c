/* Block backend, io_uring engine: attempts become SQEs, submitted per batch and reaped right after when done; later CQEs signal an eventfd the event loop polls; block-device discard/write-zeroes, and small writes where the filesystem cannot write without blocking, run inline. */
/* Link circle, on purpose (blk_backend.c, blk_sync.c, blk_uring.c): the core picks an engine and owns the retry of short transfers, which every engine reports to (blk_attempt_done); io_uring hands what would block to the sync engine's inline I/O. */
#include "backends/blk_backend.h"

#include <errno.h>
#include <limits.h>
#include <linux/falloc.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/log.h"

#define URING_MIN_ENTRIES 8u
#define URING_MAX_ENTRIES 4096u
#define URING_INLINE_MAX  (1u << 20)  /* larger reads/writes go to io_uring's workers */
/* Bytes per attempt of a READ/WRITE: a bigger one runs a chunk at a time (the rest as a short
 * transfer), so a reset or a stop waits for one chunk in flight, not for the whole of a guest's
 * 64 MiB request (seconds where memory copies are slow, as in a nested TCG host). */
#define URING_CHUNK       (2u << 20)

struct uring_priv {
	struct io_uring ring;
	bool has_fallocate;        /* IORING_OP_FALLOCATE (5.6+); else fallocate runs inline */
	bool eventfd_toggle;       /* IORING_CQ_EVENTFD_DISABLED works (5.8+): unplug reaps inline */
	struct ratelimit rl;
};

static void submit_all(struct uring_priv *u)
{
	while (io_uring_sq_ready(&u->ring)) {
		int r = io_uring_submit(&u->ring);
		if (r == -EINTR)
			continue;
		if (r < 0)
			log_ratelimited(&u->rl, LOG_WARN, "disk backend: io_uring_submit: %s; retrying "
					"at the next completion", strerror(-r));
		if (r <= 0)
			return;
	}
}

/* Cuts io's iovecs (at most IOV_MAX of them) to URING_CHUNK bytes for one attempt; returns how
 * many the attempt takes. uncut_chunk puts the cut iovec back when the attempt completes. */
static unsigned cut_chunk(struct blk_io *io)
{
	uint64_t room = URING_CHUNK;
	int i = 0;
	io->chunk_cut = 0;
	while (i < io->iovcnt && i < IOV_MAX && room) {
		struct iovec *v = &io->iov[i++];
		if (v->iov_len > room) {
			io->chunk_cut = v->iov_len - room;
			v->iov_len = room;
		}
		room -= v->iov_len;
	}
	io->chunk_cnt = i;
	return (unsigned)i;
}

static void uncut_chunk(struct blk_io *io)
{
	if (io->chunk_cut && io->chunk_cnt > 0)
		io->iov[io->chunk_cnt - 1].iov_len += io->chunk_cut;
	io->chunk_cut = 0;
}

/* Reports every completion already in the CQ. Returns how many. */
static int reap(struct blk_backend *b)
{
	struct uring_priv *u = b->priv;
	int n = 0;
	struct io_uring_cqe *cqe;
	while (io_uring_peek_cqe(&u->ring, &cqe) == 0) {
		struct blk_io *io = io_uring_cqe_get_data(cqe);
		int64_t res = cqe->res;
		io_uring_cqe_seen(&u->ring, cqe);
		n++;
		if (!io) { /* the cancel request itself */
			if (b->inflight)
				b->inflight--;
			continue;
		}
		uncut_chunk(io);
		blk_attempt_done(b, io, res); /* may queue a remainder: submitted by the caller */
	}
	return n;
}

#define UNPLUG_ROUNDS 4u   /* submit + reap rounds per unplug (remainders resubmitted) */

/* Submits the batch and reports, right here, what completed inside the submit (buffered I/O on
 * cached pages does): no event-loop round trip, and the interrupt goes out with the batch. The
 * CQ eventfd is off meanwhile; once it is on again the CQ is looked at once more, so a
 * completion that came in between is reaped now, and any later one signals the eventfd. */
static void uring_unplug(struct blk_backend *b)
{
	struct uring_priv *u = b->priv;
	bool toggled = u->eventfd_toggle && io_uring_cq_eventfd_toggle(&u->ring, false) == 0;
	for (unsigned i = 0; i < UNPLUG_ROUNDS && io_uring_sq_ready(&u->ring); i++) {
		submit_all(u);
		if (toggled)
			reap(b);
	}
	if (toggled) {
		io_uring_cq_eventfd_toggle(&u->ring, true);
		reap(b);
		submit_all(u);
	}
}

static int uring_start(struct blk_backend *b, struct blk_io *io, int64_t *res)
{
	struct uring_priv *u = b->priv;
	bool falloc = io->op == BLK_OP_DISCARD || io->op == BLK_OP_WRITE_ZEROES;
	/* No fallocate opcode, or a block device (BLKDISCARD/BLKZEROOUT have no
	 * opcode before Linux 6.12; one I/O covers at most BLK_BDEV_MAX_*): the
	 * sync engine's syscall, inline. */
	/* A write io_uring would hand to a worker anyway (b->inline_writes): pwritev here costs a
	 * page-cache copy instead of a handoff and a second wake-up of the I/O thread. Bounded:
	 * a device's budget of bytes per loop turn covers these too. */
	bool inline_write = io->op == BLK_OP_WRITE && b->inline_writes &&
			    io->len - io->progress <= URING_INLINE_MAX;
	if ((falloc && (!u->has_fallocate || b->blkdev)) || inline_write) {
		*res = blk_sync_rw(b, io);
		return 1;
	}
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	if (!sqe) {
		uring_unplug(b);
		if (!(sqe = io_uring_get_sqe(&u->ring)))
			return -EBUSY;
	}
	off_t off = (off_t)(io->offset + io->progress);
	io->chunk_cut = 0;
	unsigned cnt = io->op == BLK_OP_READ || io->op == BLK_OP_WRITE ? cut_chunk(io) : 0;
	switch (io->op) {
	case BLK_OP_READ:
		io_uring_prep_readv(sqe, b->fd, io->iov, cnt, (__u64)off);
		break;
	case BLK_OP_WRITE:
		io_uring_prep_writev(sqe, b->fd, io->iov, cnt, (__u64)off);
		break;
	case BLK_OP_FLUSH:
		io_uring_prep_fsync(sqe, b->fd, IORING_FSYNC_DATASYNC);
		break;
	case BLK_OP_DISCARD:
		io_uring_prep_fallocate(sqe, b->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off,
					(off_t)io->len);
		break;
	case BLK_OP_WRITE_ZEROES:
		io_uring_prep_fallocate(sqe, b->fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, off,
					(off_t)io->len);
		break;
	}
	/* A big buffered transfer would be copied inside io_uring_enter on the
	 * I/O thread: hand it to io_uring's workers instead. */
	if ((io->op == BLK_OP_READ || io->op == BLK_OP_WRITE) &&
	    io->len - io->progress > URING_INLINE_MAX)
		io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
	io_uring_sqe_set_data(sqe, io);
	return 0;
}

static int uring_poll(struct blk_backend *b, bool wait)
{
	struct uring_priv *u = b->priv;
	uint64_t v;
	if (read(b->event_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	/* Completions posted after the read signal the eventfd again. */
	int n = 0;
	for (;;) {
		n += reap(b);
		if (!wait || n > 0 || !b->inflight)
			return n;
		int r = io_uring_submit_and_wait(&u->ring, 1);
		if (r < 0 && r != -EINTR)
			return r;
	}
}

/* One ASYNC_CANCEL for every request of the ring: queued ones end with
 * -ECANCELED, running ones finish (drain waits for them). */
static void uring_cancel(struct blk_backend *b)
{
	struct uring_priv *u = b->priv;
	uring_unplug(b);
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	if (!sqe)
		return;
	io_uring_prep_cancel64(sqe, 0, IORING_ASYNC_CANCEL_ANY);
	io_uring_sqe_set_data(sqe, NULL); /* its own completion is skipped by poll */
	b->inflight++;
	uring_unplug(b);
}

static void uring_close(struct blk_backend *b)
{
	struct uring_priv *u = b->priv;
	io_uring_queue_exit(&u->ring);
	free(u);
	b->priv = NULL;
	if (b->event_fd >= 0)
		close(b->event_fd);
	b->event_fd = -1;
}

static const struct blk_engine_ops uring_ops = {
	.name = "uring",
	.start = uring_start,
	.unplug = uring_unplug,
	.poll = uring_poll,
	.cancel = uring_cancel,
	.close = uring_close,
};

/* Checks the opcodes the engine needs. Returns 0 or -EOPNOTSUPP. */
static int probe_ops(struct uring_priv *u, struct error *err)
{
	struct io_uring_probe *p = io_uring_get_probe_ring(&u->ring);
	if (!p)
		return error_set(err, -EOPNOTSUPP, "io_uring cannot report its opcodes");
	bool ok = io_uring_opcode_supported(p, IORING_OP_READV) &&
		  io_uring_opcode_supported(p, IORING_OP_WRITEV) &&
		  io_uring_opcode_supported(p, IORING_OP_FSYNC);
	u->has_fallocate = io_uring_opcode_supported(p, IORING_OP_FALLOCATE);
	io_uring_free_probe(p);
	return ok ? 0 : error_set(err, -EOPNOTSUPP, "io_uring lacks readv/writev/fsync");
}

/* Can the kernel write this image's page cache without blocking (RWF_NOWAIT)? ext4, for one,
 * cannot, and io_uring then hands every buffered write to one of its workers. Probed by writing
 * the image's first byte back onto itself (before any guest runs); a block device, a read-only
 * or an empty image counts as able. */
static bool writes_nowait(const struct blk_backend *b)
{
	uint8_t byte;
	if (b->ro || b->blkdev || pread(b->fd, &byte, 1, 0) != 1)
		return true;
	struct iovec v = { &byte, 1 };
	return !(pwritev2(b->fd, &v, 1, 0, RWF_NOWAIT) < 0 && errno == EOPNOTSUPP);
}

int blk_uring_init(struct blk_backend *b, unsigned depth, struct error *err)
{
	unsigned entries = URING_MIN_ENTRIES;
	while (entries < depth && entries < URING_MAX_ENTRIES)
		entries <<= 1;
	struct uring_priv *u = calloc(1, sizeof(*u));
	if (!u)
		return error_set(err, -ENOMEM, "out of memory");
	int ret = io_uring_queue_init(entries, &u->ring, 0);
	if (ret < 0) {
		free(u);
		return error_set(err, ret, "io_uring_queue_init: %s", strerror(-ret));
	}
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0)
		ret = error_set(err, -errno, "eventfd: %s", strerror(errno));
	else if ((ret = io_uring_register_eventfd(&u->ring, efd)) < 0)
		error_set(err, ret, "io_uring_register_eventfd: %s", strerror(-ret));
	else
		ret = probe_ops(u, err);
	if (!ret) {
		u->eventfd_toggle = io_uring_cq_eventfd_toggle(&u->ring, true) == 0;
		/* io_uring's workers copy what does not complete inline: at most
		 * half the host's CPUs, so a guest's flood of large requests leaves
		 * CPU for the vCPUs and the I/O thread. */
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned max[2] = { cpus > 1 ? (unsigned)(cpus / 2) : 1u, cpus > 1 ? (unsigned)(cpus / 2) : 1u };
		if (io_uring_register_iowq_max_workers(&u->ring, max) < 0)
			log_debug("disk: io_uring worker limit not supported");
	}
	if (ret) {
		if (efd >= 0)
			close(efd);
		io_uring_queue_exit(&u->ring);
		free(u);
		return ret;
	}
	b->priv = u;
	b->event_fd = efd;
	b->ops = &uring_ops;
	b->inline_writes = !writes_nowait(b);
	if (b->inline_writes)
		log_debug("disk: writes of up to %u bytes run inline (the filesystem cannot write "
			  "without blocking)", URING_INLINE_MAX);
	return 0;
}
