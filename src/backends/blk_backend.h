/* Block backends: host I/O on a raw disk image (read, write, flush, discard, write-zeroes); no virtio types here. */
#ifndef MSIVM_BACKENDS_BLK_BACKEND_H
#define MSIVM_BACKENDS_BLK_BACKEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "util/error.h"

#define BLK_SECTOR_SIZE 512u
#define BLK_MAX_STALLS  16u   /* EINTR/EAGAIN in a row before an I/O fails */

/* Cache mode: writeback through the host page cache (no O_DIRECT). Data is
 * durable only after BLK_OP_FLUSH (fdatasync) succeeded; a caller that needs
 * writethrough issues a flush after each write. */
enum blk_op {
	BLK_OP_READ,
	BLK_OP_WRITE,
	BLK_OP_FLUSH,          /* fdatasync */
	BLK_OP_DISCARD,        /* file: fallocate PUNCH_HOLE (reads as zeroes afterwards);
				* block device: BLKDISCARD (contents afterwards unspecified) */
	BLK_OP_WRITE_ZEROES,   /* file: fallocate ZERO_RANGE (blocks stay allocated);
				* block device: BLKZEROOUT */
};

enum blk_engine {
	BLK_ENGINE_AUTO,       /* io_uring if io_uring_queue_init works, else sync */
	BLK_ENGINE_URING,
	BLK_ENGINE_SYNC,
	BLK_ENGINE_N
};

/* The engines' spellings, by value ("uring", "sync"; auto has none: NULL). */
extern const char *const blk_engine_names[BLK_ENGINE_N];

/* One I/O. The caller owns it; the backend uses it from blk_backend_submit
 * until `done` has run (exactly once). */
struct blk_io {
	enum blk_op op;
	uint64_t offset;           /* bytes from the start of the image */
	uint64_t len;              /* READ/WRITE: total of the iovecs; DISCARD/WRITE_ZEROES: range */
	struct iovec *iov;         /* READ/WRITE buffers (caller's array, advanced on short transfers) */
	int iovcnt;
	/* Completion: `result` is the bytes transferred (== len) for READ/WRITE,
	 * 0 for the other operations, or -errno. */
	void (*done)(void *cookie, int64_t result);
	void *cookie;
	/* Backend state while in flight. */
	uint64_t progress;         /* bytes already transferred */
	unsigned stalls;           /* EINTR/EAGAIN results in a row */
	int64_t deferred_res;      /* sync engine: -ECANCELED once a queued transfer is given up */
	struct blk_io *next_deferred;
	/* io_uring engine: the attempt in flight covers iov[0..chunk_cnt), the last of them cut
	 * chunk_cut bytes short (0: none cut); restored when the attempt completes. */
	int chunk_cnt;
	size_t chunk_cut;
};

/* What the host says about the image's blocks, in bytes (0: unknown). */
struct blk_topology {
	uint32_t logical_block;    /* block device: BLKSSZGET; file: 512 */
	uint32_t physical_block;   /* block device: BLKPBSZGET; file: st_blksize, power of two in [512, 4096] */
	uint32_t alignment_offset; /* block device: BLKALIGNOFF; file: 0 */
	uint32_t min_io;           /* block device: BLKIOMIN; file: physical_block */
	uint32_t opt_io;           /* block device: BLKIOOPT; file: 0 */
};

/* Largest discard / write-zeroes range one I/O of a block device covers: each
 * is one ioctl run inline on the I/O thread (BLKZEROOUT may write the zeroes
 * itself), so they are bounded. Files have no bound of their own. */
#define BLK_BDEV_MAX_DISCARD     (256u << 20)
#define BLK_BDEV_MAX_WRITE_ZEROES (16u << 20)

struct blk_backend;

/* An engine: how one attempt of an operation reaches the host. Every hook
 * is called with the owner's lock held (one caller at a time). */
struct blk_engine_ops {
	const char *name;
	/* Starts one attempt at io->offset + io->progress on io->iov/iovcnt.
	 * Returns 1 with *res set (bytes or -errno) if it completed inline, 0 if
	 * the result will come through blk_attempt_done from `poll`, or -errno
	 * if it could not be started. */
	int (*start)(struct blk_backend *b, struct blk_io *io, int64_t *res);
	/* Hands started attempts to the host (batching); may report attempts that completed
	 * meanwhile through blk_attempt_done. Optional. */
	void (*unplug)(struct blk_backend *b);
	/* Reports finished attempts through blk_attempt_done; with `wait`, blocks
	 * until at least one finished. Returns how many were reported, or -errno. */
	int (*poll)(struct blk_backend *b, bool wait);
	/* Gives up attempts that have not started (their results come through
	 * poll as -ECANCELED); those already running finish. Optional. */
	void (*cancel)(struct blk_backend *b);
	/* Releases the engine's state (nothing is in flight). */
	void (*close)(struct blk_backend *b);
};

struct blk_backend {
	const struct blk_engine_ops *ops;
	void *priv;                /* the engine's state */
	int fd;                    /* the image: O_RDWR, or O_RDONLY when ro */
	int event_fd;              /* readable when blk_backend_complete has work; -1: completions are inline */
	uint64_t size;             /* bytes, a multiple of BLK_SECTOR_SIZE */
	bool ro;
	bool blkdev;               /* a block device (else a regular file) */
	bool can_discard;          /* file: PUNCH_HOLE probed at open; block device: discard_max_bytes in sysfs */
	bool can_write_zeroes;     /* file: ZERO_RANGE probed at open; block device: always (BLKZEROOUT) */
	bool discard_zeroes;       /* a discarded range reads as zeroes (files only) */
	uint64_t max_discard;      /* bytes one DISCARD may cover (UINT64_MAX: no limit) */
	uint64_t max_write_zeroes; /* bytes one WRITE_ZEROES may cover (UINT64_MAX: no limit) */
	/* What one READ/WRITE may carry: the engines pass at most IOV_MAX iovecs
	 * to one preadv/pwritev (or readv/writev SQE) and resubmit the rest as
	 * a short transfer, and one iovec may hold up to MAX_RW_COUNT bytes
	 * (INT_MAX rounded down to a page). A device keeps its own limits at or
	 * below these, so a request never needs more than one attempt. */
	uint32_t max_segs;         /* iovecs per attempt: IOV_MAX */
	uint32_t max_seg_bytes;    /* bytes per iovec: 1 GiB (below MAX_RW_COUNT) */
	struct blk_topology topo;
	uint32_t inflight;         /* attempts started and not yet reported */
	bool cancelling;           /* blk_backend_cancel is draining: a transfer whose attempt
				    * completes ends there (-ECANCELED), no further chunk starts */
	uint64_t short_transfers;  /* partial reads/writes whose remainder was resubmitted */
	uint64_t retries;          /* EINTR/EAGAIN resubmissions */
	/* io_uring engine: small writes run inline with pwritev, because the filesystem cannot
	 * write its page cache without blocking and io_uring would hand each one to a worker. */
	bool inline_writes;
};

struct blk_open_cfg {
	const char *path;
	bool ro;
	enum blk_engine engine;
	unsigned depth;            /* most I/Os in flight at once (io_uring ring size) */
};

/* Parses "uring" or "sync". Returns 0 or -EINVAL. */
int blk_engine_parse(const char *s, enum blk_engine *out);

/* Opens a raw image: regular file or block device, size a multiple of 512,
 * locked (shared when ro, exclusive otherwise) against other writers; on a
 * writable regular file, DISCARD and WRITE_ZEROES support is probed with
 * fallocate past the end of the data (contents, size and allocation stay as
 * they were; mtime changes); on a writable block device, DISCARD is on if
 * /sys/dev/block/M:m/queue/discard_max_bytes (or its whole disk's, for a
 * partition) is not 0, WRITE_ZEROES always (BLKZEROOUT writes the zeroes if
 * the device cannot); the topology comes from the BLK* ioctls (block
 * device) or fstat (file); then the engine. AUTO falls back to sync if io_uring is
 * unavailable; an explicit URING does not. Returns 0 and *out, or -errno with
 * a message naming the file. */
int blk_backend_open(struct blk_backend **out, const struct blk_open_cfg *cfg, struct error *err);

/* The sync engine: each attempt is done inline, except that a read or write
 * with more than BLK_SYNC_CHUNK bytes left is queued and done a chunk at a
 * time, a few chunks per turn of the event loop (through event_fd), so one
 * request of a hundred megabytes cannot hold the I/O thread. Returns 0 or
 * -errno. */
int blk_sync_init(struct blk_backend *b, struct error *err);
#define BLK_SYNC_CHUNK (1u << 20)

/* Reads the image's size again (a file or block device that grew or shrank under a running
 * VM). Returns 1 and updates b->size if it changed, 0 if not, or -errno (the size is then
 * kept; a size that is not a multiple of 512 is -EINVAL). */
int blk_backend_refresh_size(struct blk_backend *b);

/* Cancels what has not started, waits for the rest (their callbacks run),
 * flushes a writable image and closes. NULL is a no-op. */
void blk_backend_close(struct blk_backend *b);

/* For a device reset or the end of the VM: cancels the I/Os that have not
 * started (they complete with -ECANCELED) and waits for the ones running, so
 * a guest's queue of gigabytes cannot hold the I/O thread. */
void blk_backend_cancel(struct blk_backend *b);

/* Starts `io`; its callback runs exactly once, possibly before this returns
 * (sync engine, or an error), so the caller must not touch `io` afterwards
 * unless its callback says so. Short transfers are resubmitted for the
 * remainder, EINTR/EAGAIN retried (at most BLK_MAX_STALLS in a row); a read or
 * write that makes no progress (end of file) fails with -EIO. Call
 * blk_backend_unplug after a batch of submissions. */
void blk_backend_submit(struct blk_backend *b, struct blk_io *io);

/* Hands the submitted batch to the host. The io_uring engine also reports, before it returns,
 * the attempts that completed during the submit (their callbacks run here): the caller must be
 * ready for completions on any queue, as after blk_backend_complete. */
void blk_backend_unplug(struct blk_backend *b);

/* The event loop's poll/complete step: runs the callbacks of finished I/Os
 * without blocking and resubmits remainders. Returns how many attempts were
 * reported, or -errno. */
int blk_backend_complete(struct blk_backend *b);

/* Blocks until nothing is in flight, running every callback. */
void blk_backend_drain(struct blk_backend *b);

/* ---- for engines ---- */

/* Opens and probes the image into *b (ops, priv unset; event_fd -1). Returns 0 or -errno with a message. */
int blk_file_open(struct blk_backend *b, const struct blk_open_cfg *cfg, struct error *err);

/* An engine reports a finished attempt started with `start` returning 0. */
void blk_attempt_done(struct blk_backend *b, struct blk_io *io, int64_t res);

/* Runs one attempt with plain syscalls (preadv/pwritev/fdatasync/fallocate;
 * BLKDISCARD, shrunk to whole logical blocks, and BLKZEROOUT on a block
 * device). Returns the bytes transferred, 0, or -errno. */
int64_t blk_sync_rw(struct blk_backend *b, struct blk_io *io);

/* The engines. blk_uring_init returns 0 or -errno (io_uring unavailable). */
extern const struct blk_engine_ops blk_sync_ops;
int blk_uring_init(struct blk_backend *b, unsigned depth, struct error *err);

#endif
