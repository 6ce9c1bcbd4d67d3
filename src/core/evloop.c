/* Event loop: one epoll instance, its dispatch to registered handlers, and bounded busy-polling of armed sources. */
#include "core/evloop.h"
#include "util/clock.h"

#include <errno.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define EVLOOP_BATCH 32
/* Polling gives the fds a look at least this often (stop requests, completions, timers). */
#define EVLOOP_POLL_SLICE_NS 50000ull

int evloop_init(struct evloop *l)
{
	l->owner_known = false;
	l->pollers = NULL;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	return l->epfd < 0 ? -errno : 0;
}

void evloop_destroy(struct evloop *l)
{
	if (l->epfd >= 0)
		close(l->epfd);
	l->epfd = -1;
	l->pollers = NULL;
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

bool evloop_poll_arm(struct evloop *l, struct evloop_poller *p, uint64_t window_ns)
{
	if (!l->owner_known || !pthread_equal(l->owner, pthread_self()))
		return false;
	p->window_ns = window_ns;
	p->deadline_ns = clock_now_ns() + window_ns;
	if (!p->armed) {
		p->armed = true;
		p->next = l->pollers;
		l->pollers = p;
	}
	return true;
}

void evloop_poll_disarm(struct evloop *l, struct evloop_poller *p)
{
	for (struct evloop_poller **pp = &l->pollers; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	}
	p->armed = false;
	p->next = NULL;
}

/* One slice of busy-polling. Returns how many polls made progress. */
static int poll_slice(struct evloop *l)
{
	uint64_t start = clock_now_ns(), now = start;
	int progress = 0;
	while (l->pollers && now - start < EVLOOP_POLL_SLICE_NS) {
		for (struct evloop_poller *p = l->pollers, *next; p; p = next) {
			next = p->next; /* poll/expire may arm others (at the head) */
			if (p->poll(p->opaque)) {
				progress++;
				p->deadline_ns = clock_now_ns() + p->window_ns;
			} else if (now >= p->deadline_ns) {
				evloop_poll_disarm(l, p);
				p->expire(p->opaque); /* may arm p again */
			}
		}
		__builtin_ia32_pause();
		now = clock_now_ns();
	}
	return progress;
}

int evloop_run_once(struct evloop *l, int timeout_ms)
{
	if (!l->owner_known) {
		l->owner = pthread_self();
		l->owner_known = true;
	}
	int polled = l->pollers ? poll_slice(l) : 0;
	struct epoll_event evs[EVLOOP_BATCH];
	int n = epoll_wait(l->epfd, evs, EVLOOP_BATCH, l->pollers ? 0 : timeout_ms);
	if (n < 0)
		return errno == EINTR ? polled : -errno;
	for (int i = 0; i < n; i++) {
		struct evloop_handler *h = evs[i].data.ptr;
		h->cb(h->opaque, evs[i].events);
	}
	return n + polled;
}
