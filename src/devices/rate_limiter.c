/* Rate limiter: admit a request against two token buckets, or arm a timer that resumes the device. */
#include "devices/rate_limiter.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"
#include "util/clock.h"

static void on_timer(void *opaque, uint32_t events)
{
	struct rate_limiter *rl = opaque;
	uint64_t n;
	if (read(rl->timer_fd, &n, sizeof(n)) != sizeof(n))
		return;
	__atomic_store_n(&rl->waiting, false, __ATOMIC_RELEASE);
	rl->resume(rl->opaque);
}

bool rate_limit_set(const struct rate_limit_opts *o)
{
	return (o->bytes.size && o->bytes.refill_ms) || (o->ops.size && o->ops.refill_ms);
}

static void set_buckets(struct rate_limiter *rl, const struct rate_limit_opts *o)
{
	uint64_t t = clock_now_ns();
	tb_init(&rl->bytes, o->bytes.size, o->bytes.refill_ms * 1000000ULL, o->bytes.one_time_burst, t);
	tb_init(&rl->ops, o->ops.size, o->ops.refill_ms * 1000000ULL, o->ops.one_time_burst, t);
	rl->active = tb_limited(&rl->bytes) || tb_limited(&rl->ops);
}

int rate_limiter_init(struct rate_limiter *rl, const struct rate_limit_opts *o,
		      struct evloop *loop, void (*resume)(void *opaque), void *opaque,
		      const char *name, struct error *err)
{
	memset(rl, 0, sizeof(*rl));
	rl->timer_fd = -1;
	set_buckets(rl, o);
	if (!loop)
		return 0;
	rl->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (rl->timer_fd < 0)
		return error_set(err, -errno, "%s: rate limiter timer: %s", name, strerror(errno));
	rl->loop = loop;
	rl->resume = resume;
	rl->opaque = opaque;
	rl->timer_handler = (struct evloop_handler){ on_timer, rl };
	int ret = evloop_add(loop, rl->timer_fd, EPOLLIN, &rl->timer_handler);
	if (ret) {
		close(rl->timer_fd);
		rl->timer_fd = -1;
		return error_set(err, ret, "%s: rate limiter timer: %s", name, strerror(-ret));
	}
	return 0;
}

int rate_limiter_update(struct rate_limiter *rl, const struct rate_limit_opts *o,
			const char *name, struct error *err)
{
	if (rl->timer_fd < 0)
		return error_set(err, -EINVAL, "%s: its rate limiter cannot change while it runs",
				 name);
	set_buckets(rl, o);
	if (__atomic_load_n(&rl->waiting, __ATOMIC_ACQUIRE)) {
		/* Throttled under the old limits: the timer resumes it now (a timer that fired
		 * meanwhile only resumes it twice). */
		struct itimerspec now = { .it_value = { 0, 1 } };
		if (timerfd_settime(rl->timer_fd, 0, &now, NULL))
			log_warn("%s: rate limiter: timerfd_settime: %s", name, strerror(errno));
	}
	return 0;
}

void rate_limiter_destroy(struct rate_limiter *rl)
{
	if (rl->loop && rl->timer_fd >= 0) { /* a zeroed limiter owns no fd */
		evloop_del(rl->loop, rl->timer_fd);
		close(rl->timer_fd);
	}
	rl->loop = NULL;
	rl->timer_fd = -1;
}

bool rate_limiter_admit(struct rate_limiter *rl, uint64_t bytes)
{
	if (!rl->active)
		return true;
	if (rl->waiting)
		return false; /* the timer will resume the device */
	uint64_t t = clock_now_ns();
	uint64_t wait = tb_wait_ns(&rl->bytes, bytes, t);
	uint64_t w_ops = tb_wait_ns(&rl->ops, 1, t);
	if (w_ops > wait)
		wait = w_ops;
	if (wait == 0) {
		tb_take(&rl->bytes, bytes, t);
		tb_take(&rl->ops, 1, t);
		return true;
	}
	rl->throttled++;
	if (rl->timer_fd >= 0) {
		struct itimerspec its = { .it_value = { (time_t)(wait / 1000000000ULL),
						       (long)(wait % 1000000000ULL) } };
		if (timerfd_settime(rl->timer_fd, 0, &its, NULL) == 0) {
			rl->waiting = true;
			return false;
		}
		log_warn("rate limiter: timerfd_settime: %s; not limiting", strerror(errno));
	}
	return true; /* without a timer nothing would resume the device: let it pass */
}
