/* vsk: the stream ends of check-linux's vsock checks, static for L1 (unix sockets, msivm's hybrid protocol) and L2 (AF_VSOCK), and the Linux lab's vsock workloads (L2). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

/*
 * vsk vsock-listen PORT [DELAY]  accept one vsock stream on PORT, (DELAY s later) copy it to stdout
 * vsk vsock-send CID PORT        connect to CID:PORT, copy stdin to it, half-close, wait (L2)
 * vsk vsock-send-close CID PORT  the same, but close right after the last write (L1)
 * vsk vsock-echo PORT N          accept N streams on PORT at once, echo each to its end (L1)
 * vsk unix-echo PATH N           the same on the unix socket PATH (L1: PATH_P)
 * vsk vsock-many CID PORT N      N connections to an echo service, all open at once: a line on
 *                                each, every line back on its own connection; "many N ok" (L2)
 * vsk unix-listen PATH           bind PATH, accept one stream, copy it to stdout (L1: PATH_P)
 * vsk unix-connect PATH PORT     "CONNECT PORT\n", expect "OK <n>\n", copy stdin, half-close (L1)
 * vsk unix-connect-close PATH PORT  the same, but close right after the last write (L1)
 * vsk rr CID PORT COUNT SIZE     COUNT round trips of SIZE bytes to an echo service; prints
 *                                "rr count=N size=S min_us= p50_us= p99_us= max_us= mean_us=" (L2)
 * vsk bulk CID PORT MIB          MIB MiB to a sink, timed until it closed (had them all); prints
 *                                "bulk bytes=N secs=S mib_s=R" (L2)
 * vsk chat PATH SECS [EXPECT SEND]...  connect to the unix socket PATH (waiting up to SECS s for
 *                                it); for each pair, read until EXPECT has been seen, then write
 *                                SEND and a carriage return, all within SECS s; then read on until
 *                                the peer closes. What was read goes to stdout (a console socket's
 *                                client and a login through it, L1)
 * vsk now                        the wall clock (CLOCK_REALTIME) as seconds.nanoseconds
 * vsk unix-ask PATH PORT         "CONNECT PORT\n", expect "OK <n>\n", copy stdin, half-close, then
 *                                what comes back to stdout until the peer closes (L1: Kata's
 *                                dial of its agent through the hybrid vsock)
 * vsk http PATH METHOD URL [BODY]  one HTTP/1.1 request on the unix socket PATH ("Connection:
 *                                close"); prints the status code, a newline and the body (L1:
 *                                Firecracker's API as Kata's Go driver calls it)
 * Exit 0 when the whole stream went through, 1 with a line on stderr otherwise.
 */

static int die(const char *what)
{
	fprintf(stderr, "vsk: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Copies in to out until end of file. */
static void copy(int in, int out)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("read");
		if (n == 0)
			return;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				die("write");
			off += w;
		}
	}
}

/* Sends stdin, half-closes, then waits for the peer's end (it has taken everything). */
static void send_all(int s)
{
	copy(0, s);
	if (shutdown(s, SHUT_WR))
		die("shutdown");
	char b[256];
	while (read(s, b, sizeof(b)) > 0)
		;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int vsock_connect(const char *cid, const char *port)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = (unsigned)atoi(cid),
				 .svm_port = (unsigned)atoi(port) };
	int s = socket(AF_VSOCK, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)))
		die("vsock connect");
	return s;
}

static void full(ssize_t (*io)(int, void *, size_t), int fd, char *b, size_t n, const char *what)
{
	for (size_t off = 0; off < n;) {
		ssize_t r = io(fd, b + off, n - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EPIPE;
			die(what);
		}
		off += (size_t)r;
	}
}

static ssize_t wr(int fd, void *b, size_t n) { return write(fd, b, n); }

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Round trips: SIZE bytes out, the same SIZE back, COUNT times; latencies in microseconds. */
static int round_trips(int s, long count, long size)
{
	if (count < 1 || size < 1 || size > 65536) {
		fprintf(stderr, "vsk: rr: COUNT >= 1 and SIZE 1 to 65536\n");
		return 2;
	}
	static char buf[65536];
	double *lat = malloc(sizeof(double) * (size_t)count), sum = 0;
	if (!lat)
		die("malloc");
	memset(buf, 'r', (size_t)size);
	for (long i = 0; i < count; i++) {
		double t0 = now_s();
		full(wr, s, buf, (size_t)size, "rr write");
		full(read, s, buf, (size_t)size, "rr read");
		lat[i] = (now_s() - t0) * 1e6;
		sum += lat[i];
	}
	qsort(lat, (size_t)count, sizeof(double), by_value);
	printf("rr count=%ld size=%ld min_us=%.1f p50_us=%.1f p99_us=%.1f max_us=%.1f mean_us=%.1f\n",
	       count, size, lat[0], lat[count / 2], lat[count * 99 / 100],
	       lat[count - 1], sum / (double)count);
	free(lat);
	return 0;
}

/* MIB MiB out, then half-close and wait for the sink's close: the time covers delivery. */
static int bulk(int s, long mib)
{
	static char buf[65536];
	memset(buf, 'b', sizeof(buf));
	double t0 = now_s();
	for (long i = 0; i < mib * 16; i++)
		full(wr, s, buf, sizeof(buf), "bulk write");
	if (shutdown(s, SHUT_WR))
		die("shutdown");
	while (read(s, buf, sizeof(buf)) > 0)
		;
	double secs = now_s() - t0;
	printf("bulk bytes=%ld secs=%.3f mib_s=%.2f\n", mib << 20, secs, (double)mib / secs);
	return 0;
}

/* A listening socket: an AF_VSOCK port (path NULL) or the unix socket path. */
static int listener(const char *path, const char *port, int backlog)
{
	int l;
	if (path) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		if (strlen(path) >= sizeof(a.sun_path)) {
			errno = ENAMETOOLONG;
			die(path);
		}
		strcpy(a.sun_path, path);
		l = socket(AF_UNIX, SOCK_STREAM, 0);
		if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, backlog))
			die("unix listen");
	} else {
		struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY,
					 .svm_port = (unsigned)atoi(port) };
		l = socket(AF_VSOCK, SOCK_STREAM, 0);
		if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, backlog))
			die("vsock listen");
	}
	return l;
}

/* Accepts n streams, each echoed to its end by a child; 0 when every child echoed to the end. */
static int echo_all(int l, long n)
{
	for (long i = 0; i < n; i++) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			die("accept");
		pid_t p = fork();
		if (p < 0)
			die("fork");
		if (!p) {
			copy(c, c);
			_exit(0);
		}
		close(c);
	}
	int st, bad = 0;
	while (wait(&st) > 0)
		bad += !WIFEXITED(st) || WEXITSTATUS(st);
	return bad ? 1 : 0;
}

/* n connections open at once; a numbered line out on each, then each read back. */
static int many(const char *cid, const char *port, long n)
{
	if (n < 1 || n > 1024) {
		fprintf(stderr, "vsk: many: N 1 to 1024\n");
		return 2;
	}
	int *s = calloc((size_t)n, sizeof(int));
	char line[32], back[32];
	if (!s)
		die("calloc");
	for (long i = 0; i < n; i++)
		s[i] = vsock_connect(cid, port);
	for (long i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "connection %06ld\n", i);
		full(wr, s[i], line, strlen(line), "many write");
	}
	for (long i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "connection %06ld\n", i);
		full(read, s[i], back, strlen(line), "many read");
		if (memcmp(line, back, strlen(line))) {
			fprintf(stderr, "vsk: connection %ld got another's line back\n", i);
			return 1;
		}
	}
	for (long i = 0; i < n; i++)
		close(s[i]);
	printf("many %ld ok\n", n);
	free(s);
	return 0;
}

static int unix_addr(const char *path, struct sockaddr_un *a)
{
	*a = (struct sockaddr_un){ .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a->sun_path)) {
		errno = ENAMETOOLONG;
		die(path);
	}
	strcpy(a->sun_path, path);
	return socket(AF_UNIX, SOCK_STREAM, 0);
}

/* Waits up to secs for PATH to accept a connection (the VMM creates it when it starts). */
static int unix_connect_wait(const char *path, long secs)
{
	struct sockaddr_un a;
	for (long tries = 0;; tries++) {
		int s = unix_addr(path, &a);
		if (s >= 0 && !connect(s, (struct sockaddr *)&a, sizeof(a)))
			return s;
		if (s >= 0)
			close(s);
		if (tries >= secs * 10)
			die("unix connect");
		usleep(100000);
	}
}

/* An expect/send dialogue over a unix socket (see the usage above), then the rest of the stream
 * to stdout until the peer closes. SEND "" sends only the CR. */
static int chat(const char *path, long secs, int n, char **pairs)
{
	int s = unix_connect_wait(path, secs);
	static char seen[1 << 16];
	size_t len = 0, from = 0;
	double end = now_s() + (double)secs;
	struct timeval tv = { .tv_sec = 1 };
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (int i = 0; i + 1 < n; i += 2) {
		while (!memmem(seen + from, len - from, pairs[i], strlen(pairs[i]))) {
			if (now_s() > end || len == sizeof(seen)) {
				fprintf(stderr, "vsk: chat: no '%s' in %ld s\n", pairs[i], secs);
				fwrite(seen, 1, len, stdout);
				return 1;
			}
			ssize_t r = read(s, seen + len, sizeof(seen) - len);
			if (r == 0) {
				fprintf(stderr, "vsk: chat: the socket closed before '%s'\n", pairs[i]);
				fwrite(seen, 1, len, stdout);
				return 1;
			}
			if (r > 0)
				len += (size_t)r;
		}
		from = len; /* the next EXPECT must come after this one */
		full(wr, s, pairs[i + 1], strlen(pairs[i + 1]), "chat write");
		full(wr, s, "\r", 1, "chat write");
	}
	fwrite(seen, 1, len, stdout);
	fflush(stdout);
	for (;;) { /* the rest, until the VMM closes its end */
		ssize_t r = read(s, seen, sizeof(seen));
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			return 0;
		if (r > 0 && fwrite(seen, 1, (size_t)r, stdout) != (size_t)r)
			return 1;
	}
}

/* vsk http: one request, the status code and the body on stdout. */
static int http(const char *path, const char *method, const char *url, const char *body)
{
	struct sockaddr_un a;
	int s = unix_addr(path, &a);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)))
		die("unix connect");
	char head[512];
	size_t blen = body ? strlen(body) : 0;
	int n = snprintf(head, sizeof(head), "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
			 "Accept: application/json\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\n\r\n", method, url, blen);
	if (n < 0 || (size_t)n >= sizeof(head) || write(s, head, (size_t)n) != n ||
	    (blen && write(s, body, blen) != (ssize_t)blen))
		die("write request");
	static char reply[1 << 16];
	size_t got = 0;
	for (ssize_t r; got < sizeof(reply) - 1 && (r = read(s, reply + got, sizeof(reply) - 1 - got)) != 0;) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("read reply");
		got += (size_t)r;
	}
	reply[got] = 0;
	int status = 0;
	const char *sep = strstr(reply, "\r\n\r\n");
	if (sscanf(reply, "HTTP/1.%*d %d", &status) != 1 || !sep) {
		fprintf(stderr, "vsk: not an HTTP reply (%zu bytes)\n", got);
		return 1;
	}
	printf("%d\n%s\n", status, sep + 4);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "now")) {
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		printf("%lld.%09ld\n", (long long)t.tv_sec, t.tv_nsec);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "chat"))
		return chat(argv[2], atol(argv[3]), argc - 4, argv + 4);
	if (argc >= 3 && !strcmp(argv[1], "vsock-listen")) {
		int s = accept(listener(NULL, argv[2], 1), NULL, NULL);
		if (s < 0)
			die("accept");
		if (argc >= 4)
			sleep((unsigned)atoi(argv[3]));
		copy(s, 1);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "vsock-send")) {
		send_all(vsock_connect(argv[2], argv[3]));
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "vsock-send-close")) {
		copy(0, vsock_connect(argv[2], argv[3]));
		return 0; /* the exit closes it, whatever the peer has read */
	}
	if (argc >= 4 && !strcmp(argv[1], "vsock-echo"))
		return echo_all(listener(NULL, argv[2], 128), atol(argv[3]));
	if (argc >= 4 && !strcmp(argv[1], "unix-echo"))
		return echo_all(listener(argv[2], NULL, 128), atol(argv[3]));
	if (argc >= 5 && !strcmp(argv[1], "vsock-many"))
		return many(argv[2], argv[3], atol(argv[4]));
	if (argc >= 6 && !strcmp(argv[1], "rr"))
		return round_trips(vsock_connect(argv[2], argv[3]), atol(argv[4]), atol(argv[5]));
	if (argc >= 5 && !strcmp(argv[1], "bulk"))
		return bulk(vsock_connect(argv[2], argv[3]), atol(argv[4]));
	if (argc >= 3 && !strcmp(argv[1], "unix-listen")) {
		int s = accept(listener(argv[2], NULL, 1), NULL, NULL);
		if (s < 0)
			die("accept");
		copy(s, 1);
		return 0;
	}
	if (argc >= 5 && !strcmp(argv[1], "http"))
		return http(argv[2], argv[3], argv[4], argc >= 6 ? argv[5] : NULL);
	if (argc >= 4 && (!strcmp(argv[1], "unix-connect") || !strcmp(argv[1], "unix-connect-close") ||
			  !strcmp(argv[1], "unix-ask"))) {
		struct sockaddr_un a;
		int s = unix_addr(argv[2], &a);
		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)))
			die("unix connect");
		char line[64];
		int n = snprintf(line, sizeof(line), "CONNECT %s\n", argv[3]);
		if (write(s, line, (size_t)n) != n)
			die("write CONNECT");
		size_t got = 0;
		while (got < sizeof(line) - 1) { /* byte by byte: nothing past the answer is taken */
			ssize_t r = read(s, line + got, 1);
			if (r <= 0) {
				fprintf(stderr, "vsk: no answer to CONNECT %s (%zu bytes)\n", argv[3], got);
				return 1;
			}
			if (line[got++] == '\n')
				break;
		}
		line[got] = 0;
		if (strncmp(line, "OK ", 3)) {
			fprintf(stderr, "vsk: CONNECT %s answered '%s'\n", argv[3], line);
			return 1;
		}
		fprintf(stderr, "vsk: %s", line);
		if (!strcmp(argv[1], "unix-connect-close")) {
			copy(0, s); /* then the exit closes it */
		} else if (!strcmp(argv[1], "unix-ask")) {
			copy(0, s);
			if (shutdown(s, SHUT_WR))
				die("shutdown");
			copy(s, 1);
		} else
			send_all(s);
		return 0;
	}
	fprintf(stderr, "usage: vsk vsock-listen PORT | vsock-send CID PORT | unix-listen PATH | "
		"unix-connect PATH PORT | rr CID PORT COUNT SIZE | bulk CID PORT MIB | ... (see vsk.c)\n");
	return 2;
}
