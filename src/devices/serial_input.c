/* Serial input: host fd readable -> escape handling -> UART FIFO, paced by the guest draining it. */
#include "devices/serial_input.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "util/log.h"

/* The I/O thread's next turn runs on_wake (an input that epoll cannot watch is read from there). */
static void kick(struct serial_input *s)
{
	uint64_t one = 1;
	if (write(s->wake_fd, &one, sizeof(one)) < 0)
		log_warn("serial input: cannot wake the I/O thread: %s", strerror(errno));
}

static void watch(struct serial_input *s, bool want)
{
	if (want == s->in_watched || s->eof)
		return;
	if (s->always_ready) { /* a regular file or /dev/null: read on at the next turn */
		s->in_watched = want;
		if (want)
			kick(s);
		return;
	}
	int ret = want ? evloop_add(s->loop, s->in_fd, EPOLLIN, &s->in_handler)
		       : evloop_del(s->loop, s->in_fd);
	if (ret)
		log_warn("serial input: epoll: %s", strerror(-ret));
	else
		s->in_watched = want;
}

/* Moves pending bytes into the FIFO; true once none is left. */
static bool push_pending(struct serial_input *s)
{
	uint32_t n = uart8250_receive_some(s->uart, s->pending + s->pending_off, s->pending_len);
	s->pending_off += n;
	s->pending_len -= n;
	return s->pending_len == 0;
}

/* Applies the escape rules to what was read, in place; false if the user quit. */
static bool filter(struct serial_input *s, uint8_t *buf, uint32_t *len)
{
	uint32_t out = 0;
	for (uint32_t i = 0; i < *len; i++) {
		uint8_t c = buf[i];
		if (!s->escape) {
			buf[out++] = c;
		} else if (s->after_escape) {
			s->after_escape = false;
			if (c == 'x' || c == 'X')
				return false;
			if (c != SERIAL_ESCAPE)
				buf[out++] = SERIAL_ESCAPE;
			buf[out++] = c;
		} else if (c == SERIAL_ESCAPE) {
			s->after_escape = true;
		} else {
			buf[out++] = c;
		}
	}
	*len = out;
	return true;
}

static void on_input(void *opaque, uint32_t events)
{
	struct serial_input *s = opaque;
	if (s->pending_len && !push_pending(s)) {
		watch(s, false);
		return;
	}
	/* Half the buffer: Ctrl-a + byte may become two bytes. */
	uint8_t buf[sizeof(s->pending) / 2];
	ssize_t n = read(s->in_fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		if (n < 0)
			log_warn("serial input: %s; input ends", strerror(errno));
		watch(s, false);
		s->eof = true;
		return;
	}
	uint32_t len = (uint32_t)n;
	if (!filter(s, buf, &len)) {
		log_info("serial input: Ctrl-a x: stopping the VM");
		s->quit(s->opaque);
		return;
	}
	memcpy(s->pending, buf, len);
	s->pending_off = 0;
	s->pending_len = len;
	if (!push_pending(s))
		watch(s, false); /* resumed when the guest drains the FIFO */
	else if (s->always_ready)
		kick(s); /* one read per turn: other work goes on between */
}

static void on_wake(void *opaque, uint32_t events)
{
	struct serial_input *s = opaque;
	uint64_t v;
	if (read(s->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	bool was = s->in_watched;
	if (!s->pending_len || push_pending(s))
		watch(s, true);
	if (s->always_ready && was && s->in_watched)
		on_input(s, EPOLLIN);
}

/* The guest emptied the FIFO or set the UART up (vCPU thread): let the I/O thread go on. */
static void drained(void *opaque)
{
	kick(opaque);
}

int serial_input_init(struct serial_input *s, struct uart8250 *uart, int in_fd, bool escape,
		      struct evloop *loop, void (*quit)(void *opaque), void *opaque,
		      struct error *err)
{
	memset(s, 0, sizeof(*s));
	s->uart = uart;
	s->in_fd = in_fd;
	s->escape = escape;
	s->loop = loop;
	s->quit = quit;
	s->opaque = opaque;
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0)
		return error_set(err, -errno, "serial input: eventfd: %s", strerror(errno));
	s->in_handler = (struct evloop_handler){ on_input, s };
	s->wake_handler = (struct evloop_handler){ on_wake, s };
	int ret = evloop_add(loop, s->wake_fd, EPOLLIN, &s->wake_handler);
	if (ret)
		return error_set(err, ret, "serial input: epoll: %s", strerror(-ret));
	uart->rx_opaque = s;
	uart->rx_drained = drained;
	ret = evloop_add(loop, in_fd, EPOLLIN, &s->in_handler);
	if (ret == -EPERM) { /* epoll takes no regular file or /dev/null: always readable */
		s->always_ready = true;
		kick(s);
	} else if (ret) {
		return error_set(err, ret, "serial input: cannot watch fd %d: %s", in_fd,
				 strerror(-ret));
	}
	s->in_watched = true;
	return 0;
}

void serial_input_destroy(struct serial_input *s)
{
	if (s->uart) {
		s->uart->rx_drained = NULL;
		s->uart = NULL;
	}
	if (s->in_watched && !s->always_ready)
		evloop_del(s->loop, s->in_fd);
	s->in_watched = false;
	if (s->wake_fd > 0) {
		evloop_del(s->loop, s->wake_fd);
		close(s->wake_fd);
	}
	s->wake_fd = -1;
}
