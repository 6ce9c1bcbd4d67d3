/* The API socket: HTTP/1.1 + JSON over a unix socket to drive a running VM (as Firecracker and cloud-hypervisor). */
#ifndef MSIVM_API_API_H
#define MSIVM_API_API_H

#include <pthread.h>
#include <stddef.h>

#include "util/error.h"

struct vm;

/* One reply: an HTTP status and a JSON body (malloc'd, the caller frees; NULL: no body, as a
 * 204 has none). */
struct api_reply {
	unsigned status;
	char *body;
};

/* What the API acts on. `vm` changes at every guest reboot (main.c builds a
 * new struct vm per boot) and is NULL between boots; `lock` guards it and is
 * held while a request uses the VM, so main.c takes it to swap or clear. */
struct api_target {
	pthread_mutex_t lock;
	struct vm *vm;
	unsigned boot;            /* 1 for the first boot, +1 per guest reboot */
	const char *config_json;  /* the effective configuration as JSON, or NULL */
	int dump_dir;             /* --dump-on-crash's directory (PUT /vm/dump writes there), or -1 */
	unsigned dumps;           /* dumps written on request so far */
	/* A second route table served first (Firecracker's, src/fc): returns 1 when it answered
	 * *r, 0 to leave the request to msivm's own table. Called without `lock`. NULL: none. */
	int (*front)(struct api_target *t, const char *method, const char *url, const char *body,
		     size_t len, struct api_reply *r);
	void *front_ctx;          /* the front table's own state */
	/* Called on the API thread at least once a second, without `lock` (Firecracker's periodic
	 * metrics). NULL: none. */
	void (*tick)(struct api_target *t);
	size_t max_body;          /* request bodies above this are refused; 0: API_MAX_BODY */
};

/* Points the API at `vm` (boot number `boot`), or at nothing (NULL) while
 * the VM is between boots; waits for a request using the old one. */
void api_set_vm(struct api_target *t, struct vm *vm, unsigned boot);

#define API_MAX_BODY 4096     /* request bodies above this get 413 (400 with a front table) */

/* Serves one request: `method` and `url` as received, `body` of `len` bytes
 * (the API's requests carry none; a body over API_MAX_BODY is refused by
 * the server before this). Routes:
 *   GET /vm            {"state": "running"|"paused"|"rebooting", "boot": N, "config": {...}}
 *   GET /metrics       the --stats-json figures, live
 *   PUT /vm/pause, /vm/resume, /vm/power-button, /vm/shutdown, /vm/reboot, /vm/resize-disks
 *   PUT /vm/dump       a crash dump now (vm_dump_write: msivm-PID-apiN.{core,json} in the
 *                      --dump-on-crash directory; a running VM is paused for it and resumed)
 *                      {"result": "dumped", "core": NAME, "json": NAME, "paused_for_it": B}
 * Every reply body is JSON; errors are {"error": "..."} with 400 (a body
 * where none belongs), 404 (no such path), 405 (wrong method), 409 (the
 * VM's state forbids it: already paused, a guest without a power button
 * driver, a dump without --dump-on-crash), 503 (between boots) or 500. Never fails: a reply is always set. */
void api_route(struct api_target *t, const char *method, const char *url, const char *body,
	       size_t len, struct api_reply *r);

/* msivm's own table alone (api_route without the front table): what a front table calls to
 * act through msivm's controls. Same contract as api_route. */
void api_route_own(struct api_target *t, const char *method, const char *url, const char *body,
		   size_t len, struct api_reply *r);

struct api_server;

/* Creates the unix socket `path` (mode 0600; refused if `path` exists) and
 * the HTTP server on it, serving `t` once api_server_run starts its thread.
 * Connections from another uid than msivm's (SO_PEERCRED) get 403. Call
 * before a jail (--chroot, --user). Returns 0 or -errno with a message. */
int api_server_start(struct api_server **out, const char *path, struct api_target *t,
		     int seccomp, struct error *err);

/* Starts the API thread ("msivm-api", with its seccomp filter unless
 * SECCOMP_OFF). Call after the jail and the process filter. Returns 0 (also when the thread
 * runs already) or -errno. */
int api_server_run(struct api_server *s, struct error *err);

/* The libmicrohttpd daemon behind `s`, for tests and the fuzzer that drive it
 * themselves (MHD_add_connection + MHD_run) instead of starting the thread. */
struct MHD_Daemon *api_server_mhd(struct api_server *s);

/* Stops the API thread, closes the socket and removes its path. Safe on NULL. */
void api_server_stop(struct api_server *s);

/* One request to the API socket at `path` on a fresh connection ("Connection: close"): *reply
 * gets the whole HTTP response, NUL-terminated and malloc'd, within timeout_s seconds (0: no
 * limit). Returns 0, -ETIMEDOUT or -errno, with a message on stderr. */
int api_request(const char *path, const char *method, const char *url, const char *body,
		unsigned timeout_s, char **reply);

/* `msivm remote`: the client. Returns the exit status (0: a 2xx reply). */
int api_client_main(int argc, char **argv);

#endif
