/* `msivm remote`: a small client of the API socket (as cloud-hypervisor's ch-remote): one request, the reply's body on stdout. */
#include "api/api.h"

#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/parse.h"

#define EXIT_REMOTE_USAGE 125
#define EXIT_REMOTE_TIMEOUT 124 /* msivm did not answer within --timeout */
#define REPLY_MAX (1 << 20)
#define TIMEOUT_DEFAULT_S 30

static const char remote_usage[] =
	"usage: msivm remote --api-socket PATH [--timeout SECONDS] COMMAND\n"
	"Sends one request to a running msivm's API socket and prints the JSON reply.\n"
	"  info           GET /vm: state, boot count, configuration\n"
	"  metrics        GET /metrics: interrupts per vector, VM exits, device counters\n"
	"  pause, resume, power-button, shutdown, reboot, resize-disks\n"
	"                 PUT /vm/COMMAND\n"
	"  dump           PUT /vm/dump: an ELF core of the guest and msivm's device view\n"
	"                 now, in the --dump-on-crash directory (the guest paused meanwhile)\n"
	"  snapshot --state FILE [--mem FILE] [--paused] [--overwrite]\n"
	"                 PUT /vm/snapshot: the VM's state and its RAM to two new files (the\n"
	"                 guest paused meanwhile; --paused: it stays paused after); a file\n"
	"                 that exists is refused unless --overwrite (the new pair is written\n"
	"                 under other names, then renamed over the old one); restore with\n"
	"                 msivm run --restore state=FILE,mem=FILE, which refuses a memory\n"
	"                 file of another snapshot. Without --mem (a VM\n"
	"                 whose RAM is its --mem-file, which is then flushed): --paused is\n"
	"                 needed, and --restore state=FILE maps that file\n"
	"  --timeout S    give up when the whole reply has not come within S seconds\n"
	"                 (default 30; 0 waits for ever)\n"
	"Exit status: 0 for a 2xx reply, 1 for another reply, 124 when msivm did not answer\n"
	"within --timeout, 125 when no request could be sent.\n";

/* `p` as an absolute path: the directory resolved, the last part kept (it need not exist). */
static char *realpath_new(const char *p)
{
	if (p[0] == '/')
		return strdup(p);
	char *cwd = getcwd(NULL, 0), *out = NULL;
	if (cwd && asprintf(&out, "%s/%s", cwd, p) < 0)
		out = NULL;
	free(cwd);
	return out;
}

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

/* Waits until fd is readable or the deadline (CLOCK_MONOTONIC ns, 0: none)
 * passes. Returns 0 or -ETIMEDOUT. */
static int wait_readable(int fd, uint64_t deadline)
{
	for (;;) {
		int ms = -1;
		if (deadline) {
			uint64_t now = clock_now_ns();
			if (now >= deadline)
				return -ETIMEDOUT;
			ms = (int)((deadline - now + 999999) / 1000000);
		}
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, ms);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return 0; /* recv will say what is wrong */
	}
}

/* The connect and send are bounded by timeout_s too. */
int api_request(const char *path, const char *method, const char *url, const char *body,
		unsigned timeout_s, char **reply)
{
	uint64_t deadline = timeout_s ? clock_now_ns() + timeout_s * 1000000000ULL : 0;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "msivm remote: socket path too long: %s\n", path);
		return -ENAMETOOLONG;
	}
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct timeval tv = { .tv_sec = timeout_s };
	if (fd >= 0 && timeout_s) /* connect (a full backlog) and send wait at most this long */
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = errno;
		fprintf(stderr, "msivm remote: cannot connect to %s: %s\n", path, strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	char req[API_MAX_BODY + 256];
	int n = snprintf(req, sizeof(req),
			 "%s %s HTTP/1.1\r\nHost: localhost\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n%s", method, url, strlen(body), body);
	if (n < 0 || (size_t)n >= sizeof(req)) {
		fprintf(stderr, "msivm remote: the request is too long\n");
		close(fd);
		return -E2BIG;
	}
	char *buf = malloc(REPLY_MAX + 1);
	size_t len = 0;
	int ret = buf ? send_all(fd, req, (size_t)n) : -ENOMEM;
	while (!ret && len < REPLY_MAX) {
		if ((ret = wait_readable(fd, deadline)))
			break;
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
	if (ret == -ETIMEDOUT || ret == -EAGAIN) {
		fprintf(stderr, "msivm remote: %s: no reply within %u s (msivm is not answering; "
			"--timeout sets the limit)\n", path, timeout_s);
		free(buf);
		return -ETIMEDOUT;
	}
	if (ret) {
		fprintf(stderr, "msivm remote: %s: %s\n", path, strerror(-ret));
		free(buf);
		return ret;
	}
	buf[len] = 0;
	*reply = buf;
	return 0;
}

/* The snapshot request's body; the paths made absolute (msivm's working directory may differ).
 * No mem: the VM's --mem-file holds the RAM. */
static char *snapshot_body(const char *state, const char *mem, bool resume, bool overwrite)
{
	char *s = realpath_new(state), *m = mem ? realpath_new(mem) : NULL;
	json_t *j = !s || (mem && !m) ? NULL
		  : m ? json_pack("{s:s,s:s,s:b,s:b}", "state", s, "mem", m, "resume", resume,
				  "overwrite", overwrite)
		      : json_pack("{s:s,s:b,s:b}", "state", s, "resume", resume, "overwrite", overwrite);
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	free(s);
	free(m);
	return text;
}

int api_client_main(int argc, char **argv)
{
	const char *path = NULL, *cmd = NULL, *tmo = NULL, *state = NULL, *mem = NULL;
	bool stay_paused = false, overwrite = false;
	unsigned timeout_s = TIMEOUT_DEFAULT_S;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(remote_usage, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "--api-socket") && i + 1 < argc)
			path = argv[++i];
		else if (!strncmp(argv[i], "--api-socket=", 13))
			path = argv[i] + 13;
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			tmo = argv[++i];
		else if (!strncmp(argv[i], "--timeout=", 10))
			tmo = argv[i] + 10;
		else if (!strcmp(argv[i], "--state") && i + 1 < argc)
			state = argv[++i];
		else if (!strcmp(argv[i], "--mem") && i + 1 < argc)
			mem = argv[++i];
		else if (!strcmp(argv[i], "--paused"))
			stay_paused = true;
		else if (!strcmp(argv[i], "--overwrite"))
			overwrite = true;
		else if (!cmd && argv[i][0] != '-')
			cmd = argv[i];
		else {
			fprintf(stderr, "msivm remote: unexpected argument '%s' (see msivm remote --help)\n", argv[i]);
			return EXIT_REMOTE_USAGE;
		}
	}
	uint64_t t = 0;
	if (tmo && parse_uint(tmo, 0, 86400, &t)) {
		fprintf(stderr, "msivm remote: bad --timeout '%s': seconds, 0 to 86400\n", tmo);
		return EXIT_REMOTE_USAGE;
	}
	if (tmo)
		timeout_s = (unsigned)t;
	if (!path || !cmd) {
		fprintf(stderr, "msivm remote: %s (see msivm remote --help)\n",
			!path ? "--api-socket PATH is required" : "which command?");
		return EXIT_REMOTE_USAGE;
	}
	static const char *const puts_[] = { "pause", "resume", "power-button", "shutdown",
					     "reboot", "resize-disks", "dump", "snapshot" };
	bool snap = !strcmp(cmd, "snapshot");
	if (snap != (state || mem || stay_paused || overwrite) || (snap && !state)) {
		fprintf(stderr, "msivm remote: %s\n", snap ? "snapshot needs --state FILE (and --mem "
			"FILE unless the VM's RAM is its --mem-file)"
			: "--state, --mem, --paused and --overwrite belong to the snapshot command");
		return EXIT_REMOTE_USAGE;
	}
	char *req_body = snap ? snapshot_body(state, mem, !stay_paused, overwrite) : strdup("");
	if (!req_body) {
		fprintf(stderr, "msivm remote: out of memory\n");
		return EXIT_REMOTE_USAGE;
	}
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
			free(req_body);
			return EXIT_REMOTE_USAGE;
		}
		method = "PUT";
		snprintf(url, sizeof(url), "/vm/%s", cmd);
	}
	char *reply = NULL;
	int ret = api_request(path, method, url, req_body, timeout_s, &reply);
	free(req_body);
	if (ret)
		return ret == -ETIMEDOUT ? EXIT_REMOTE_TIMEOUT : EXIT_REMOTE_USAGE;
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
