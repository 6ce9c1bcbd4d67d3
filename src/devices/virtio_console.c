/* virtio-console: transmitq kick -> output fd; input fd (event loop) -> staged bytes -> receiveq -> interrupt; control kicks go to virtio_console_ctl.c. */
#include "devices/virtio_console.h"
#include "devices/virtio_console_ctl.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/log.h"
#include "virtio/budget.h"

#define CHAIN_OUT_MAX (1u << 20) /* bytes of one transmitq chain written at most */

#define OUT_STALL_MS 1000   /* a nonblocking output that stays full this long loses the bytes */

/* ---- config space: read-only cols, rows, max_nr_ports ---- */

static void con_config_read(void *opaque, uint32_t off, void *data, uint32_t len)
{
	struct virtio_console *c = opaque;
	uint8_t cfg[VIRTIO_CONSOLE_CONFIG_SIZE];
	uint16_t cols = htole16(c->cols), rows = htole16(c->rows); /* 0 without F_SIZE */
	uint32_t ports = htole32(1);
	memcpy(cfg, &cols, 2);
	memcpy(cfg + 2, &rows, 2);
	memcpy(cfg + 4, &ports, 4);
	memcpy(data, cfg + off, len); /* the transport checked the bounds */
}

static void con_config_write(void *opaque, uint32_t off, const void *data, uint32_t len)
{
	struct virtio_console *c = opaque;
	log_ratelimited(&c->rl, LOG_WARN, "%s: write of %u bytes to read-only config at 0x%x ignored",
			c->name, len, off);
}

/* ---- output ---- */

/* Writes all `len` bytes at `p`, retrying short writes and EINTR, and waiting
 * up to OUT_STALL_MS for a full nonblocking fd. Returns 0 or -errno; *done
 * counts the bytes written either way. */
static int write_all(int fd, const uint8_t *p, uint32_t len, uint32_t *done)
{
	*done = 0;
	while (*done < len) {
		ssize_t n = write(fd, p + *done, len - *done);
		if (n > 0) {
			*done += (uint32_t)n;
			continue;
		}
		if (n == 0)
			return -EIO;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int r = poll(&pfd, 1, OUT_STALL_MS);
		if (r == 0)
			return -ETIMEDOUT;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}

/* Writes one guest buffer to the output. A pipe or socket whose reader is
 * gone must give EPIPE, not kill msivm: SIGPIPE is blocked in this thread
 * for the write and a SIGPIPE it raised is taken back before the old mask
 * returns. The first failure is logged; failed bytes are counted as dropped. */
static void out_write(struct virtio_console *c, const uint8_t *p, uint32_t len)
{
	if (c->io.out_max) {
		uint64_t room = c->io.out_used < c->io.out_max ? c->io.out_max - c->io.out_used : 0;
		if (len > room) {
			/* Keep what fits, drop the rest: a guest may not fill the host's disk. */
			c->stats.bytes_dropped += len - room;
			if (!c->out_capped)
				log_warn("%s: console output reached its cap of %" PRIu64 " bytes "
					 "(max=); further output is dropped (logged once)", c->name,
					 c->io.out_max);
			c->out_capped = true;
			len = (uint32_t)room;
			if (!len)
				return;
		}
		c->io.out_used += len;
	}
	sigset_t pipe_set, old;
	if (c->out_sigpipe) {
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	}
	uint32_t done;
	int ret = write_all(c->io.out_fd, p, len, &done);
	if (c->out_sigpipe) {
		if (ret == -EPIPE) {
			struct timespec zero = { 0, 0 };
			sigtimedwait(&pipe_set, NULL, &zero);
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	c->stats.bytes_out += done;
	if (!ret)
		return;
	c->stats.bytes_dropped += len - done;
	if (!c->out_failed)
		log_warn("%s: cannot write console output: %s; output is dropped (logged once)",
			 c->name, strerror(-ret));
	c->out_failed = true;
}

/* transmitq (lock held): every chain's readable buffers go to the output in
 * order; the chain completes with 0 bytes written. A device-writable buffer
 * on this queue is a driver error: NEEDS_RESET. */
static void tx_serve(struct virtio_console *c, struct virtq *q)
{
	bool bad = false;
	struct vbudget budget = vbudget_start(VBUDGET_BYTES);
	while (virtio_pci_pop(&c->pci, VIRTIO_CONSOLE_TXQ, &budget, &c->chain) == 1) {
		if (c->chain.n_in) {
			bad = true;
			break;
		}
		/* A chain beyond CHAIN_OUT_MAX (no driver sends one) is cut there. */
		uint32_t room = CHAIN_OUT_MAX;
		for (uint32_t i = 0; i < c->chain.n_out; i++) {
			uint32_t n = c->chain.buf[i].len < room ? c->chain.buf[i].len : room;
			out_write(c, c->chain.buf[i].host, n);
			c->stats.bytes_dropped += c->chain.buf[i].len - n;
			room -= n;
		}
		virtq_push(q, c->chain.head, 0);
		vbudget_charge(&budget, c->chain.out_bytes);
		c->stats.chains_out++;
	}
	virtio_pci_queue_done(&c->pci, VIRTIO_CONSOLE_TXQ);
	if (bad)
		virtio_pci_set_needs_reset(&c->pci, "device-writable buffer on transmitq");
}

/* ---- input ---- */

/* Adds in_fd to the event loop or removes it (lock held). */
static void rx_watch(struct virtio_console *c, bool want)
{
	if (want == c->in_watched || !c->loop)
		return;
	int ret = want ? evloop_add(c->loop, c->io.in_fd, EPOLLIN, &c->in_handler)
		       : evloop_del(c->loop, c->io.in_fd);
	if (ret && want) {
		log_warn("%s: cannot watch console input: %s; input ends", c->name, strerror(-ret));
		c->in_eof = true;
		return;
	}
	c->in_watched = want;
}

/* Reads input straight into the popped chain's device-writable buffers, at most `max` bytes:
 * nothing is read that no guest buffer takes, so what the guest has not taken stays in in_fd
 * (for the next boot, too). Returns the bytes read; 0 with *again set if the fd has nothing now,
 * or with in_eof set at end of input or on an error (logged). */
static uint32_t rx_read(struct virtio_console *c, uint64_t max, bool *again)
{
	struct iovec iov[VIRTQ_CHAIN_MAX];
	int cnt = 0;
	for (uint32_t i = c->chain.n_out; i < c->chain.n_out + c->chain.n_in && max; i++) {
		uint32_t n = c->chain.buf[i].len < max ? c->chain.buf[i].len : (uint32_t)max;
		if (n)
			iov[cnt++] = (struct iovec){ c->chain.buf[i].host, n };
		max -= n;
	}
	for (;;) {
		ssize_t n = readv(c->io.in_fd, iov, cnt);
		if (n > 0)
			return (uint32_t)n;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			*again = true;
			return 0;
		}
		if (n < 0)
			log_warn("%s: cannot read console input: %s; input ends", c->name,
				 strerror(errno));
		else
			log_info("%s: end of console input", c->name);
		c->in_eof = true;
		return 0;
	}
}

static bool multiport(const struct virtio_console *c)
{
	return c->pci.negotiated & (1ULL << VIRTIO_CONSOLE_F_MULTIPORT);
}

/* receiveq (lock held): input is read straight into posted buffers,
 * one read per buffer. Input is read only while a buffer waits; the fd is
 * watched only while buffers wait and it has nothing to read, so without
 * buffers it rests until the guest posts one and kicks. A device-readable
 * buffer on this queue is a driver error: NEEDS_RESET. */
static void rx_serve(struct virtio_console *c)
{
	/* Under MULTIPORT the port's buffers wait until the driver opens it. */
	struct virtq *q = multiport(c) && !c->port_open
				  ? NULL : virtio_pci_queue(&c->pci, VIRTIO_CONSOLE_RXQ);
	bool again = false, bad = false;
	struct vbudget budget = vbudget_start(VBUDGET_BYTES);
	while (q) {
		if (!vbudget_left(&budget)) {
			virtio_pci_queue_resume(&c->pci, VIRTIO_CONSOLE_RXQ);
			break;
		}
		if (!virtq_has_work(q)) {
			virtq_set_notify(q, true); /* event idx: kick me for the next buffer */
			if (!virtq_has_work(q))
				break;
		}
		if (c->io.in_fd < 0 || c->in_eof)
			break;
		if (virtq_pop(q, &c->chain) != 1)
			break; /* a broken ring: queue_done below asks for a reset */
		if (c->chain.n_out) {
			bad = true;
			break;
		}
		uint32_t n = 0;
		if (c->chain.in_bytes && !(n = rx_read(c, budget.bytes, &again))) {
			virtq_unpop(q, 1); /* nothing to read now: the chain waits for input */
			break;
		}
		virtq_push(q, c->chain.head, n);
		vbudget_charge(&budget, n);
		c->stats.bytes_in += n;
		c->stats.chains_in++;
	}
	if (q) {
		virtio_pci_queue_done(&c->pci, VIRTIO_CONSOLE_RXQ);
		if (bad)
			virtio_pci_set_needs_reset(&c->pci, "device-readable buffer on receiveq");
	}
	rx_watch(c, again);
}

static void on_input(void *opaque, uint32_t events)
{
	struct virtio_console *c = opaque;
	pthread_mutex_lock(&c->pci.lock);
	rx_serve(c);
	pthread_mutex_unlock(&c->pci.lock);
}

/* ---- transport hooks ---- */

static void con_notify(void *opaque, uint16_t qi)
{
	struct virtio_console *c = opaque;
	if (qi >= VIRTIO_CONSOLE_CTRL_RXQ && !multiport(c)) {
		log_ratelimited(&c->rl, LOG_WARN, "%s: kick of control queue %u without MULTIPORT "
				"ignored", c->name, qi);
		return;
	}
	switch (qi) {
	case VIRTIO_CONSOLE_RXQ:
		rx_serve(c);
		return;
	case VIRTIO_CONSOLE_CTRL_RXQ:
		vcon_ctl_rx_serve(c);
		return;
	case VIRTIO_CONSOLE_CTRL_TXQ:
		if (!vcon_ctl_tx_serve(c))
			return;
		if (c->port_open)
			rx_serve(c); /* input read before the open goes now */
		else
			rx_watch(c, false);
		return;
	}
	struct virtq *q = virtio_pci_queue(&c->pci, qi);
	if (q)
		tx_serve(c, q);
}

/* Device reset: the queues are gone, so stop reading; unread input stays in
 * in_fd for the next driver, which opens the port afresh. */
static void con_reset(void *opaque)
{
	struct virtio_console *c = opaque;
	rx_watch(c, false);
	c->port_open = false;
	c->port_ready = false;
	c->port_added = false;
	c->ctl_n = 0;
}

static const struct virtio_dev_ops con_ops = {
	.config_read = con_config_read,
	.config_write = con_config_write,
	.queue_notify = con_notify,
	.reset = con_reset,
	.save = vcon_ctl_save,
	.load = vcon_ctl_load,
};

int virtio_console_open_input(const char *path, struct error *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return error_set(err, -errno, "cannot open console input '%s': %s", path,
				 strerror(errno));
	struct stat st;
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode))
		return fd;
	/* A FIFO read-only reads end of input whenever no writer holds it, e.g. before the
	 * operator's first `echo >fifo`: hold it open for writing too. */
	int rw = open(path, O_RDWR | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rw < 0) {
		log_info("console input '%s': a FIFO msivm may not write: its input ends when its "
			 "last writer closes it", path);
		return fd;
	}
	close(fd);
	return rw;
}

int virtio_console_open_io(const struct virtio_console_opts *o, int stdout_fd,
			   struct virtio_console_io *io, struct error *err)
{
	*io = (struct virtio_console_io){ .out_fd = stdout_fd, .in_fd = -1,
					  .out_max = o->max_out };
	if (o->sock_open) { /* --console socket=PATH: the client is output and input */
		io->out_fd = dup(o->sock_fd);
		io->in_fd = io->out_fd < 0 ? -1 : dup(o->sock_fd);
		if (io->in_fd < 0) {
			int ret = error_set(err, -errno, "console socket: dup: %s", strerror(errno));
			if (io->out_fd >= 0)
				close(io->out_fd);
			*io = (struct virtio_console_io){ .out_fd = -1, .in_fd = -1 };
			return ret;
		}
		io->close_out = io->close_in = true;
		return 0;
	}
	if (o->out_path[0]) {
		/* O_NONBLOCK: a FIFO without a reader fails (ENXIO) instead of
		 * blocking open() forever; writes cope with a full fd. */
		int mode = o->append ? O_APPEND : O_TRUNC;
		io->out_fd = open(o->out_path, O_WRONLY | O_CREAT | O_NONBLOCK | mode | O_CLOEXEC,
				  0644);
		if (io->out_fd < 0)
			return error_set(err, -errno, "cannot open console output '%s': %s",
					 o->out_path, errno == ENXIO ? "a FIFO with no reader"
								     : strerror(errno));
		io->close_out = true;
		struct stat st;
		if (!fstat(io->out_fd, &st) && S_ISREG(st.st_mode))
			io->out_used = (uint64_t)st.st_size;
	}
	if (o->in_open || o->in_path[0]) {
		io->in_fd = o->in_open ? dup(o->in_fd) : virtio_console_open_input(o->in_path, err);
		if (io->in_fd < 0) {
			int ret = o->in_open ? error_set(err, -errno, "console input '%s': dup: %s",
							 o->in_path, strerror(errno))
					     : io->in_fd;
			if (io->close_out)
				close(io->out_fd);
			*io = (struct virtio_console_io){ .out_fd = -1, .in_fd = -1 };
			return ret;
		}
		io->close_in = true;
	}
	return 0;
}

int virtio_console_init(struct virtio_console *c, unsigned index,
			const struct virtio_console_io *io, const struct virtio_pci_config *cfg,
			const struct guest_mem *mem, int vm_fd, struct gsi_routes *routes,
			struct evloop *loop, struct bus *mmio, struct pci_window window,
			struct error *err)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "con%u", index);
	c->io = *io;
	c->loop = loop;
	c->in_handler = (struct evloop_handler){ on_input, c };
	if (io->out_fd < 0)
		return error_set(err, -EBADF, "%s: no output", c->name);
	struct stat st;
	c->out_sigpipe = fstat(io->out_fd, &st) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode);
	if (io->in_fd >= 0) {
		int fl = fcntl(io->in_fd, F_GETFL);
		if (fl < 0 || fcntl(io->in_fd, F_SETFL, fl | O_NONBLOCK))
			return error_set(err, -errno, "%s: cannot make the input nonblocking: %s",
					 c->name, strerror(errno));
	}
	struct winsize ws;
	if (isatty(io->out_fd) && !ioctl(io->out_fd, TIOCGWINSZ, &ws) && ws.ws_col && ws.ws_row) {
		c->size_known = true;
		c->cols = ws.ws_col;
		c->rows = ws.ws_row;
	}
	struct virtio_dev_info info = {
		.name = c->name, .device_id = VIRTIO_ID_CONSOLE, .nqueues = VIRTIO_CONSOLE_NQUEUES,
		.queue_max = VIRTIO_CONSOLE_QUEUE_SIZE, .config_size = VIRTIO_CONSOLE_CONFIG_SIZE,
		.pci_class = 0x078000,
		.features = (c->size_known ? 1ULL << VIRTIO_CONSOLE_F_SIZE : 0) |
			    1ULL << VIRTIO_CONSOLE_F_MULTIPORT,
	};
	c->pci_ready = true; /* virtio_pci_destroy is safe from here on */
	return virtio_pci_init(&c->pci, &info, &con_ops, c, cfg, mem, vm_fd, routes, loop, mmio,
			       window, err);
}

void virtio_console_resize(struct virtio_console *c)
{
	struct winsize ws;
	if (!c->size_known || ioctl(c->io.out_fd, TIOCGWINSZ, &ws) || !ws.ws_col || !ws.ws_row)
		return;
	pthread_mutex_lock(&c->pci.lock);
	if (ws.ws_col != c->cols || ws.ws_row != c->rows) {
		c->cols = ws.ws_col;
		c->rows = ws.ws_row;
		if (multiport(c) && c->port_ready) {
			uint16_t sz[2] = { htole16(c->cols), htole16(c->rows) };
			vcon_ctl_queue(c, VIRTIO_CONSOLE_RESIZE, 0, sz, sizeof(sz));
			vcon_ctl_rx_serve(c);
		} else {
			virtio_pci_config_changed(&c->pci); /* F_SIZE alone: the config holds it */
		}
	}
	pthread_mutex_unlock(&c->pci.lock);
}

void virtio_console_destroy(struct virtio_console *c)
{
	if (c->in_watched && c->loop)
		evloop_del(c->loop, c->io.in_fd);
	c->in_watched = false;
	if (c->pci_ready)
		virtio_pci_destroy(&c->pci);
	c->pci_ready = false;
	if (c->io.close_in && c->io.in_fd >= 0)
		close(c->io.in_fd);
	if (c->io.close_out && c->io.out_fd >= 0)
		close(c->io.out_fd);
	c->io = (struct virtio_console_io){ .out_fd = -1, .in_fd = -1 };
}
