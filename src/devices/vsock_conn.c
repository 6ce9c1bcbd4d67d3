/* virtio-vsock connections: the stream state machine, credit both ways, unix sockets as the host ends, and the packets owed to the guest. */
#include "devices/virtio_vsock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/log.h"

void vsock_hdr_encode(const struct vsock_hdr *h, uint8_t *b)
{
	uint64_t q;
	uint32_t d;
	uint16_t w;
	q = htole64(h->src_cid), memcpy(b, &q, 8);
	q = htole64(h->dst_cid), memcpy(b + 8, &q, 8);
	d = htole32(h->src_port), memcpy(b + 16, &d, 4);
	d = htole32(h->dst_port), memcpy(b + 20, &d, 4);
	d = htole32(h->len), memcpy(b + 24, &d, 4);
	w = htole16(h->type), memcpy(b + 28, &w, 2);
	w = htole16(h->op), memcpy(b + 30, &w, 2);
	d = htole32(h->flags), memcpy(b + 32, &d, 4);
	d = htole32(h->buf_alloc), memcpy(b + 36, &d, 4);
	d = htole32(h->fwd_cnt), memcpy(b + 40, &d, 4);
}

/* ---- the table ---- */

struct vsock_conn *vsock_conn_find(struct virtio_vsock *v, uint32_t host_port, uint32_t guest_port)
{
	for (uint32_t i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conns[i];
		if (c->state != VC_FREE && c->state != VC_HANDSHAKE && c->host_port == host_port &&
		    c->guest_port == guest_port)
			return c;
	}
	return NULL;
}

static struct vsock_conn *conn_alloc(struct virtio_vsock *v)
{
	for (uint32_t i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conns[i];
		if (c->state == VC_FREE) {
			*c = (struct vsock_conn){ .dev = v, .fd = -1, .state = VC_HANDSHAKE };
			return c;
		}
	}
	return NULL;
}

/* Takes c's socket out of the event loop and closes it. */
static void drop_socket(struct vsock_conn *c)
{
	if (c->watching)
		evloop_del(c->dev->loop, c->fd);
	c->watching = 0;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

void vsock_conn_free(struct vsock_conn *c)
{
	drop_socket(c);
	free(c->pend);
	*c = (struct vsock_conn){ .dev = c->dev, .fd = -1 };
}

void vsock_owe_orphan_rst(struct virtio_vsock *v, const struct vsock_hdr *h)
{
	if (v->norphans == VSOCK_ORPHAN_MAX)
		return; /* the guest floods packets of no connection: the rest go unanswered */
	v->orphans[v->norphans++] = *h;
}

/* Ends c: the guest gets an RST, the socket is closed now. */
static void conn_reset(struct vsock_conn *c)
{
	drop_socket(c);
	c->state = VC_CLOSING;
	c->owe = VC_SEND_RST;
}

/* Guest bytes the connection can still take (what the guest may send past this is a violation). */
static uint32_t our_room(const struct vsock_conn *c)
{
	return VSOCK_BUF_ALLOC - c->pend_len;
}

/* What the guest can take now: its buffer minus what is in flight towards it. */
static uint32_t peer_credit(const struct vsock_conn *c)
{
	uint32_t in_flight = c->tx_cnt - c->peer_fwd_cnt;
	return in_flight >= c->peer_buf_alloc ? 0 : c->peer_buf_alloc - in_flight;
}

/* ---- socket side ---- */

void vsock_conn_watch(struct vsock_conn *c)
{
	struct virtio_vsock *v = c->dev;
	uint32_t want = 0;
	if (c->fd >= 0) {
		if (c->state == VC_HANDSHAKE)
			want = EPOLLIN;
		else if (c->state == VC_ESTABLISHED) {
			/* level-triggered: once readable, the socket leaves the loop until a recv
			 * finds it empty (data waiting for credit or buffers costs no wake-ups) */
			if (!c->host_eof && !c->guest_no_rcv && !c->readable)
				want |= EPOLLIN;
			if (c->pend_len)
				want |= EPOLLOUT;
		}
	}
	if (want == c->watching || !v->loop)
		return;
	c->handler = (struct evloop_handler){ vsock_conn_event, c };
	if (c->watching)
		evloop_del(v->loop, c->fd);
	c->watching = 0;
	if (want && evloop_add(v->loop, c->fd, want, &c->handler) == 0)
		c->watching = want;
}

int vsock_conn_flush(struct vsock_conn *c)
{
	while (c->pend_len) {
		ssize_t n = send(c->fd, c->pend, c->pend_len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			conn_reset(c);
			return -1;
		}
		memmove(c->pend, c->pend + n, c->pend_len - (uint32_t)n);
		c->pend_len -= (uint32_t)n;
		c->fwd_cnt += (uint32_t)n;
		c->dev->stats.bytes_to_host += (uint64_t)n;
	}
	/* Tell the guest it has room again once half the buffer has drained since we last said. */
	if (c->fwd_cnt - c->fwd_cnt_told >= VSOCK_BUF_ALLOC / 2)
		c->owe |= VC_SEND_CREDIT;
	if (!c->pend_len && c->guest_no_send)
		shutdown(c->fd, SHUT_WR);
	return 0;
}

/* The guest's RW payload: straight into the socket, the rest kept (within our buffer). */
static void conn_rw(struct vsock_conn *c, const uint8_t *p, uint32_t len)
{
	if (c->guest_no_send || len > our_room(c)) {
		log_ratelimited(&c->dev->rl, LOG_WARN, "%s: port %u -> %u: %u bytes past the credit "
				"the device gave (or after SHUTDOWN); reset", c->dev->name,
				c->guest_port, c->host_port, len);
		c->dev->stats.bad_packets++;
		conn_reset(c);
		return;
	}
	if (!c->pend && !(c->pend = malloc(VSOCK_BUF_ALLOC))) {
		conn_reset(c);
		return;
	}
	memcpy(c->pend + c->pend_len, p, len);
	c->pend_len += len;
	vsock_conn_flush(c);
}

/* Connects a guest's REQUEST for host port P to PATH_P. */
static int connect_host(struct virtio_vsock *v, uint32_t port)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s_%u", v->path, port) >=
	    sizeof(a.sun_path))
		return -ENAMETOOLONG;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* A guest's REQUEST: the connection waits for the I/O thread to connect PATH_P (this may be a
 * vCPU thread, for a kick that came as an MMIO exit). */
static void guest_request(struct virtio_vsock *v, const struct vsock_hdr *h)
{
	struct vsock_conn *c = conn_alloc(v);
	if (!c) {
		v->stats.refused++;
		log_ratelimited(&v->rl, LOG_WARN, "%s: guest port %u -> host port %u refused: %d "
				"connections already", v->name, h->src_port, h->dst_port,
				VSOCK_MAX_CONNS);
		vsock_owe_orphan_rst(v, h);
		return;
	}
	c->state = VC_DIALING;
	c->host_port = h->dst_port;
	c->guest_port = h->src_port;
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	uint64_t one = 1;
	if (v->loop && write(v->dial_fd, &one, sizeof(one)) != sizeof(one))
		log_warn("%s: cannot wake the I/O thread: %s", v->name, strerror(errno));
	if (!v->loop)
		vsock_dial(v); /* no event loop (a test): here and now */
}

void vsock_dial(struct virtio_vsock *v)
{
	for (uint32_t i = 0; i < VSOCK_MAX_CONNS; i++) {
		struct vsock_conn *c = &v->conns[i];
		if (c->state != VC_DIALING)
			continue;
		int fd = connect_host(v, c->host_port);
		if (fd < 0) {
			v->stats.refused++;
			log_ratelimited(&v->rl, LOG_INFO, "%s: guest port %u -> host port %u refused: "
					"%s_%u: %s", v->name, c->guest_port, c->host_port, v->path,
					c->host_port, strerror(-fd));
			conn_reset(c);
			continue;
		}
		c->fd = fd;
		c->state = VC_ESTABLISHED;
		c->owe = VC_SEND_RESPONSE;
		v->stats.conns_guest++;
		vsock_conn_watch(c);
	}
}

/* The guest's SHUTDOWN: what it will no longer do; both: the stream ends (an RST closes it). */
static void guest_shutdown(struct vsock_conn *c, uint32_t flags)
{
	if (flags & VSOCK_SHUTDOWN_RCV)
		c->guest_no_rcv = true;
	if (flags & VSOCK_SHUTDOWN_SEND) {
		c->guest_no_send = true;
		if (!c->pend_len && c->fd >= 0)
			shutdown(c->fd, SHUT_WR);
	}
	if (c->guest_no_rcv && c->guest_no_send)
		conn_reset(c);
}

void vsock_conn_packet(struct virtio_vsock *v, const struct vsock_hdr *h, const uint8_t *payload)
{
	struct vsock_conn *c = vsock_conn_find(v, h->dst_port, h->src_port);
	if (!c) {
		if (h->op == VSOCK_OP_REQUEST)
			guest_request(v, h);
		else if (h->op != VSOCK_OP_RST)
			vsock_owe_orphan_rst(v, h);
		return;
	}
	c->peer_buf_alloc = h->buf_alloc;
	c->peer_fwd_cnt = h->fwd_cnt;
	switch (h->op) {
	case VSOCK_OP_RESPONSE:
		if (c->state != VC_CONNECTING) {
			conn_reset(c);
			break;
		}
		char ok[24];
		int n = snprintf(ok, sizeof(ok), "OK %u\n", c->host_port);
		if (send(c->fd, ok, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
			conn_reset(c); /* the client went away (or does not read its answer) */
			break;
		}
		c->state = VC_ESTABLISHED;
		c->readable = true; /* whatever the client sent after its answer: one recv tells */
		break;
	case VSOCK_OP_RW:
		if (c->state == VC_ESTABLISHED) /* (not before the RESPONSE: a guest error) */
			conn_rw(c, payload, h->len);
		else
			conn_reset(c);
		break;
	case VSOCK_OP_SHUTDOWN:
		if (c->state == VC_ESTABLISHED)
			guest_shutdown(c, h->flags);
		break;
	case VSOCK_OP_CREDIT_REQUEST:
		if (c->state == VC_ESTABLISHED)
			c->owe |= VC_SEND_CREDIT;
		break;
	case VSOCK_OP_RST:
		vsock_conn_free(c); /* the guest closed it: nothing owed */
		return;
	case VSOCK_OP_REQUEST: /* a second REQUEST on a live connection */
		conn_reset(c);
		break;
	default: /* CREDIT_UPDATE: the credit above is all it says */
		break;
	}
	vsock_conn_watch(c);
}

/* ---- host-initiated connections ---- */

void vsock_accept(struct virtio_vsock *v)
{
	for (int i = 0; i < 8; i++) { /* bounded per wake-up; the listener stays readable */
		int fd = accept4(v->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct vsock_conn *c = conn_alloc(v);
		if (!c) {
			v->stats.refused++;
			log_ratelimited(&v->rl, LOG_WARN, "%s: a host connection refused: %d "
					"connections already", v->name, VSOCK_MAX_CONNS);
			close(fd);
			continue;
		}
		c->fd = fd;
		vsock_conn_watch(c);
	}
}

/* "CONNECT <port>\n" from a new host client: then the guest gets a REQUEST. */
static void handshake(struct vsock_conn *c)
{
	struct virtio_vsock *v = c->dev;
	ssize_t n = recv(c->fd, c->line + c->line_len, sizeof(c->line) - 1 - c->line_len,
			 MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		vsock_conn_free(c);
		return;
	}
	c->line_len += (uint32_t)n;
	c->line[c->line_len] = 0;
	char *nl = strchr(c->line, '\n');
	if (!nl) {
		if (c->line_len == sizeof(c->line) - 1)
			vsock_conn_free(c); /* no line in 31 bytes: not a client of this protocol */
		return;
	}
	*nl = 0;
	unsigned long port;
	char end;
	if (sscanf(c->line, "CONNECT %lu%c", &port, &end) != 1 || port > UINT32_MAX ||
	    nl + 1 != c->line + c->line_len) {
		log_ratelimited(&v->rl, LOG_INFO, "%s: a host client's first line is not "
				"'CONNECT <port>' (or more came before the answer); closed", v->name);
		vsock_conn_free(c);
		return;
	}
	uint32_t hp = v->next_host_port;
	while (vsock_conn_find(v, hp, (uint32_t)port))
		hp++;
	v->next_host_port = hp + 1 < (1u << 30) ? 1u << 30 : hp + 1;
	c->host_port = hp;
	c->guest_port = (uint32_t)port;
	c->state = VC_CONNECTING;
	c->owe = VC_SEND_REQUEST;
	v->stats.conns_host++;
	vsock_conn_watch(c);
}

void vsock_conn_event(void *opaque, uint32_t events)
{
	struct vsock_conn *c = opaque;
	struct virtio_vsock *v = c->dev;
	pthread_mutex_lock(&v->pci.lock);
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		c->readable = true; /* a recv tells data from the end */
	if (c->state == VC_HANDSHAKE)
		handshake(c);
	else if (c->state == VC_ESTABLISHED && (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) &&
		 c->pend_len)
		vsock_conn_flush(c);
	if (c->state != VC_FREE)
		vsock_conn_watch(c);
	vsock_rx_serve(v); /* EPOLLIN: data waits for the guest */
	pthread_mutex_unlock(&v->pci.lock);
}

/* ---- receive queue: what the device sends the guest ---- */

/* Copies len bytes into the chain's writable area at offset `at` (the caller checked room). */
static void scatter_at(const struct virtq_chain *ch, uint32_t at, const uint8_t *src, uint32_t len)
{
	uint32_t pos = 0;
	for (uint32_t i = ch->n_out; i < ch->n_out + ch->n_in && len; i++) {
		uint32_t blen = ch->buf[i].len;
		if (at < pos + blen) {
			uint32_t skip = at - pos, n = blen - skip < len ? blen - skip : len;
			memcpy((uint8_t *)ch->buf[i].host + skip, src, n);
			src += n;
			at += n;
			len -= n;
		}
		pos += blen;
	}
}

/* Writes one packet (header, then `len` payload bytes from v->bounce) into the popped chain,
 * whose writable area holds it (rx_serve checked the header, conn_next the payload). */
static uint32_t put_packet(struct virtio_vsock *v, struct vsock_hdr *h, uint32_t len)
{
	uint8_t raw[VSOCK_HDR_SIZE];
	h->src_cid = VSOCK_HOST_CID;
	h->dst_cid = v->cid;
	h->type = VSOCK_TYPE_STREAM;
	h->len = len;
	vsock_hdr_encode(h, raw);
	scatter_at(&v->chain, 0, raw, VSOCK_HDR_SIZE);
	scatter_at(&v->chain, VSOCK_HDR_SIZE, v->bounce, len);
	return VSOCK_HDR_SIZE + len;
}

static struct vsock_hdr conn_hdr(const struct vsock_conn *c, uint16_t op)
{
	return (struct vsock_hdr){ .src_port = c->host_port, .dst_port = c->guest_port, .op = op,
				   .buf_alloc = VSOCK_BUF_ALLOC, .fwd_cnt = c->fwd_cnt };
}

/* The control packets a connection may owe, in the order they go out. */
static const struct { uint32_t bit; uint16_t op; } owed[] = {
	{ VC_SEND_RST, VSOCK_OP_RST }, { VC_SEND_REQUEST, VSOCK_OP_REQUEST },
	{ VC_SEND_RESPONSE, VSOCK_OP_RESPONSE }, { VC_SEND_CREDIT, VSOCK_OP_CREDIT_UPDATE },
};

/* The next packet c has for the guest, into the popped chain (room: its payload room).
 * Returns the bytes written, 0 if c has nothing now. */
static uint32_t conn_next(struct vsock_conn *c, uint32_t room)
{
	struct virtio_vsock *v = c->dev;
	struct vsock_hdr h;
	for (size_t i = 0; i < sizeof(owed) / sizeof(owed[0]); i++) {
		if (!(c->owe & owed[i].bit))
			continue;
		c->owe &= ~owed[i].bit;
		h = conn_hdr(c, owed[i].op);
		c->fwd_cnt_told = c->fwd_cnt;
		if (owed[i].op == VSOCK_OP_RST) {
			v->stats.resets++;
			vsock_conn_free(c);
		}
		return put_packet(v, &h, 0);
	}
	if (c->state != VC_ESTABLISHED || c->host_eof || c->guest_no_rcv || c->fd < 0 ||
	    !c->readable)
		return 0;
	uint32_t want = peer_credit(c);
	want = want < room ? want : room;
	want = want < VSOCK_PKT_MAX ? want : VSOCK_PKT_MAX;
	if (!want)
		return 0;
	ssize_t n = recv(c->fd, v->bounce, want, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		c->readable = false; /* empty: watched again */
		return 0;
	}
	if (n <= 0) {
		/* the host end will send no more (a half-close, or a close: then the next send to it
		 * fails and resets the stream): the guest hears SHUTDOWN SEND, and ends the stream
		 * with its own SHUTDOWN when it is done */
		c->host_eof = true;
		h = conn_hdr(c, VSOCK_OP_SHUTDOWN);
		h.flags = VSOCK_SHUTDOWN_SEND;
		c->fwd_cnt_told = c->fwd_cnt;
		return put_packet(v, &h, 0);
	}
	h = conn_hdr(c, VSOCK_OP_RW);
	c->tx_cnt += (uint32_t)n;
	c->fwd_cnt_told = c->fwd_cnt;
	v->stats.bytes_to_guest += (uint64_t)n;
	return put_packet(v, &h, (uint32_t)n);
}

/* An RST owed to a packet of no connection, into the popped chain. */
static uint32_t orphan_next(struct virtio_vsock *v)
{
	const struct vsock_hdr *o = &v->orphans[--v->norphans];
	struct vsock_hdr h = { .src_port = o->dst_port, .dst_port = o->src_port,
			       .op = VSOCK_OP_RST };
	v->stats.resets++;
	return put_packet(v, &h, 0);
}

void vsock_rx_serve(struct virtio_vsock *v)
{
	struct virtq *q = virtio_pci_queue(&v->pci, VSOCK_RXQ);
	if (!q)
		return;
	struct vbudget budget = vbudget_start(VBUDGET_BYTES);
	bool bad = false;
	for (;;) {
		if (!vbudget_left(&budget)) {
			virtio_pci_queue_resume(&v->pci, VSOCK_RXQ);
			break;
		}
		if (virtq_pop(q, &v->chain) != 1) {
			virtq_set_notify(q, true); /* kick me when a buffer comes */
			if (virtq_pop(q, &v->chain) != 1)
				break;
		}
		if (v->chain.n_out || v->chain.in_bytes < VSOCK_HDR_SIZE) {
			bad = true;
			break;
		}
		uint32_t room = v->chain.in_bytes - VSOCK_HDR_SIZE, n = 0;
		if (v->norphans)
			n = orphan_next(v);
		for (uint32_t i = 0; !n && i < VSOCK_MAX_CONNS; i++) {
			struct vsock_conn *c = &v->conns[(v->rr + i) % VSOCK_MAX_CONNS];
			if (c->state == VC_FREE || c->state == VC_HANDSHAKE)
				continue;
			n = conn_next(c, room);
			if (n)
				v->rr = (v->rr + i + 1) % VSOCK_MAX_CONNS;
			if (c->state != VC_FREE)
				vsock_conn_watch(c);
		}
		if (!n) {
			virtq_unpop(q, 1); /* nothing to send: the buffer waits */
			break;
		}
		virtq_push(q, v->chain.head, n);
		vbudget_charge(&budget, n);
	}
	virtio_pci_queue_done(&v->pci, VSOCK_RXQ);
	if (bad)
		virtio_pci_set_needs_reset(&v->pci, "a receive buffer that is readable or shorter "
					   "than a packet header");
}
