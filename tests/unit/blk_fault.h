/* Test block engine: the sync engine with injected results (an error or a short count) and optional deferred completion. */
#ifndef MSIVM_TESTS_BLK_FAULT_H
#define MSIVM_TESTS_BLK_FAULT_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "backends/blk_backend.h"

#define FAULT_MAX     32
#define FAULT_PENDING 1024
#define FAULT_NOPS    5

struct fault_attempt {
	struct blk_io *io;
	int64_t res;
};

struct fault {
	/* Injected results, in order; each applies to the next attempt of its op. */
	struct { enum blk_op op; int64_t res; } inj[FAULT_MAX];
	unsigned ninj;
	unsigned calls[FAULT_NOPS];   /* attempts per op, injected or not */
	bool deferred;                /* results wait for poll (like io_uring) */
	struct fault_attempt pend[FAULT_PENDING];
	unsigned npend;
};

/* The next attempt of `op` returns `res`: -errno without touching the file,
 * or n >= 0: the real transfer cut to n bytes (a short read/write, 0 = EOF). */
static inline void fault_arm(struct fault *f, enum blk_op op, int64_t res)
{
	if (f->ninj < FAULT_MAX)
		f->inj[f->ninj++] = (typeof(f->inj[0])){ op, res };
}

static int64_t fault_short(struct blk_backend *b, struct blk_io *io, uint64_t n)
{
	struct iovec cut[IOV_MAX];
	int k = 0;
	for (int i = 0; i < io->iovcnt && i < IOV_MAX && n; i++, k++) {
		cut[k] = io->iov[i];
		if (cut[k].iov_len > n)
			cut[k].iov_len = n;
		n -= cut[k].iov_len;
	}
	if (k == 0)
		return 0;
	struct blk_io tmp = *io;
	tmp.iov = cut;
	tmp.iovcnt = k;
	return blk_sync_rw(b, &tmp);
}

static int fault_start(struct blk_backend *b, struct blk_io *io, int64_t *res)
{
	struct fault *f = b->priv;
	f->calls[io->op]++;
	int64_t r;
	unsigned i = 0;
	while (i < f->ninj && f->inj[i].op != io->op)
		i++;
	if (i < f->ninj) {
		int64_t inj = f->inj[i].res;
		memmove(&f->inj[i], &f->inj[i + 1], (f->ninj - i - 1) * sizeof(f->inj[0]));
		f->ninj--;
		r = inj < 0 ? inj : fault_short(b, io, (uint64_t)inj);
	} else {
		r = blk_sync_rw(b, io);
	}
	if (!f->deferred) {
		*res = r;
		return 1;
	}
	if (f->npend == FAULT_PENDING)
		return -EBUSY;
	f->pend[f->npend++] = (struct fault_attempt){ io, r };
	uint64_t one = 1;
	if (write(b->event_fd, &one, sizeof(one)) != sizeof(one))
		return -EIO;
	return 0;
}

static int fault_poll(struct blk_backend *b, bool wait)
{
	struct fault *f = b->priv;
	uint64_t v;
	if (read(b->event_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	_Static_assert(sizeof(f->pend) <= 32768, "the snapshot fits the stack");
	struct fault_attempt snap[FAULT_PENDING];
	unsigned n = f->npend;
	memcpy(snap, f->pend, n * sizeof(snap[0]));
	f->npend = 0; /* attempts restarted below queue up afresh */
	for (unsigned i = 0; i < n; i++)
		blk_attempt_done(b, snap[i].io, snap[i].res);
	return (int)n;
}

static void fault_close(struct blk_backend *b)
{
	if (b->event_fd >= 0)
		close(b->event_fd);
	b->event_fd = -1;
	free(b->priv);
	b->priv = NULL;
}

static const struct blk_engine_ops fault_ops = {
	.name = "fault",
	.start = fault_start,
	.poll = fault_poll,
	.close = fault_close,
};

/* Replaces the engine of a sync backend with the fault engine. */
static inline struct fault *fault_install(struct blk_backend *b, bool deferred)
{
	struct fault *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->deferred = deferred;
	if (b->ops && b->ops->close)
		b->ops->close(b); /* the sync engine's own state goes first */
	if (deferred) {
		b->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (b->event_fd < 0) {
			free(f);
			return NULL;
		}
	}
	b->ops = &fault_ops;
	b->priv = f;
	return f;
}

#endif
