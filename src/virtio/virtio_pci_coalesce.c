/* Virtio-pci interrupt moderation (coalesce=): a queue's notification held briefly so that the completions that follow it go out with it. */
/* Link circle, on purpose (virtio_pci.c, _common.c, _coalesce.c, _poll.c): one transport, struct virtio_pci, split by size; its register file, interrupt moderation and polling each look queues up and kick through virtio_pci.c, which drives all three. */
#include "virtio/virtio_pci_common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "util/clock.h"

/*
 * Why: a driver that keeps many requests in flight (fio at queue depth 32) but whose requests
 * each complete at once (a page-cache hit through io_uring) gets one interrupt per request: the
 * first completion after its handler re-enabled callbacks crosses used_event. Each interrupt
 * costs the guest an injection, the handler and an EOI, and cuts into the loop that submits
 * the next requests. Holding the notification while the driver goes on submitting lets the
 * whole burst's completions go out with one interrupt.
 *
 * A driver that gives a batch at once and waits for all of it (the probe's blk experiments;
 * Linux's blk-mq when a plug submits several requests) is not held when that whole batch
 * completed together with nothing left in flight: nothing can join it but the driver's next
 * batch, which waits for this notification.
 *
 * The hold ends when no batch joined for the quiet time (three times the average gap between
 * joining batches; before any, the queue's reaction time from a notification to the next batch;
 * within [cap/64, cap]), when the cap passed since it began, or when half the ring is waiting. A driver that waits for each completion
 * before sending the next (queue depth 1) never joins a hold: each such miss doubles the
 * number of notifications sent at once before the next try (up to VPCI_HOLD_BACKOFF_MAX),
 * so at depth 1 at most one completion in VPCI_HOLD_BACKOFF_MAX + 1 waits.
 *
 * While a notification is held the driver's kicks are off too (unless poll= polls the queue):
 * the driver is still submitting, and each kick is an exit. The hold's timer looks at the avail
 * ring instead: what came is processed there, its completions join the notification, and the
 * hold goes on for another quiet time. When it ends, kicks are on again before the interrupt.
 */

static uint64_t cap_ns(const struct virtio_pci *t)
{
	return (uint64_t)t->cfg.coalesce_us * 1000u;
}

/* How long a hold waits for the next batch: three times the gap between joining batches once
 * there were any; before that, the queue's reaction time (a notification to the next batch),
 * which is what one try costs a driver that waits for each completion; within [cap/64, cap]. */
static uint64_t quiet_ns(const struct virtio_pci *t, const struct vpci_hold *h)
{
	uint64_t cap = cap_ns(t);
	uint64_t q = h->gap_ns ? 3 * h->gap_ns : h->react_ns ? h->react_ns : cap / 16;
	if (q < cap / 64)
		q = cap / 64;
	return q > cap ? cap : q;
}

static uint64_t average(uint64_t avg, uint64_t sample)
{
	return avg ? (7 * avg + sample) / 8 : sample;
}

/* Only a notification after which the next completion tries a hold is timed: a queue that backs
 * off (depth 1) reads no clock per completion, which costs a system call where the host's
 * clocksource is not the TSC (the nested rig's L1 reads its HPET). */
void vpci_hold_sent(struct vpci_queue *vq)
{
	if (vq->hold.timer_fd >= 0 && !vq->hold.skip)
		vq->hold.sent_ns = clock_now_ns();
}

/* Arms the timer for the absolute monotonic time `at_ns` (0: disarms). */
static void arm(struct vpci_hold *h, uint64_t at_ns)
{
	struct itimerspec its = {
		.it_value = { (time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u) },
	};
	/* Fails only for a bad fd or value, neither of which can happen here. */
	(void)timerfd_settime(h->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void kicks_off(struct virtio_pci *t, struct vpci_queue *vq)
{
	if (t->cfg.poll_us)
		return; /* poll= turns them off and on itself */
	virtq_set_notify(&vq->vq, false);
	vq->hold.kicks_off = true;
}

/* Kicks on again (a full fence), and what the driver added while they were off is served from
 * the loop (the kick eventfd: this may run inside the device's own processing). */
static void kicks_on(struct virtio_pci *t, struct vpci_queue *vq)
{
	if (!vq->hold.kicks_off)
		return;
	vq->hold.kicks_off = false;
	virtq_set_notify(&vq->vq, true);
	if (virtq_has_work(&vq->vq))
		virtio_pci_queue_resume(t, vq->index);
}

static void release(struct virtio_pci *t, struct vpci_queue *vq, uint64_t now)
{
	struct vpci_hold *h = &vq->hold;
	h->held = false;
	kicks_on(t, vq);
	arm(h, 0);
	vq->stats.hold_ns += now - h->start_ns;
	if (h->joins) {
		vq->stats.holds_joined++;
		h->backoff = 0;
	} else {
		h->backoff = h->backoff ? h->backoff * 2 : 1;
		if (h->backoff > VPCI_HOLD_BACKOFF_MAX)
			h->backoff = VPCI_HOLD_BACKOFF_MAX;
		h->skip = h->backoff;
	}
	vpci_queue_notify(t, vq);
}

bool vpci_hold_more(struct virtio_pci *t, struct vpci_queue *vq)
{
	struct vpci_hold *h = &vq->hold;
	if (!h->held)
		return false;
	uint64_t now = clock_now_ns();
	h->gap_ns = average(h->gap_ns, now - h->last_ns);
	h->last_ns = now;
	h->joins++;
	uint16_t waiting = (uint16_t)(vq->vq.used_idx - vq->vq.signalled_used);
	if (now >= h->deadline_ns || waiting >= vq->vq.size / 2) {
		release(t, vq, now);
		return true;
	}
	uint64_t at = now + quiet_ns(t, h);
	arm(h, at < h->deadline_ns ? at : h->deadline_ns);
	return true;
}

bool vpci_hold_start(struct virtio_pci *t, struct vpci_queue *vq, uint64_t batch)
{
	struct vpci_hold *h = &vq->hold;
	if (h->timer_fd < 0 || !virtq_would_notify(&vq->vq))
		return false; /* off, or the driver did not ask to be told: nothing to hold */
	if (batch > 1 && vq->vq.last_avail == vq->vq.used_idx && !virtq_has_work(&vq->vq)) {
		vq->stats.whole_batches++;
		return false; /* all it gave at once is done and it waits for it: tell it now */
	}
	if (h->skip) {
		h->skip--;
		h->sent_ns = 0;
		return false;
	}
	uint64_t now = clock_now_ns();
	if (h->sent_ns)
		h->react_ns = average(h->react_ns, now - h->sent_ns);
	h->sent_ns = 0;
	h->held = true;
	h->start_ns = h->last_ns = now;
	h->deadline_ns = now + cap_ns(t);
	h->joins = 0;
	vq->stats.holds++;
	kicks_off(t, vq);
	uint64_t at = now + quiet_ns(t, h);
	arm(h, at < h->deadline_ns ? at : h->deadline_ns);
	return true;
}

void vpci_hold_reset(struct vpci_queue *vq)
{
	struct vpci_hold *h = &vq->hold;
	if (h->timer_fd >= 0 && h->held)
		arm(h, 0);
	h->held = h->kicks_off = false; /* the queue's ring starts over */
	h->skip = h->backoff = 0;
	h->gap_ns = h->sent_ns = h->react_ns = 0;
}

void vpci_hold_flush(struct virtio_pci *t)
{
	for (uint16_t q = 0; q < t->info.nqueues; q++) {
		struct vpci_queue *vq = &t->queues[q];
		if (vq->hold.held && virtio_pci_queue(t, q))
			release(t, vq, clock_now_ns());
	}
}

/* Requests the driver added without a kick, served now (also at the cap: what completes at
 * once goes out with the held notification). True if the hold goes on (their completions
 * joined it and armed its timer again, or they are still in flight and it waits another quiet
 * time for them) or ended meanwhile; false when it is to end now: nothing was taken, or the cap
 * passed. */
static bool pick_up(struct virtio_pci *t, struct vpci_queue *vq)
{
	struct vpci_hold *h = &vq->hold;
	if (!h->kicks_off || !t->ops->queue_notify || !virtq_has_work(&vq->vq))
		return false;
	uint32_t joins = h->joins;
	uint16_t taken = vq->vq.last_avail;
	vq->stats.hold_pickups++;
	t->ops->queue_notify(t->opaque, vq->index);
	if (!h->held)
		return true;
	if (clock_now_ns() >= h->deadline_ns)
		return false;
	if (h->joins != joins)
		return true;
	if (vq->vq.last_avail == taken)
		return false;
	uint64_t at = clock_now_ns() + quiet_ns(t, h);
	arm(h, at < h->deadline_ns ? at : h->deadline_ns);
	return true;
}

/* The quiet time or the cap ran out: what the driver submitted meanwhile is served (its
 * completions join the hold), else the held notification goes out (unless the queue is no
 * longer live: a reset dropped it already, NEEDS_RESET drops it here). */
static void on_timer(void *opaque, uint32_t events)
{
	struct vpci_queue *vq = opaque;
	struct virtio_pci *t = vq->owner;
	uint64_t n;
	pthread_mutex_lock(&t->lock);
	while (read(vq->hold.timer_fd, &n, sizeof(n)) > 0)
		;
	if (vq->hold.held && virtio_pci_queue(t, vq->index)) {
		if (!pick_up(t, vq) && vq->hold.held)
			release(t, vq, clock_now_ns());
	} else {
		vq->hold.held = false; /* NEEDS_RESET meanwhile: nobody to tell until a reset */
	}
	pthread_mutex_unlock(&t->lock);
}

int vpci_hold_init(struct virtio_pci *t, uint16_t q)
{
	struct vpci_queue *vq = &t->queues[q];
	vq->hold = (struct vpci_hold){ .timer_fd = -1 };
	if (!t->cfg.coalesce_us || !t->loop)
		return 0;
	vq->hold.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (vq->hold.timer_fd < 0)
		return -errno;
	vq->hold.timer_handler = (struct evloop_handler){ on_timer, vq };
	return evloop_add(t->loop, vq->hold.timer_fd, EPOLLIN, &vq->hold.timer_handler);
}

void vpci_hold_destroy(struct virtio_pci *t)
{
	for (uint16_t q = 0; q < VIRTIO_PCI_MAX_QUEUES; q++) {
		struct vpci_hold *h = &t->queues[q].hold;
		if (h->timer_fd < 0)
			continue;
		if (t->loop)
			evloop_del(t->loop, h->timer_fd);
		close(h->timer_fd);
		h->timer_fd = -1;
	}
}
