/* Event loop: one epoll instance and its dispatch to registered handlers. */
#include "vmm/evloop.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#define EVLOOP_BATCH 32

int evloop_init(struct evloop *l)
{
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	return l->epfd < 0 ? -errno : 0;
}

void evloop_destroy(struct evloop *l)
{
	if (l->epfd >= 0)
		close(l->epfd);
	l->epfd = -1;
}

int evloop_add(struct evloop *l, int fd, uint32_t events, struct evloop_handler *h)
{
	struct epoll_event ev = { .events = events, .data.ptr = h };
	return epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int evloop_del(struct evloop *l, int fd)
{
	return epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL) ? -errno : 0;
}

int evloop_run_once(struct evloop *l, int timeout_ms)
{
	struct epoll_event evs[EVLOOP_BATCH];
	int n = epoll_wait(l->epfd, evs, EVLOOP_BATCH, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (int i = 0; i < n; i++) {
		struct evloop_handler *h = evs[i].data.ptr;
		h->cb(h->opaque, evs[i].events);
	}
	return n;
}
