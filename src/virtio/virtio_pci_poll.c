/* Virtio-pci queue polling (poll=): after a kick the I/O thread watches the avail ring for a bounded, adaptive window with notifications off. */
/* Link circle, on purpose (virtio_pci.c, _common.c, _coalesce.c, _poll.c): one transport, struct virtio_pci, split by size; its register file, interrupt moderation and polling each look queues up and kick through virtio_pci.c, which drives all three. */
#include "virtio/virtio_pci_common.h"
#include "util/clock.h"

#define POLL_MIN_NS 2000ull /* a window that would shrink below this is 0: wait for kicks */

static uint64_t poll_max_ns(const struct virtio_pci *t)
{
	return (uint64_t)t->cfg.poll_us * 1000u;
}

/* Runs the device's handler on queue q; true if it took chains off the ring. Lock held. */
static bool handle(struct virtio_pci *t, struct vpci_queue *vq)
{
	struct virtq *q = virtio_pci_queue(t, vq->index);
	if (!q || !t->ops->queue_notify || !virtq_has_work(q))
		return false;
	uint64_t before = q->popped;
	t->ops->queue_notify(t->opaque, vq->index);
	q = virtio_pci_queue(t, vq->index); /* the handler may have broken the queue */
	return q && q->popped != before;
}

/* evloop_poller.poll: new chains are handled as if kicked. A queue whose handler takes nothing
 * (throttled, out of requests) makes no progress, so its window runs out. */
static bool on_poll(void *opaque)
{
	struct vpci_queue *vq = opaque;
	struct virtio_pci *t = vq->owner;
	pthread_mutex_lock(&t->lock);
	bool progress = handle(t, vq);
	if (progress) {
		t->stats.poll_hits++;
		vq->poll_hit = true;
		vq->last_work_ns = clock_now_ns();
	}
	pthread_mutex_unlock(&t->lock);
	return progress;
}

/* evloop_poller.expire: kicks back on, then one more look (a chain added before the driver saw
 * the change sends no kick). A window that found nothing halves the next one. */
static void on_expire(void *opaque)
{
	struct vpci_queue *vq = opaque;
	struct virtio_pci *t = vq->owner;
	pthread_mutex_lock(&t->lock);
	t->stats.poll_windows++;
	if (!vq->poll_hit)
		vq->poll_ns = vq->poll_ns / 2 < POLL_MIN_NS ? 0 : vq->poll_ns / 2;
	struct virtq *q = virtio_pci_queue(t, vq->index);
	if (q) {
		virtq_set_notify(q, true);
		if (handle(t, vq))
			vpci_poll_after_kick(t, vq->index);
	}
	pthread_mutex_unlock(&t->lock);
}

void vpci_poll_init(struct virtio_pci *t, uint16_t q)
{
	struct vpci_queue *vq = &t->queues[q];
	vq->poller = (struct evloop_poller){ .poll = on_poll, .expire = on_expire, .opaque = vq };
	vq->poll_ns = poll_max_ns(t);
	vq->last_work_ns = 0;
}

void vpci_poll_after_kick(struct virtio_pci *t, uint16_t q)
{
	struct vpci_queue *vq = &t->queues[q];
	struct virtq *vring = virtio_pci_queue(t, q);
	uint64_t max = poll_max_ns(t);
	if (!max || !t->loop || !vring || vq->poller.armed)
		return;
	uint64_t now = clock_now_ns();
	/* A kick soon after the last work: polling would have caught it. */
	if (vq->poll_ns < max && vq->last_work_ns && now - vq->last_work_ns <= max)
		vq->poll_ns = vq->poll_ns ? (vq->poll_ns * 2 < max ? vq->poll_ns * 2 : max)
					  : POLL_MIN_NS * 2;
	vq->last_work_ns = now;
	if (!vq->poll_ns)
		return;
	vq->poll_hit = false;
	if (evloop_poll_arm(t->loop, &vq->poller, vq->poll_ns))
		virtq_set_notify(vring, false);
}

void vpci_poll_destroy(struct virtio_pci *t)
{
	for (uint16_t q = 0; q < t->info.nqueues && t->loop; q++)
		if (t->queues[q].poller.armed)
			evloop_poll_disarm(t->loop, &t->queues[q].poller);
}
