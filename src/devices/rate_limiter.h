/* Rate limiter of a device: bytes/s and ops/s token buckets between a queue and its backend. */
#ifndef MSIVM_DEVICES_RATE_LIMITER_H
#define MSIVM_DEVICES_RATE_LIMITER_H

#include <stdbool.h>
#include <stdint.h>

#include "util/error.h"
#include "util/token_bucket.h"
#include "core/evloop.h"

/* One of Firecracker's token buckets: `size` tokens, refilled from empty to full in
 * `refill_ms` ms, plus a `one_time_burst` spent first (util/token_bucket.h). msivm's bps=N is
 * {N, 1000, 0}: N per second. A size of 0 is no limit. */
struct rate_bucket_opts {
	uint64_t size;
	uint64_t refill_ms;
	uint64_t one_time_burst;
};

/* --disk/--net/--rng bps=, ops=: a bytes bucket and an ops bucket, either may be off. */
struct rate_limit_opts {
	struct rate_bucket_opts bytes, ops;
};

/* True when `o` limits anything. */
bool rate_limit_set(const struct rate_limit_opts *o);

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

/* Sets up the limiter; with no limit in `o` it stays inactive (its timer is made all the
 * same when there is a loop, so that rate_limiter_update can limit it later). `resume` runs on the event-loop thread when a throttled device may
 * go on (it takes the device's lock itself). Returns 0 or -errno with a
 * message. rate_limiter_destroy is safe after a failure. */
int rate_limiter_init(struct rate_limiter *rl, const struct rate_limit_opts *o,
		      struct evloop *loop, void (*resume)(void *opaque), void *opaque,
		      const char *name, struct error *err);
/* Replaces the limits of a limiter set up with a loop, with the device's lock held (the lock
 * rate_limiter_admit is called under): fresh, full buckets from now. A device throttled under
 * the old limits is resumed at once through its timer (on the event-loop thread, as always),
 * and its requests are admitted under the new ones. Returns 0, or -EINVAL with a message when
 * the limiter has no timer (set up without a loop). */
int rate_limiter_update(struct rate_limiter *rl, const struct rate_limit_opts *o,
			const char *name, struct error *err);

/* Releases the timer; a no-op on a zeroed (never initialised) limiter. */
void rate_limiter_destroy(struct rate_limiter *rl);

/* One request of `bytes` (device lock held): true if it may go now (its
 * tokens are taken); false if the device must stop and give the request
 * back, in which case the resume timer is armed. Always true when inactive. */
bool rate_limiter_admit(struct rate_limiter *rl, uint64_t bytes);

#endif
