/* Network backend, built-in peer: guest frames -> responder/sink/source -> queued answers the device receives (no host network). */
#include "backends/net_backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "backends/net_peer.h"
#include "util/clock.h"

/*
 * One queue. Frames the peer produces (answers, source frames) wait in a
 * ring of NET_PEER_QUEUE slots; rx_fd is an eventfd that is readable while
 * the ring is not empty. When the ring is full, new frames are dropped and
 * counted (as a NIC would): a guest that posts no receive buffers cannot
 * make the peer grow. In source mode a timerfd (aux_fd) paces the frames:
 * each tick queues the frames due since the start at `rate` per second;
 * those that find the ring full are lost, not owed.
 */

#define SOURCE_TICK_NS 1000000ull   /* at most 1000 ticks per second */

struct slot {
	uint32_t len;
	uint8_t data[NET_PEER_FRAME_MAX];
};

enum peer_stat { PS_FRAMES_IN, PS_BYTES_IN, PS_ARP, PS_ICMP, PS_UDP, PS_IGNORED, PS_TOO_BIG,
		 PS_SOURCE_FRAMES, PS_SOURCE_LOST, PS_QUEUE_FULL, PS_N };

static const char *const stat_names[PS_N] = {
	"frames_in", "bytes_in", "arp_replies", "icmp_replies", "udp_echoes", "ignored",
	"too_big", "source_frames", "source_lost", "queue_full",
};

struct peer {
	enum net_peer_mode mode;
	struct peer_addrs addrs;
	struct slot *ring[NET_PEER_QUEUE]; /* each slot allocated the first time it is filled */
	unsigned head, count;
	uint32_t rate, size;
	uint64_t start_ns, due_done;  /* source: frames accounted for since start_ns */
	uint64_t stats[PS_N];
	uint8_t in[NET_PEER_FRAME_MAX];
};

/* The free slot at the tail (allocated on its first use), or NULL when the ring is full or,
 * out of host memory, the slot cannot be made: the frame is then dropped and counted. */
static struct slot *tail_slot(struct peer *p, enum peer_stat full)
{
	struct slot **s = &p->ring[(p->head + p->count) % NET_PEER_QUEUE];
	if (p->count == NET_PEER_QUEUE || (!*s && !(*s = malloc(sizeof(**s))))) {
		p->stats[full]++;
		return NULL;
	}
	return *s;
}

static struct slot *tail(struct peer *p)
{
	return tail_slot(p, PS_QUEUE_FULL);
}

static void commit(struct net_backend *b, struct peer *p, size_t len)
{
	p->ring[(p->head + p->count) % NET_PEER_QUEUE]->len = (uint32_t)len;
	if (p->count++ == 0) {
		uint64_t one = 1;
		if (write(b->rx_fd[0], &one, sizeof(one)) != sizeof(one))
			return; /* cannot fail: the counter is far from overflow */
	}
}

static int peer_send(struct net_backend *b, unsigned q, const struct iovec *iov, int iovcnt)
{
	struct peer *p = b->priv;
	size_t len = 0;
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	p->stats[PS_FRAMES_IN]++;
	p->stats[PS_BYTES_IN] += len;
	if (p->mode == NET_PEER_SINK)
		return 0;
	if (len > NET_PEER_FRAME_MAX) {
		p->stats[PS_TOO_BIG]++;
		return 0;
	}
	size_t off = 0;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(p->in + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	uint8_t reply[NET_PEER_FRAME_MAX];
	size_t rlen = 0;
	enum peer_verdict v = peer_answer(&p->addrs, p->in, len, reply, &rlen);
	if (v == PEER_IGNORED) {
		p->stats[PS_IGNORED]++;
		return 0;
	}
	p->stats[v == PEER_ARP ? PS_ARP : v == PEER_ICMP ? PS_ICMP : PS_UDP]++;
	struct slot *s = tail(p);
	if (s) {
		memcpy(s->data, reply, rlen);
		commit(b, p, rlen);
	}
	return 0;
}

static ssize_t peer_recv(struct net_backend *b, unsigned q, void *buf, size_t len)
{
	struct peer *p = b->priv;
	if (p->count == 0)
		return -EAGAIN;
	struct slot *s = p->ring[p->head];
	p->head = (p->head + 1) % NET_PEER_QUEUE;
	if (--p->count == 0) {
		uint64_t v;
		if (read(b->rx_fd[0], &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -errno;
	}
	if (s->len > len)
		return -EMSGSIZE;
	memcpy(buf, s->data, s->len);
	return s->len;
}

/* Source mode: queue the frames due by now. */
static void peer_aux(struct net_backend *b)
{
	struct peer *p = b->priv;
	uint64_t ticks;
	if (read(b->aux_fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return;
	uint64_t now = clock_now_ns(), elapsed = now - p->start_ns;
	/* rate <= 1e7 and elapsed < 2^64 / 1e7 ns (58 years): no overflow. */
	uint64_t due = (uint64_t)((unsigned __int128)elapsed * p->rate / 1000000000u);
	for (; p->due_done < due; p->due_done++) {
		struct slot *s = tail_slot(p, PS_SOURCE_LOST);
		if (!s) {
			p->stats[PS_SOURCE_LOST] += due - p->due_done - 1;
			p->due_done = due;
			break;
		}
		peer_source_frame(&p->addrs, s->data, p->size, p->stats[PS_SOURCE_FRAMES], now);
		p->stats[PS_SOURCE_FRAMES]++;
		commit(b, p, p->size);
	}
}

static unsigned peer_stats(struct net_backend *b, struct net_be_stat *out, unsigned max)
{
	struct peer *p = b->priv;
	unsigned n = 0;
	for (unsigned i = 0; i < PS_N && n < max; i++) {
		bool source_only = i == PS_SOURCE_FRAMES || i == PS_SOURCE_LOST;
		if (source_only && p->mode != NET_PEER_SOURCE)
			continue;
		out[n++] = (struct net_be_stat){ stat_names[i], p->stats[i] };
	}
	return n;
}

static void peer_close(struct net_backend *b)
{
	struct peer *p = b->priv;
	if (b->rx_fd[0] >= 0)
		close(b->rx_fd[0]);
	if (b->aux_fd >= 0)
		close(b->aux_fd);
	b->rx_fd[0] = b->aux_fd = -1;
	for (unsigned i = 0; p && i < NET_PEER_QUEUE; i++)
		free(p->ring[i]);
	free(p);
	b->priv = NULL;
}

static const struct net_backend_ops peer_ops = {
	.send = peer_send,
	.recv = peer_recv,
	.aux = peer_aux,
	.stats = peer_stats,
	.close = peer_close,
};

static const char *const mode_names[] = {
	[NET_PEER_RESPONDER] = "responder", [NET_PEER_SINK] = "sink", [NET_PEER_SOURCE] = "source",
};

int net_peer_open(struct net_backend *b, const struct net_open_cfg *cfg, struct error *err)
{
	struct peer *p = calloc(1, sizeof(*p));
	if (!p)
		return error_set(err, -ENOMEM, "peer: out of memory");
	b->ops = &peer_ops;
	b->priv = p;
	b->kind = "peer";
	b->nqueues = 1;
	p->mode = cfg->peer_mode;
	if (p->mode == NET_PEER_SOURCE &&
	    (cfg->rate < 1 || cfg->rate > NET_PEER_RATE_MAX || cfg->size < NET_PEER_SIZE_MIN ||
	     cfg->size > NET_PEER_SIZE_MAX))
		return error_set(err, -EINVAL, "peer source: rate %u or size %u out of range (1 to %u "
				 "frames/s, %u to %u bytes)", cfg->rate, cfg->size, NET_PEER_RATE_MAX,
				 NET_PEER_SIZE_MIN, NET_PEER_SIZE_MAX);
	b->rx_fd[0] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->rx_fd[0] < 0)
		return error_set(err, -errno, "peer: eventfd: %s", strerror(errno));
	if (p->mode == NET_PEER_SOURCE) {
		p->rate = cfg->rate;
		p->size = cfg->size;
		uint64_t period = 1000000000ull / cfg->rate;
		if (period < SOURCE_TICK_NS)
			period = SOURCE_TICK_NS;
		b->aux_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		struct itimerspec its = {
			.it_interval = { (time_t)(period / 1000000000ull), (long)(period % 1000000000ull) },
			.it_value = { (time_t)(period / 1000000000ull), (long)(period % 1000000000ull) },
		};
		if (b->aux_fd < 0 || timerfd_settime(b->aux_fd, 0, &its, NULL))
			return error_set(err, -errno, "peer: timerfd: %s", strerror(errno));
		p->start_ns = clock_now_ns();
		snprintf(b->desc, sizeof(b->desc), "peer source, %u frames/s of %u bytes", p->rate,
			 p->size);
	} else {
		snprintf(b->desc, sizeof(b->desc), "peer %s", mode_names[p->mode]);
	}
	return 0;
}
