/* Rate limiter of a device: bytes/s and ops/s token buckets between a queue and its backend. */
#ifndef MSIVM_DEVICES_RATE_LIMITER_H
#define MSIVM_DEVICES_RATE_LIMITER_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "util/token_bucket.h"
#include "core/evloop.h"

/* --disk/--net/--rng bps=SIZE,ops=N: 0 means no limit. */
struct rate_limit_opts {
	uint64_t bytes_per_s;
	uint64_t ops_per_s;
};

/* As Firecracker's rate limiter: a request passes when both buckets hold its
 * cost; otherwise the device gives the chain back (virtq_unpop) and stops,
 * and a one-shot timer calls `resume` when the tokens are there. */
struct rate_limiter {
	struct token_bucket bytes, ops;
	bool active;                 /* a limit is set */
	bool waiting;                /* the timer is armed: the device is throttled */
	int timer_fd;
	struct evloop *loop;
	struct evloop_handler timer_handler;
	void (*resume)(void *opaque);  /* I/O thread, no lock held */
	void *opaque;
	uint64_t throttled;          /* times a request had to wait */
};

/* Sets up the limiter; with no limit in `o` it stays inactive and needs no
 * timer. `resume` runs on the event-loop thread when a throttled device may
 * go on (it takes the device's lock itself). Returns 0 or -errno with a
 * message. rate_limiter_destroy is safe after a failure. */
int rate_limiter_init(struct rate_limiter *rl, const struct rate_limit_opts *o,
		      struct evloop *loop, void (*resume)(void *opaque), void *opaque,
		      const char *name, struct error *err);
/* Releases the timer; a no-op on a zeroed (never initialised) limiter. */
void rate_limiter_destroy(struct rate_limiter *rl);

/* One request of `bytes` (device lock held): true if it may go now (its
 * tokens are taken); false if the device must stop and give the request
 * back, in which case the resume timer is armed. Always true when inactive. */
bool rate_limiter_admit(struct rate_limiter *rl, uint64_t bytes);

#endif
