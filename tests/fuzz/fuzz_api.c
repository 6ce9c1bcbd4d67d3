/* Fuzz target: the API server (libmicrohttpd + msivm's request handler and routes) fed one connection's raw bytes, between boots (no VM). */
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/api.h"
#include "fuzz_common.h"
#include "vmm/seccomp.h"

#define MAX_IDLE_TURNS 64 /* MHD_run calls in a row that send nothing and do not close: a hang */

static struct api_target target = { .lock = PTHREAD_MUTEX_INITIALIZER, .boot = 2,
				    .config_json = "{\"mem\":\"256M\"}" };
static struct MHD_Daemon *mhd;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	char path[64];
	snprintf(path, sizeof(path), "/tmp/msivm-fuzz-api-%d.sock", (int)getpid());
	struct api_server *s;
	struct error err;
	if (api_server_start(&s, path, &target, SECCOMP_OFF, &err)) {
		fprintf(stderr, "fuzz_api: %s\n", err.msg);
		abort();
	}
	unlink(path); /* connections come in by MHD_add_connection, not by the socket */
	mhd = api_server_mhd(s);
	return 0;
}

/* The input is what a client sends on one connection before it half-closes.
 * Oracles: the server closes the connection, never spending MAX_IDLE_TURNS
 * turns in a row without sending a byte (pipelined requests take a turn
 * each), and what it sends (if anything) is HTTP. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		abort();
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (MHD_add_connection(mhd, sv[1], (struct sockaddr *)&sa, sizeof(sa)) != MHD_YES)
		abort();
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	size_t off = 0, got = 0;
	char reply[64];
	bool closed = false;
	for (int idle = 0; idle < MAX_IDLE_TURNS && !closed; idle++) {
		while (off < size) {
			ssize_t n = send(sv[0], data + off, size - off, MSG_NOSIGNAL);
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		if (off == size)
			shutdown(sv[0], SHUT_WR);
		MHD_run(mhd);
		char buf[4096];
		ssize_t n;
		while ((n = recv(sv[0], buf, sizeof(buf), 0)) > 0) {
			idle = -1;
			size_t k = sizeof(reply) - got < (size_t)n ? sizeof(reply) - got : (size_t)n;
			memcpy(reply + got, buf, k);
			got += k;
		}
		closed = n == 0 || (n < 0 && errno != EAGAIN);
	}
	close(sv[0]);
	if (!closed) {
		fprintf(stderr, "fuzz_api: %d turns without a byte or a close (%zu of %zu bytes sent)\n",
			MAX_IDLE_TURNS, off, size);
		abort();
	}
	if (got && (got < 9 || memcmp(reply, "HTTP/1.", 7))) {
		fprintf(stderr, "fuzz_api: a reply that is not HTTP: %.*s\n", (int)got, reply);
		abort();
	}
	return 0;
}
