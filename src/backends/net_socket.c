/* Network backend, socket: frames <-> unix datagrams between two msivm instances joined by one path (no privileges). */
#include "backends/net_backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/log.h"

/*
 * The scheme: every instance started with the same path=P belongs to one
 * link of two ends. The first takes end 0: it binds the unix datagram
 * socket P.0 and sends to P.1; the second finds P.0 taken and takes end 1:
 * it binds P.1 and sends to P.0. Start order does not matter, and either
 * side may restart: frames sent while the other end is absent are dropped
 * and counted. One datagram is one Ethernet frame, without any header. An
 * end whose socket file is left behind by a process that died is taken
 * over (connecting to it is refused); a third instance is refused. Each
 * instance removes its own socket file when it exits. Access is governed
 * by the directory's permissions. Any local process may inject frames by
 * sending datagrams to P.0 or P.1.
 */

#define SOCK_BUF_BYTES (1 << 20)

struct sock {
	struct sockaddr_un local, remote;
	bool bound;
	uint64_t peer_absent;      /* frames dropped: no socket at the other end */
	uint64_t peer_busy;        /* frames dropped: its receive queue was full */
	uint64_t send_errors;      /* other failed sends */
	struct ratelimit rl;
};

static int sock_send(struct net_backend *b, unsigned q, const struct iovec *iov, int iovcnt)
{
	struct sock *s = b->priv;
	struct msghdr m = {
		.msg_name = &s->remote, .msg_namelen = sizeof(s->remote),
		.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt,
	};
	for (;;) {
		if (sendmsg(b->rx_fd[0], &m, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0)
			return 0;
		int e = errno;
		if (e == EINTR)
			continue;
		if (e == ENOENT || e == ECONNREFUSED) {
			s->peer_absent++;
			return -ENOTCONN;
		}
		if (e == EAGAIN || e == ENOBUFS) {
			s->peer_busy++;
			return -EAGAIN;
		}
		s->send_errors++;
		log_ratelimited(&s->rl, LOG_WARN, "socket %s: send: %s; frame dropped",
				s->remote.sun_path, strerror(e));
		return -e;
	}
}

static ssize_t sock_recv(struct net_backend *b, unsigned q, void *buf, size_t len)
{
	for (;;) {
		ssize_t n = recv(b->rx_fd[0], buf, len, MSG_DONTWAIT | MSG_TRUNC);
		if (n > (ssize_t)len)
			return -EMSGSIZE;
		if (n >= 0)
			return n;
		if (errno != EINTR)
			return -errno;
	}
}

static unsigned sock_stats(struct net_backend *b, struct net_be_stat *out, unsigned max)
{
	struct sock *s = b->priv;
	struct net_be_stat st[] = {
		{ "peer_absent", s->peer_absent },
		{ "peer_busy", s->peer_busy },
		{ "send_errors", s->send_errors },
	};
	unsigned n = sizeof(st) / sizeof(st[0]) < max ? sizeof(st) / sizeof(st[0]) : max;
	memcpy(out, st, n * sizeof(st[0]));
	return n;
}

static void sock_close(struct net_backend *b)
{
	struct sock *s = b->priv;
	if (b->rx_fd[0] >= 0)
		close(b->rx_fd[0]);
	b->rx_fd[0] = -1;
	if (s && s->bound)
		unlink(s->local.sun_path);
	free(s);
	b->priv = NULL;
}

static const struct net_backend_ops sock_ops = {
	.send = sock_send,
	.recv = sock_recv,
	.stats = sock_stats,
	.close = sock_close,
};

static struct sockaddr_un addr_of(const char *base, int end)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	snprintf(a.sun_path, sizeof(a.sun_path), "%s.%d", base, end);
	return a;
}

/* Is a socket bound at `a`? A file left by a dead process refuses connections. */
static bool alive(const struct sockaddr_un *a)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return true; /* cannot tell: do not touch it */
	bool up = connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0 || errno != ECONNREFUSED;
	close(fd);
	return up;
}

/* Tries to take end `end`. Returns 0, -EADDRINUSE (taken by a live
 * instance), or another -errno with a message. */
static int take_end(struct net_backend *b, struct sock *s, const char *base, int end,
		    struct error *err)
{
	struct sockaddr_un a = addr_of(base, end);
	if (!bind(b->rx_fd[0], (struct sockaddr *)&a, sizeof(a)))
		goto bound;
	if (errno != EADDRINUSE)
		return error_set(err, -errno, "socket: cannot bind %s: %s", a.sun_path, strerror(errno));
	struct stat st;
	if (lstat(a.sun_path, &st) == 0 && !S_ISSOCK(st.st_mode))
		return error_set(err, -EEXIST, "socket: %s exists and is not a socket", a.sun_path);
	if (alive(&a))
		return -EADDRINUSE;
	if (unlink(a.sun_path) && errno != ENOENT)
		return error_set(err, -errno, "socket: cannot remove stale %s: %s", a.sun_path,
				 strerror(errno));
	if (bind(b->rx_fd[0], (struct sockaddr *)&a, sizeof(a)))
		return errno == EADDRINUSE ? -EADDRINUSE
					   : error_set(err, -errno, "socket: cannot bind %s: %s",
						       a.sun_path, strerror(errno));
bound:
	s->local = a;
	s->remote = addr_of(base, 1 - end);
	s->bound = true;
	return 0;
}

int net_socket_open(struct net_backend *b, const struct net_open_cfg *cfg, struct error *err)
{
	struct sock *s = calloc(1, sizeof(*s));
	if (!s)
		return error_set(err, -ENOMEM, "socket: out of memory");
	b->ops = &sock_ops;
	b->priv = s;
	b->kind = "socket";
	b->nqueues = 1;
	size_t len = strnlen(cfg->path, sizeof(cfg->path));
	if (len == 0 || len + 3 > sizeof(s->local.sun_path) || len >= sizeof(cfg->path))
		return error_set(err, -ENAMETOOLONG, "socket: path must have 1 to %zu characters",
				 sizeof(s->local.sun_path) - 3 < sizeof(cfg->path) - 1
					 ? sizeof(s->local.sun_path) - 3 : sizeof(cfg->path) - 1);
	b->rx_fd[0] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (b->rx_fd[0] < 0)
		return error_set(err, -errno, "socket: %s", strerror(errno));
	int sz = SOCK_BUF_BYTES;
	setsockopt(b->rx_fd[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)); /* best effort */
	setsockopt(b->rx_fd[0], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	int ret = take_end(b, s, cfg->path, 0, err);
	if (ret == -EADDRINUSE)
		ret = take_end(b, s, cfg->path, 1, err);
	if (ret == -EADDRINUSE)
		return error_set(err, -EADDRINUSE, "socket: %s.0 and %s.1 are both in use: two "
				 "instances are already joined on %s", cfg->path, cfg->path, cfg->path);
	if (ret)
		return ret;
	snprintf(b->desc, sizeof(b->desc), "socket %s -> %s", s->local.sun_path, s->remote.sun_path);
	return 0;
}
