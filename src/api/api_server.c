/* API server: libmicrohttpd (opened by mhd_lib) on a listening unix socket, run from msivm's own API thread (epoll, no MHD thread). */
#include "api/api.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "api/mhd_lib.h"
#include "util/log.h"
#include "util/unix_socket.h"
#include "vmm/seccomp.h"

#define API_CONNECTIONS 16     /* open connections at once; more wait in the backlog */
#define API_IDLE_S      30     /* an idle connection is closed after this */

struct api_server {
	const struct mhd_lib *mhd;
	struct MHD_Daemon *d;
	int listen_fd, quit_fd;
	pthread_t thread;
	bool running;
	enum seccomp_mode seccomp;
	struct api_target *target;
	uid_t uid;                /* msivm's effective uid when the socket was made */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* A request's body, gathered over the handler's calls. */
struct api_request {
	size_t len;
	bool too_big;
	char *body;               /* up to the target's limit, allocated with the first byte */
};

static size_t body_limit(const struct api_server *s)
{
	return s->target->max_body ? s->target->max_body : API_MAX_BODY;
}

static enum MHD_Result respond(const struct mhd_lib *m, struct MHD_Connection *c, unsigned status,
			       char *body)
{
	struct MHD_Response *resp = m->create_response_from_buffer(body ? strlen(body) : 0,
								   body ? body : (char *)"",
								   body ? MHD_RESPMEM_MUST_FREE
									: MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	if (body)
		m->add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	enum MHD_Result r = m->queue_response(c, status, resp);
	m->destroy_response(resp);
	return r;
}

/* Only msivm's own user (or root) may drive the VM; the 0600 socket says so too. */
static bool peer_allowed(const struct api_server *s, struct MHD_Connection *c, uid_t *uid)
{
	const union MHD_ConnectionInfo *ci =
		s->mhd->get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
		return false;
	*uid = cred.uid;
	return cred.uid == s->uid || cred.uid == 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *data,
				  size_t *data_size, void **con_cls)
{
	struct api_server *s = cls;
	struct api_request *rq = *con_cls;
	if (!rq) { /* headers only: the body (if any) follows in later calls */
		if (!(rq = calloc(1, sizeof(*rq))))
			return MHD_NO;
		*con_cls = rq;
		return MHD_YES;
	}
	if (*data_size) {
		if (!rq->body && !rq->too_big && !(rq->body = malloc(body_limit(s))))
			return MHD_NO;
		if (*data_size > body_limit(s) - rq->len)
			rq->too_big = true;
		else if (!rq->too_big)
			memcpy(rq->body + rq->len, data, *data_size);
		rq->len += rq->too_big ? 0 : *data_size;
		*data_size = 0;
		return MHD_YES;
	}
	uid_t uid = (uid_t)-1;
	char msg[160];
	if (!peer_allowed(s, c, &uid)) {
		log_warn("API: refused a request from uid %d (msivm runs as %d)", (int)uid,
			 (int)s->uid);
		snprintf(msg, sizeof(msg), "{\"error\":\"uid %d may not use this VM's API\"}", (int)uid);
		return respond(s->mhd, c, MHD_HTTP_FORBIDDEN, strdup(msg));
	}
	if (rq->too_big && s->target->front) { /* Firecracker's answer to a payload over its limit */
		snprintf(msg, sizeof(msg), "{\"fault_message\":\"Request payload with size over %zu "
			 "bytes is larger than the limit of %zu allowed by server.\"}", body_limit(s),
			 body_limit(s));
		log_info("API: %s %s -> 400 (body over %zu bytes)", method, url, body_limit(s));
		return respond(s->mhd, c, MHD_HTTP_BAD_REQUEST, strdup(msg));
	}
	if (rq->too_big) {
		snprintf(msg, sizeof(msg), "{\"error\":\"request body over %zu bytes\"}", body_limit(s));
		return respond(s->mhd, c, MHD_HTTP_CONTENT_TOO_LARGE, strdup(msg));
	}
	struct api_reply r;
	api_route(s->target, method, url, rq->body, rq->len, &r);
	log_info("API: %s %s -> %u", method, url, r.status);
	return respond(s->mhd, c, r.status, r.body);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct api_request *rq = *con_cls;
	if (rq)
		free(rq->body);
	free(rq);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[256];
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	log_info("API: libmicrohttpd: %s", line);
}

static void *api_thread(void *arg)
{
	struct api_server *s = arg;
	pthread_setname_np(pthread_self(), "msivm-api");
	struct error err;
	if (seccomp_install(s->target->front ? SECCOMP_FC_API : SECCOMP_API, s->seccomp,
			    "msivm-api", &err)) {
		log_err("API thread: %s; the API is off", err.msg);
		return NULL;
	}
	const union MHD_DaemonInfo *di = s->mhd->get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
	struct pollfd fds[2] = { { .fd = di ? di->epoll_fd : -1, .events = POLLIN },
				 { .fd = s->quit_fd, .events = POLLIN } };
	for (;;) {
		MHD_UNSIGNED_LONG_LONG ms;
		int timeout =
			s->mhd->get_timeout(s->d, &ms) == MHD_YES ? (int)(ms > 1000 ? 1000 : ms) : 1000;
		if (poll(fds, 2, timeout) < 0 && errno != EINTR) {
			log_err("API thread: poll: %s; the API is off", strerror(errno));
			return NULL;
		}
		if (fds[1].revents)
			return NULL;
		s->mhd->run(s->d);
		if (s->target->tick)
			s->target->tick(s->target);
	}
}

int api_server_start(struct api_server **out, const char *path, struct api_target *t,
		     int seccomp, struct error *err)
{
	*out = NULL;
	struct api_server *s = calloc(1, sizeof(*s));
	if (!s)
		return error_set(err, -ENOMEM, "out of memory");
	int ret = mhd_lib_open(&s->mhd, err);
	if (ret) {
		free(s);
		return ret;
	}
	s->target = t;
	s->uid = geteuid();
	/* What the API thread would otherwise open under its filter: jansson's
	 * hash seed (/dev/urandom) and the time zone for HTTP dates. */
	json_decref(json_object());
	tzset();
	s->seccomp = (enum seccomp_mode)seccomp;
	s->quit_fd = -1;
	snprintf(s->path, sizeof(s->path), "%s", path);
	ret = s->listen_fd = unix_listen(path, "--api-socket", true, err);
	if (ret < 0) {
		free(s);
		return ret;
	}
	s->d = s->mhd->start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, s,
				MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
				MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)API_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)API_IDLE_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(32 * 1024),
				MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL, MHD_OPTION_END);
	if (!s->d) {
		ret = error_set(err, -EIO, "--api-socket '%s': libmicrohttpd would not start", path);
		goto fail;
	}
	s->quit_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->quit_fd < 0) {
		ret = error_set(err, -errno, "eventfd: %s", strerror(errno));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	api_server_stop(s);
	return ret;
}

struct MHD_Daemon *api_server_mhd(struct api_server *s)
{
	return s->d;
}

int api_server_run(struct api_server *s, struct error *err)
{
	if (s->running)
		return 0;
	int ret = -pthread_create(&s->thread, NULL, api_thread, s);
	if (ret)
		return error_set(err, ret, "cannot start the API thread: %s", strerror(-ret));
	s->running = true;
	return 0;
}

void api_server_stop(struct api_server *s)
{
	if (!s)
		return;
	if (s->running) {
		uint64_t one = 1;
		if (write(s->quit_fd, &one, sizeof(one)) != sizeof(one))
			log_err("cannot stop the API thread: %s", strerror(errno));
		pthread_join(s->thread, NULL);
	}
	if (s->d)
		s->mhd->stop_daemon(s->d);
	if (s->listen_fd >= 0) {
		close(s->listen_fd);
		unlink(s->path);
	}
	if (s->quit_fd >= 0)
		close(s->quit_fd);
	free(s);
}
