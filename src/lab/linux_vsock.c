/* Linux lab: the host's ends of the guest's vsock workloads, an echo service (round trips) and a sink (bulk), on unix sockets PATH_P or AF_VSOCK ports. */
#include "lab/linux_lab.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

struct ll_vsock_srv {
	pthread_t thread;
	int listen_fd[2];          /* [0]: echo (LL_VSOCK_RR_PORT), [1]: sink (LL_VSOCK_BULK_PORT) */
	int stop_fd;               /* eventfd: written by ll_vsock_stop */
	char path[2][sizeof(((struct sockaddr_un *)0)->sun_path)]; /* unix: removed at stop */
	char buf[65536];
};

static int listen_on(struct ll_vsock_srv *s, unsigned i, enum ll_vsock kind, const char *path,
		     unsigned port, struct error *err)
{
	int fd = socket(kind == LL_VSOCK_UNIX ? AF_UNIX : AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return error_set(err, -errno, "msivm lab: vsock service: socket: %s%s", strerror(errno),
				 kind == LL_VSOCK_VHOST ? " (AF_VSOCK: is vhost_vsock loaded?)" : "");
	s->listen_fd[i] = fd;
	int r;
	if (kind == LL_VSOCK_UNIX) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		if (snprintf(a.sun_path, sizeof(a.sun_path), "%s_%u", path, port) >=
		    (int)sizeof(a.sun_path))
			return error_set(err, -ENAMETOOLONG, "msivm lab: vsock path %s too long", path);
		unlink(a.sun_path);
		r = bind(fd, (struct sockaddr *)&a, sizeof(a));
		if (!r)
			snprintf(s->path[i], sizeof(s->path[i]), "%s", a.sun_path);
	} else {
		struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY,
					 .svm_port = port };
		r = bind(fd, (struct sockaddr *)&a, sizeof(a));
	}
	if (r || listen(fd, 4))
		return error_set(err, -errno, "msivm lab: vsock service on port %u: %s", port,
				 strerror(errno));
	return 0;
}

/* Waits for fd to be readable; false when stopped (or the poll failed). */
static bool wait_readable(struct ll_vsock_srv *s, int fd)
{
	struct pollfd p[2] = { { fd, POLLIN, 0 }, { s->stop_fd, POLLIN, 0 } };
	for (;;) {
		int n = poll(p, 2, -1);
		if (n < 0 && errno == EINTR)
			continue;
		return n > 0 && !p[1].revents;
	}
}

/* One connection: echoed back (round trips) or read to its end (sink), then closed. */
static void serve(struct ll_vsock_srv *s, int c, bool echo)
{
	while (wait_readable(s, c)) {
		ssize_t n = read(c, s->buf, sizeof(s->buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t off = 0; echo && off < n;) {
			ssize_t w = write(c, s->buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				goto out;
			off += w;
		}
	}
out:
	close(c);
}

static void *run(void *arg)
{
	struct ll_vsock_srv *s = arg;
	for (;;) {
		struct pollfd p[3] = { { s->listen_fd[0], POLLIN, 0 }, { s->listen_fd[1], POLLIN, 0 },
				       { s->stop_fd, POLLIN, 0 } };
		int n = poll(p, 3, -1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || p[2].revents)
			return NULL;
		for (unsigned i = 0; i < 2; i++) {
			if (!p[i].revents)
				continue;
			int c = accept4(s->listen_fd[i], NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0)
				serve(s, c, i == 0);
		}
	}
}

static void release(struct ll_vsock_srv *s)
{
	for (unsigned i = 0; i < 2; i++) {
		if (s->listen_fd[i] >= 0)
			close(s->listen_fd[i]);
		if (s->path[i][0])
			unlink(s->path[i]);
	}
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	free(s);
}

struct ll_vsock_srv *ll_vsock_start(enum ll_vsock kind, const char *path, struct error *err)
{
	struct ll_vsock_srv *s = calloc(1, sizeof(*s));
	if (!s) {
		error_set(err, -ENOMEM, "msivm lab: out of memory");
		return NULL;
	}
	s->listen_fd[0] = s->listen_fd[1] = -1;
	s->stop_fd = eventfd(0, EFD_CLOEXEC);
	int e = s->stop_fd < 0 ? error_set(err, -errno, "msivm lab: eventfd: %s", strerror(errno)) : 0;
	if (!e)
		e = listen_on(s, 0, kind, path, LL_VSOCK_RR_PORT, err);
	if (!e)
		e = listen_on(s, 1, kind, path, LL_VSOCK_BULK_PORT, err);
	if (!e && (e = pthread_create(&s->thread, NULL, run, s)))
		error_set(err, -e, "msivm lab: vsock service thread: %s", strerror(e));
	if (e) {
		release(s);
		return NULL;
	}
	return s;
}

void ll_vsock_stop(struct ll_vsock_srv *s)
{
	if (!s)
		return;
	uint64_t one = 1;
	if (write(s->stop_fd, &one, sizeof(one)) != sizeof(one))
		perror("msivm lab: vsock service stop");
	pthread_join(s->thread, NULL);
	release(s);
}
