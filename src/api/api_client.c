/* `msivm remote`: a small client of the API socket (as cloud-hypervisor's ch-remote): one request, the reply's body on stdout. */
#include "api/api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define EXIT_REMOTE_USAGE 125
#define REPLY_MAX (1 << 20)

static const char remote_usage[] =
	"usage: msivm remote --api-socket PATH COMMAND\n"
	"Sends one request to a running msivm's API socket and prints the JSON reply.\n"
	"  info           GET /vm: state, boot count, configuration\n"
	"  metrics        GET /metrics: interrupts per vector, VM exits, device counters\n"
	"  pause, resume, power-button, shutdown, reboot, resize-disks\n"
	"                 PUT /vm/COMMAND\n"
	"Exit status: 0 for a 2xx reply, 1 for another reply, 125 when no request could be sent.\n";

/* Writes all of buf. Returns 0 or -errno. */
static int send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* One request on a fresh connection ("Connection: close"); *reply gets the
 * whole response, NUL-terminated. Returns 0 or -errno (message on stderr). */
static int exchange(const char *path, const char *method, const char *url, char **reply)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "msivm remote: socket path too long: %s\n", path);
		return -ENAMETOOLONG;
	}
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = errno;
		fprintf(stderr, "msivm remote: cannot connect to %s: %s\n", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	char req[256];
	int n = snprintf(req, sizeof(req),
			 "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n"
			 "Connection: close\r\n\r\n", method, url);
	char *buf = malloc(REPLY_MAX + 1);
	size_t len = 0;
	int ret = buf ? send_all(fd, req, (size_t)n) : -ENOMEM;
	while (!ret && len < REPLY_MAX) {
		ssize_t r = recv(fd, buf + len, REPLY_MAX - len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			ret = -errno;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (ret) {
		fprintf(stderr, "msivm remote: %s: %s\n", path, strerror(-ret));
		free(buf);
		return ret;
	}
	buf[len] = 0;
	*reply = buf;
	return 0;
}

int api_client_main(int argc, char **argv)
{
	const char *path = NULL, *cmd = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(remote_usage, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--api-socket") && i + 1 < argc)
			path = argv[++i];
		else if (!strncmp(argv[i], "--api-socket=", 13))
			path = argv[i] + 13;
		else if (!cmd && argv[i][0] != '-')
			cmd = argv[i];
		else {
			fprintf(stderr, "msivm remote: unexpected argument '%s' (see msivm remote --help)\n", argv[i]);
			return EXIT_REMOTE_USAGE;
		}
	}
	if (!path || !cmd) {
		fprintf(stderr, "msivm remote: %s (see msivm remote --help)\n",
			!path ? "--api-socket PATH is required" : "which command?");
		return EXIT_REMOTE_USAGE;
	}
	static const char *const puts_[] = { "pause", "resume", "power-button", "shutdown",
					     "reboot", "resize-disks" };
	char url[64];
	const char *method = "GET";
	if (!strcmp(cmd, "info")) {
		snprintf(url, sizeof(url), "/vm");
	} else if (!strcmp(cmd, "metrics")) {
		snprintf(url, sizeof(url), "/metrics");
	} else {
		size_t i = 0;
		while (i < sizeof(puts_) / sizeof(puts_[0]) && strcmp(cmd, puts_[i]))
			i++;
		if (i == sizeof(puts_) / sizeof(puts_[0])) {
			fprintf(stderr, "msivm remote: unknown command '%s' (see msivm remote --help)\n", cmd);
			return EXIT_REMOTE_USAGE;
		}
		method = "PUT";
		snprintf(url, sizeof(url), "/vm/%s", cmd);
	}
	char *reply = NULL;
	if (exchange(path, method, url, &reply))
		return EXIT_REMOTE_USAGE;
	unsigned status = 0;
	const char *body = strstr(reply, "\r\n\r\n");
	if (sscanf(reply, "HTTP/1.%*c %u", &status) != 1 || !body) {
		fprintf(stderr, "msivm remote: not an HTTP reply from %s\n", path);
		free(reply);
		return EXIT_REMOTE_USAGE;
	}
	printf("%s\n", body + 4);
	free(reply);
	if (status / 100 != 2)
		fprintf(stderr, "msivm remote: HTTP %u\n", status);
	return status / 100 == 2 ? 0 : 1;
}
