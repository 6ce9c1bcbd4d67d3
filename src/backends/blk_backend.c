/* Block backend core: image open and probing, engine choice, retry of short and interrupted transfers. */
/* Link circle, on purpose (blk_backend.c, blk_sync.c, blk_uring.c): the core picks an engine and owns the retry of short transfers, which every engine reports to (blk_attempt_done); io_uring hands what would block to the sync engine's inline I/O. */
#include "backends/blk_backend.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/log.h"
#include "util/parse.h"

#define PROBE_LEN 4096
#define FILE_PHYS_MAX 4096u   /* st_blksize above this (NFS, ZFS records) is not a sector size */

const char *const blk_engine_names[BLK_ENGINE_N] = { NULL, "uring", "sync" };

int blk_engine_parse(const char *s, enum blk_engine *out)
{
	unsigned v;
	if (parse_word(s, blk_engine_names, BLK_ENGINE_N, &v))
		return -EINVAL;
	*out = (enum blk_engine)v;
	return 0;
}

/* Does fallocate `mode` work on this file? Tried on [size, size + PROBE_LEN)
 * with KEEP_SIZE: past the data, so nothing the guest can read changes. */
static bool probe_fallocate(int fd, uint64_t size, int mode)
{
	return fallocate(fd, mode | FALLOC_FL_KEEP_SIZE, (off_t)size, PROBE_LEN) == 0;
}

static bool pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* A file's blocks: 512-byte logical blocks, st_blksize as the physical
 * block (rounded down to a power of two, kept in [512, FILE_PHYS_MAX]). */
static void file_topology(const struct stat *st, struct blk_topology *t)
{
	uint64_t phys = BLK_SECTOR_SIZE;
	while (phys * 2 <= (uint64_t)st->st_blksize && phys * 2 <= FILE_PHYS_MAX)
		phys *= 2;
	*t = (struct blk_topology){ .logical_block = BLK_SECTOR_SIZE, .physical_block = (uint32_t)phys,
				    .min_io = (uint32_t)phys };
}

/* A block device's blocks from the BLK* ioctls; a failed or implausible
 * answer leaves that value at its default (512 for the block sizes, 0 for
 * the rest), so a device the kernel cannot describe still works. */
static void bdev_topology(int fd, const char *path, struct blk_topology *t)
{
	int lbs = 0, align = 0;
	unsigned int pbs = 0, min_io = 0, opt_io = 0;
	*t = (struct blk_topology){ .logical_block = BLK_SECTOR_SIZE, .physical_block = BLK_SECTOR_SIZE };
	if (ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs >= (int)BLK_SECTOR_SIZE && pow2((uint64_t)lbs))
		t->logical_block = (uint32_t)lbs;
	else
		log_debug("disk image '%s': BLKSSZGET: %d (%s); using 512", path, lbs, strerror(errno));
	if (ioctl(fd, BLKPBSZGET, &pbs) == 0 && pbs >= t->logical_block && pow2(pbs))
		t->physical_block = pbs;
	else
		t->physical_block = t->logical_block;
	if (ioctl(fd, BLKALIGNOFF, &align) == 0 && align > 0)
		t->alignment_offset = (uint32_t)align;
	if (ioctl(fd, BLKIOMIN, &min_io) == 0)
		t->min_io = min_io;
	if (ioctl(fd, BLKIOOPT, &opt_io) == 0)
		t->opt_io = opt_io;
}

/* Reads an unsigned number from the block device's queue directory in
 * sysfs (a partition's is its whole disk's, one level up). Returns 0 or -errno. */
static int bdev_queue_attr(dev_t rdev, const char *attr, uint64_t *out)
{
	char p[128];
	for (int up = 0; up < 2; up++) {
		snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/%squeue/%s", major(rdev), minor(rdev),
			 up ? "../" : "", attr);
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		char buf[32];
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return -EIO;
		buf[n] = 0;
		char *end;
		errno = 0;
		unsigned long long v = strtoull(buf, &end, 10);
		if (errno || end == buf)
			return -EINVAL;
		*out = v;
		return 0;
	}
	return -ENOENT;
}

static int image_size(int fd, const char *path, uint64_t *size, bool *regular,
		      struct stat *stp, struct error *err)
{
	struct stat st;
	if (fstat(fd, &st))
		return error_set(err, -errno, "disk image '%s': %s", path, strerror(errno));
	*regular = S_ISREG(st.st_mode);
	if (*regular) {
		*size = (uint64_t)st.st_size;
	} else if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, size))
			return error_set(err, -errno, "disk image '%s': BLKGETSIZE64: %s", path,
					 strerror(errno));
	} else {
		return error_set(err, -EINVAL, "disk image '%s' is not a regular file or block device",
				 path);
	}
	if (*size % BLK_SECTOR_SIZE)
		return error_set(err, -EINVAL, "disk image '%s' is %" PRIu64 " bytes, not a multiple "
				 "of %u", path, *size, BLK_SECTOR_SIZE);
	*stp = st;
	return 0;
}

int blk_backend_refresh_size(struct blk_backend *b)
{
	struct stat st;
	if (fstat(b->fd, &st))
		return -errno;
	uint64_t size;
	if (S_ISREG(st.st_mode))
		size = (uint64_t)st.st_size;
	else if (ioctl(b->fd, BLKGETSIZE64, &size))
		return -errno;
	if (size % BLK_SECTOR_SIZE)
		return -EINVAL;
	if (size == b->size)
		return 0;
	b->size = size;
	return 1;
}

int blk_file_open(struct blk_backend *b, const struct blk_open_cfg *cfg, struct error *err)
{
	b->fd = b->event_fd = -1;
	b->ro = cfg->ro;
	b->fd = open(cfg->path, (cfg->ro ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (b->fd < 0) {
		int e = errno;
		return error_set(err, -e, "cannot open disk image '%s': %s%s", cfg->path, strerror(e),
				 !cfg->ro && (e == EROFS || e == EACCES) ? " (add ,ro for read-only)" : "");
	}
	if (flock(b->fd, (cfg->ro ? LOCK_SH : LOCK_EX) | LOCK_NB))
		return errno == EWOULDBLOCK
			       ? error_set(err, -EBUSY, "disk image '%s' is in use (another disk or "
					   "process has it open%s)", cfg->path, cfg->ro ? " for writing" : "")
			       : error_set(err, -errno, "disk image '%s': flock: %s", cfg->path,
					   strerror(errno));
	bool regular = false;
	struct stat st = { 0 };
	int ret = image_size(b->fd, cfg->path, &b->size, &regular, &st, err);
	if (ret)
		return ret;
	b->blkdev = !regular;
	b->max_segs = IOV_MAX;
	b->max_seg_bytes = 1u << 30;
	b->max_discard = b->max_write_zeroes = UINT64_MAX;
	if (regular) {
		file_topology(&st, &b->topo);
		b->discard_zeroes = true;
	} else {
		bdev_topology(b->fd, cfg->path, &b->topo);
		b->max_discard = BLK_BDEV_MAX_DISCARD;
		b->max_write_zeroes = BLK_BDEV_MAX_WRITE_ZEROES;
	}
	if (!cfg->ro && !regular) {
		uint64_t max = 0;
		int r = bdev_queue_attr(st.st_rdev, "discard_max_bytes", &max);
		if (r)
			log_debug("disk image '%s': discard_max_bytes: %s; no discard", cfg->path,
				  strerror(-r));
		b->can_discard = !r && max > 0;
		if (b->can_discard && max < b->max_discard)
			b->max_discard = max;
		b->can_write_zeroes = true;
	}
	if (!cfg->ro && regular) {
		b->can_discard = probe_fallocate(b->fd, b->size, FALLOC_FL_PUNCH_HOLE);
		b->can_write_zeroes = probe_fallocate(b->fd, b->size, FALLOC_FL_ZERO_RANGE);
		/* ZERO_RANGE may have allocated the probed block past EOF (ext4 does);
		 * truncating to the same size frees it again. */
		if (b->can_write_zeroes && ftruncate(b->fd, (off_t)b->size))
			log_debug("disk image '%s': ftruncate after probing: %s", cfg->path,
				  strerror(errno));
	}
	return 0;
}

int blk_backend_open(struct blk_backend **out, const struct blk_open_cfg *cfg, struct error *err)
{
	struct blk_backend *b = calloc(1, sizeof(*b));
	if (!b)
		return error_set(err, -ENOMEM, "out of memory for disk '%s'", cfg->path);
	int ret = blk_file_open(b, cfg, err);
	if (!ret && cfg->engine != BLK_ENGINE_SYNC) {
		struct error uerr;
		ret = blk_uring_init(b, cfg->depth, &uerr);
		if (ret && cfg->engine == BLK_ENGINE_URING) {
			error_set(err, ret, "disk '%s': engine=uring: %s", cfg->path, uerr.msg);
		} else if (ret) {
			log_info("disk '%s': %s; using the sync engine", cfg->path, uerr.msg);
			ret = 0;
		}
	}
	if (!ret && !b->ops)
		ret = blk_sync_init(b, err);
	if (ret) {
		if (b->fd >= 0)
			close(b->fd);
		free(b);
		return ret;
	}
	*out = b;
	return 0;
}

void blk_backend_cancel(struct blk_backend *b)
{
	b->cancelling = true;
	if (b->inflight && b->ops->cancel)
		b->ops->cancel(b);
	blk_backend_drain(b);
	b->cancelling = false;
}

void blk_backend_close(struct blk_backend *b)
{
	if (!b)
		return;
	blk_backend_cancel(b);
	if (b->ops && b->ops->close)
		b->ops->close(b);
	/* Whatever the guest wrote is on stable storage when the VM ends (power
	 * off, reboot, signal), flushed or not. */
	if (b->fd >= 0 && !b->ro && fdatasync(b->fd))
		log_warn("disk backend: fdatasync at close: %s", strerror(errno));
	if (b->fd >= 0)
		close(b->fd);
	free(b);
}

static void finish(struct blk_io *io, int64_t result)
{
	io->done(io->cookie, result);
}

/* Drops `n` transferred bytes from the front of io's iovecs. */
static void advance(struct blk_io *io, uint64_t n)
{
	while (n && io->iovcnt > 0) {
		if (io->iov->iov_len <= n) {
			n -= io->iov->iov_len;
			io->iov++;
			io->iovcnt--;
		} else {
			io->iov->iov_base = (uint8_t *)io->iov->iov_base + n;
			io->iov->iov_len -= n;
			n = 0;
		}
	}
}

static bool is_data_op(const struct blk_io *io)
{
	return io->op == BLK_OP_READ || io->op == BLK_OP_WRITE;
}

/* What to do with an attempt's result: true to start another attempt,
 * false once `io` is finished (its callback has run). */
static bool settle(struct blk_backend *b, struct blk_io *io, int64_t res)
{
	if (res == -EINTR || res == -EAGAIN) {
		if (++io->stalls <= BLK_MAX_STALLS) {
			b->retries++;
			return true;
		}
		finish(io, res);
		return false;
	}
	if (res < 0 || !is_data_op(io)) {
		finish(io, res < 0 ? res : 0);
		return false;
	}
	uint64_t left = io->len - io->progress;
	if (res == 0 || (uint64_t)res > left) {
		finish(io, -EIO); /* end of file, or an engine reporting more than asked */
		return false;
	}
	io->progress += (uint64_t)res;
	if (io->progress == io->len) {
		finish(io, (int64_t)io->len);
		return false;
	}
	advance(io, (uint64_t)res);
	io->stalls = 0;
	b->short_transfers++;
	return true;
}

/* Starts attempts until one is in flight or `io` is finished. */
static void issue(struct blk_backend *b, struct blk_io *io)
{
	for (;;) {
		int64_t res = 0;
		int ret = b->ops->start(b, io, &res);
		if (ret == 0) {
			b->inflight++;
			return;
		}
		if (ret < 0)
			res = ret;
		if (!settle(b, io, res))
			return;
	}
}

void blk_backend_submit(struct blk_backend *b, struct blk_io *io)
{
	io->progress = 0;
	io->stalls = 0;
	if (is_data_op(io) && io->len == 0) {
		finish(io, 0);
		return;
	}
	if (b->ro && io->op != BLK_OP_READ && io->op != BLK_OP_FLUSH) {
		finish(io, -EROFS);
		return;
	}
	issue(b, io);
}

void blk_attempt_done(struct blk_backend *b, struct blk_io *io, int64_t res)
{
	if (b->inflight)
		b->inflight--;
	if (!settle(b, io, res))
		return;
	if (b->cancelling) /* a reset or the end of the VM waits for this chunk, not the rest */
		finish(io, -ECANCELED);
	else
		issue(b, io);
}

void blk_backend_unplug(struct blk_backend *b)
{
	if (b->ops->unplug)
		b->ops->unplug(b);
}

int blk_backend_complete(struct blk_backend *b)
{
	if (!b->ops->poll)
		return 0;
	int n = b->ops->poll(b, false);
	blk_backend_unplug(b); /* resubmitted remainders */
	return n;
}

void blk_backend_drain(struct blk_backend *b)
{
	while (b->inflight && b->ops->poll) {
		blk_backend_unplug(b);
		int n = b->ops->poll(b, true);
		if (n < 0 && n != -EINTR && n != -EAGAIN) {
			log_err("disk backend: %s while draining %u I/Os", strerror(-n), b->inflight);
			return;
		}
	}
}
