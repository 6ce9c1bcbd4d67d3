/* A minimal QMP client for the lab's QEMU runs: unix socket, one JSON object per line. */
#include "lab/lab_qmp.h"

#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lab/lab_spawn.h"

/* The next JSON object QEMU sent (a line), or NULL at the deadline or the connection's end. */
static json_t *next(struct lab_qmp *q, uint64_t deadline)
{
	for (;;) {
		char *nl = memchr(q->buf, '\n', q->len);
		if (nl) {
			size_t n = (size_t)(nl - q->buf);
			json_t *j = json_loadb(q->buf, n, 0, NULL);
			memmove(q->buf, nl + 1, q->len - n - 1);
			q->len -= n + 1;
			if (j)
				return j;
			continue;
		}
		if (q->len == sizeof(q->buf))
			q->len = 0; /* a line longer than any the lab asks for: dropped */
		uint64_t now = lab_now_ns();
		if (q->fd < 0 || now >= deadline)
			return NULL;
		struct pollfd p = { .fd = q->fd, .events = POLLIN };
		int r = poll(&p, 1, (int)((deadline - now) / 1000000 + 1));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return NULL;
		ssize_t k = read(q->fd, q->buf + q->len, sizeof(q->buf) - q->len);
		if (k <= 0)
			return NULL;
		q->len += (size_t)k;
	}
}

static int64_t event_us(const json_t *j)
{
	const json_t *ts = json_object_get(j, "timestamp");
	const json_t *s = json_object_get(ts, "seconds"), *us = json_object_get(ts, "microseconds");
	if (!json_is_integer(s) || !json_is_integer(us))
		return -1;
	return (int64_t)json_integer_value(s) * 1000000 + (int64_t)json_integer_value(us);
}

int lab_qmp_open(struct lab_qmp *q, const char *path, uint64_t deadline)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	q->len = 0;
	q->fd = -1;
	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path) + 1);
	for (;;) {
		q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (q->fd < 0)
			return -errno;
		if (!connect(q->fd, (struct sockaddr *)&a, sizeof(a)))
			break;
		int e = errno;
		close(q->fd);
		q->fd = -1;
		if ((e != ENOENT && e != ECONNREFUSED) || lab_now_ns() >= deadline)
			return e == ENOENT || e == ECONNREFUSED ? -ETIMEDOUT : -e;
		usleep(500);
	}
	json_t *greeting = next(q, deadline);
	bool ok = greeting && json_object_get(greeting, "QMP");
	json_decref(greeting);
	if (!ok) {
		lab_qmp_close(q);
		return -EPROTO;
	}
	return lab_qmp_cmd(q, "{\"execute\":\"qmp_capabilities\"}", NULL, NULL, NULL, 0, NULL, 0,
			   deadline);
}

int lab_qmp_cmd(struct lab_qmp *q, const char *cmd, const char *keep, int64_t *kept_us,
		char *status, size_t status_len, char *why, size_t why_len, uint64_t deadline)
{
	size_t n = strlen(cmd);
	if (q->fd < 0 || write(q->fd, cmd, n) != (ssize_t)n || write(q->fd, "\n", 1) != 1)
		return q->fd < 0 ? -ENOTCONN : -EIO;
	for (;;) {
		json_t *j = next(q, deadline);
		if (!j)
			return -ETIMEDOUT;
		const json_t *ev = json_object_get(j, "event"), *ret = json_object_get(j, "return");
		const json_t *err = json_object_get(j, "error");
		if (ev && keep && kept_us && !strcmp(json_string_value(ev) ? json_string_value(ev) : "", keep))
			*kept_us = event_us(j);
		if (ret && status && status_len) {
			const char *s = json_string_value(json_object_get(ret, "status"));
			snprintf(status, status_len, "%s", s ? s : "");
		}
		if (err && why && why_len) {
			const char *d = json_string_value(json_object_get(err, "desc"));
			snprintf(why, why_len, "%s", d ? d : "an error");
		}
		json_decref(j);
		if (ret)
			return 0;
		if (err)
			return -EIO;
	}
}

int64_t lab_qmp_event(struct lab_qmp *q, const char *name, uint64_t deadline)
{
	for (;;) {
		json_t *j = next(q, deadline);
		if (!j)
			return -1;
		const char *ev = json_string_value(json_object_get(j, "event"));
		int64_t us = ev && !strcmp(ev, name) ? event_us(j) : -1;
		json_decref(j);
		if (us >= 0)
			return us;
	}
}

void lab_qmp_close(struct lab_qmp *q)
{
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
	q->len = 0;
}
