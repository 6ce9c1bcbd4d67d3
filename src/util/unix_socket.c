/* Unix listening sockets: length check, 0600 by umask around bind, clear messages (a path in use: live or stale). */
#include "util/unix_socket.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Why `path` is in use, for the message: not a socket, a socket something answers on (a running
 * VM: removing it would cut that VM off), or a stale one (nothing listens: it may go). */
static const char *in_use_why(const struct sockaddr_un *a)
{
	struct stat st;
	if (lstat(a->sun_path, &st) || !S_ISSOCK(st.st_mode))
		return " (a file that is not a socket: give another path)";
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return " (a socket: remove it only if no running VM uses it)";
	bool live = connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0 || errno == EAGAIN;
	bool stale = !live && errno == ECONNREFUSED;
	close(fd);
	return live ? ": another process answers on it (a running VM?): give another path"
	       : stale ? ": a stale socket, nothing answers on it: remove it and start again"
		       : " (a socket: remove it only if no running VM uses it)";
}

int unix_listen(const char *path, const char *what, bool nonblock, struct error *err)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a.sun_path))
		return error_set(err, -ENAMETOOLONG, "%s '%s': path longer than %zu bytes", what,
				 path, sizeof(a.sun_path) - 1);
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0)
		return error_set(err, -errno, "%s: socket: %s", what, strerror(errno));
	mode_t old = umask(0177); /* the socket file is born 0600 */
	int ret = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (ret || listen(fd, 16)) {
		ret = -errno;
		close(fd);
		return error_set(err, ret, "%s '%s': %s%s", what, path, strerror(-ret),
				 ret == -EADDRINUSE ? in_use_why(&a) : "");
	}
	return fd;
}

int unix_accept_one(const char *path, const char *what, struct error *err)
{
	int lfd = unix_listen(path, what, false, err);
	if (lfd < 0)
		return lfd;
	int fd;
	do
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	int ret = fd < 0 ? error_set(err, -errno, "%s '%s': accept: %s", what, path, strerror(errno))
			 : fd;
	close(lfd);
	unlink(path);
	return ret;
}
