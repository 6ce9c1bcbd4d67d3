/* Event loop: epoll over host fds (signals, stop requests, later ioeventfds) for the I/O thread. */
#ifndef MSIVM_VMM_EVLOOP_H
#define MSIVM_VMM_EVLOOP_H

#include <stdint.h>

/* A registered fd's callback. The handler struct is the caller's and must
 * stay valid until the fd is removed or the loop is destroyed. */
struct evloop_handler {
	void (*cb)(void *opaque, uint32_t events);
	void *opaque;
};

struct evloop {
	int epfd;
};

/* Returns 0 or -errno. */
int evloop_init(struct evloop *l);
void evloop_destroy(struct evloop *l);

/* Watches `fd` for `events` (EPOLLIN...). Returns 0 or -errno. */
int evloop_add(struct evloop *l, int fd, uint32_t events, struct evloop_handler *h);
/* Stops watching `fd`. Returns 0 or -errno. */
int evloop_del(struct evloop *l, int fd);

/* Waits up to timeout_ms (-1: forever) and runs the callbacks of ready fds.
 * Returns the number of callbacks run, or -errno (EINTR is reported as 0). */
int evloop_run_once(struct evloop *l, int timeout_ms);

#endif
