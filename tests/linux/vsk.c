/* vsk: the stream ends of check-linux's vsock checks, static for L1 (unix sockets, msivm's hybrid protocol) and L2 (AF_VSOCK). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

/*
 * vsk vsock-listen PORT          accept one vsock stream on PORT, copy it to stdout (L2)
 * vsk vsock-send CID PORT        connect to CID:PORT, copy stdin to it, half-close, wait (L2)
 * vsk unix-listen PATH           bind PATH, accept one stream, copy it to stdout (L1: PATH_P)
 * vsk unix-connect PATH PORT     "CONNECT PORT\n", expect "OK <n>\n", copy stdin, half-close (L1)
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

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "vsock-listen")) {
		struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY,
					 .svm_port = (unsigned)atoi(argv[2]) };
		int l = socket(AF_VSOCK, SOCK_STREAM, 0);
		if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
			die("vsock listen");
		int s = accept(l, NULL, NULL);
		if (s < 0)
			die("accept");
		copy(s, 1);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "vsock-send")) {
		struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = (unsigned)atoi(argv[2]),
					 .svm_port = (unsigned)atoi(argv[3]) };
		int s = socket(AF_VSOCK, SOCK_STREAM, 0);
		if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)))
			die("vsock connect");
		send_all(s);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "unix-listen")) {
		struct sockaddr_un a;
		int l = unix_addr(argv[2], &a);
		if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1))
			die("unix listen");
		int s = accept(l, NULL, NULL);
		if (s < 0)
			die("accept");
		copy(s, 1);
		return 0;
	}
	if (argc >= 4 && !strcmp(argv[1], "unix-connect")) {
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
		send_all(s);
		return 0;
	}
	fprintf(stderr, "usage: vsk vsock-listen PORT | vsock-send CID PORT | unix-listen PATH | "
		"unix-connect PATH PORT\n");
	return 2;
}
