/* Event loop: epoll over host fds (signals, stop requests, ioeventfds) and busy-poll sources for the I/O thread. */
#ifndef MSIVM_CORE_EVLOOP_H
#define MSIVM_CORE_EVLOOP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* A registered fd's callback. The handler struct is the caller's and must
 * stay valid until the fd is removed or the loop is destroyed. */
struct evloop_handler {
	void (*cb)(void *opaque, uint32_t events);
	void *opaque;
};

/* A busy-poll source (a virtqueue whose avail ring the loop watches instead of waiting for a
 * kick). While armed, the loop calls poll() between non-blocking looks at its fds; poll() does
 * the work it finds and returns true if it made progress, which keeps the source armed for
 * another window. A window without progress disarms it and calls expire(). The struct is the
 * caller's and must stay valid while armed. */
struct evloop_poller {
	bool (*poll)(void *opaque);
	void (*expire)(void *opaque);
	void *opaque;
	uint64_t window_ns, deadline_ns;
	bool armed;
	struct evloop_poller *next;
};

struct evloop {
	int epfd;
	pthread_t owner;            /* the thread that runs the loop (first evloop_run_once) */
	bool owner_known;
	struct evloop_poller *pollers; /* armed sources */
};

/* Returns 0 or -errno. */
int evloop_init(struct evloop *l);
void evloop_destroy(struct evloop *l);

/* Watches `fd` for `events` (EPOLLIN...). Returns 0 or -errno. */
int evloop_add(struct evloop *l, int fd, uint32_t events, struct evloop_handler *h);
/* Stops watching `fd`. Returns 0 or -errno. */
int evloop_del(struct evloop *l, int fd);

/* Arms `p` for `window_ns` from now (an armed one gets a new deadline). Only the loop's own
 * thread arms sources: from any other thread (a vCPU handling an MMIO notify, a test without a
 * running loop) this returns false and does nothing. */
bool evloop_poll_arm(struct evloop *l, struct evloop_poller *p, uint64_t window_ns);
/* Disarms `p` without calling expire() (the source is going away). Loop thread only. */
void evloop_poll_disarm(struct evloop *l, struct evloop_poller *p);

/* Runs armed pollers for at most EVLOOP_POLL_SLICE_NS, then waits up to timeout_ms (-1:
 * forever; 0 while a poller is still armed) and runs the callbacks of ready fds. Returns the
 * number of callbacks and successful polls, or -errno (EINTR is reported as 0). */
int evloop_run_once(struct evloop *l, int timeout_ms);

#endif
