/* Unix listening sockets: length check, 0600 by umask around bind, clear messages. */
#include "util/unix_socket.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

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
				 ret == -EADDRINUSE ? " (remove a stale socket first)" : "");
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
