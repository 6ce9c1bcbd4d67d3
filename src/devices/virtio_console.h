/* virtio-console: one port, transmitq -> host output fd, host input fd -> receiveq; control queues (multiport). */
#ifndef MSIVM_DEVICES_VIRTIO_CONSOLE_H
#define MSIVM_DEVICES_VIRTIO_CONSOLE_H

#include <stdbool.h>
#include <stdint.h>

#include "virtio/virtio_pci.h"

#define VIRTIO_ID_CONSOLE 3

/* What the device offers a driver (the guest driver relies on these). */
#define VIRTIO_CONSOLE_F_SIZE      0     /* cols/rows in config space are valid (out is a tty) */
#define VIRTIO_CONSOLE_F_MULTIPORT 1     /* control queues; max_nr_ports in config */
#define VIRTIO_CONSOLE_RXQ         0     /* receiveq0: host -> guest, device-writable buffers */
#define VIRTIO_CONSOLE_TXQ         1     /* transmitq0: guest -> host, device-readable buffers */
#define VIRTIO_CONSOLE_CTRL_RXQ    2     /* control receiveq (MULTIPORT): device -> driver */
#define VIRTIO_CONSOLE_CTRL_TXQ    3     /* control transmitq (MULTIPORT): driver -> device */
#define VIRTIO_CONSOLE_NQUEUES     4
#define VIRTIO_CONSOLE_QUEUE_SIZE  256   /* per queue, the largest size offered */
#define VIRTIO_CONSOLE_CONFIG_SIZE 8     /* cols u16, rows u16, max_nr_ports u32 (= 1) */
#define VIRTIO_CONSOLE_CTRL_MAX    8     /* control messages waiting for control receive buffers */

/* Control message events (virtio 1.2 section 5.3.6.2). */
#define VIRTIO_CONSOLE_DEVICE_READY 0
#define VIRTIO_CONSOLE_PORT_ADD     1
#define VIRTIO_CONSOLE_PORT_REMOVE  2
#define VIRTIO_CONSOLE_PORT_READY   3
#define VIRTIO_CONSOLE_CONSOLE_PORT 4
#define VIRTIO_CONSOLE_RESIZE       5
#define VIRTIO_CONSOLE_PORT_OPEN    6
#define VIRTIO_CONSOLE_PORT_NAME    7
#define VIRTIO_CONSOLE_PATH_MAX    4096
#define VIRTIO_CONSOLE_OUT_MAX     (64ULL << 20) /* default output cap, bytes */

/* One --console option: where the port's bytes go and come from. */
struct virtio_console_opts {
	char out_path[VIRTIO_CONSOLE_PATH_MAX];  /* "": standard output */
	char in_path[VIRTIO_CONSOLE_PATH_MAX];   /* "": no input */
	char sock_path[VIRTIO_CONSOLE_PATH_MAX]; /* "": none; else a unix socket, both ways */
	int sock_fd;                             /* its connection, when sock_open (main's: kept
						    across guest reboots, dup'ed per boot) */
	bool sock_open;
	int in_fd;                               /* in_path opened once, when in_open (main's: kept
						    across guest reboots, dup'ed per boot, so input
						    read before a reboot is not replayed after it) */
	bool in_open;
	bool append;                             /* keep out_path's contents (after a guest reboot) */
	uint64_t max_out;                        /* output cap in bytes (0: none); a regular
						    file counts from its size */
};

/* The host side of the port. The device closes the fds flagged `close_*`
 * in virtio_console_destroy (also after a failed init). */
struct virtio_console_io {
	int out_fd;                 /* transmitq bytes are written here (blocking or not) */
	int in_fd;                  /* -1: no input; otherwise made O_NONBLOCK by the device */
	bool close_out, close_in;
	uint64_t out_max;           /* output cap in bytes, 0: none */
	uint64_t out_used;          /* counted against out_max (a regular file starts at its size) */
};

struct virtio_console_stats {
	uint64_t bytes_out;         /* guest -> out_fd, written */
	uint64_t bytes_dropped;     /* guest -> out_fd, lost to a write error or the cap */
	uint64_t chains_out;        /* transmitq chains completed */
	uint64_t bytes_in;          /* in_fd -> guest */
	uint64_t chains_in;         /* receiveq buffers completed */
};

struct virtio_console {
	struct virtio_pci pci;
	char name[16];
	struct virtio_console_io io;
	bool pci_ready;             /* virtio_pci_destroy is safe */
	bool out_sigpipe;           /* out_fd is a pipe or socket: writes may raise SIGPIPE */
	bool out_failed;            /* a write error was logged (once) */
	bool out_capped;            /* the output cap was reached (logged once) */

	/* Input: read from in_fd straight into the guest's receive buffers, only while one waits. */
	struct evloop *loop;
	struct evloop_handler in_handler;
	bool in_watched;            /* in_fd is in the event loop */
	bool in_eof;                /* end of input or a read error: no more reads */

	/* Size of the terminal out_fd is, read at init (size_known: F_SIZE offered). */
	bool size_known;
	uint16_t cols, rows;

	/* MULTIPORT: with it negotiated, input goes to port 0 only once the
	 * driver has opened it (PORT_OPEN 1): Linux drops what arrives on a port
	 * it has not registered yet. Device -> driver messages wait in ctl_msg. */
	bool port_open;
	bool port_ready;           /* the driver added port 0 (PORT_READY 1); until reset */
	bool port_added;           /* PORT_ADD sent (after DEVICE_READY 1); until reset */
	uint32_t ctl_n;
	struct { uint8_t b[12]; uint32_t len; } ctl_msg[VIRTIO_CONSOLE_CTRL_MAX];

	struct virtio_console_stats stats;
	struct virtq_chain chain;   /* scratch for the chain being served */
	struct ratelimit rl;
};

/* Opens the console input `path` nonblocking (a FIFO without a writer does
 * not block): read-only, except a FIFO, which is opened read-write when the
 * caller may write it, so that msivm is always one of its writers and its
 * input never ends: writers may come and go (after boot, one line each), as
 * with QEMU's pipe chardev. Returns the fd, or -errno with a message naming
 * the file. */
int virtio_console_open_input(const char *path, struct error *err);

/* Opens the files of `o`: out_path (created, truncated unless o->append,
 * nonblocking; "" means `stdout_fd`, which is not closed) and the input (a
 * dup of o->in_fd when o->in_open, sharing its file offset; else in_path,
 * "" meaning no input); sets io->out_max from o->max_out and io->out_used
 * to what a regular output file already holds. Returns 0 and *io, or -errno
 * with a message naming the file. */
int virtio_console_open_io(const struct virtio_console_opts *o, int stdout_fd,
			   struct virtio_console_io *io, struct error *err);

/* Creates virtio-console number `index` ("con<index>") on the transport,
 * taking over `io` (see struct virtio_console_io). F_SIZE is offered when
 * io->out_fd is a terminal (its size at this call); MULTIPORT always, with
 * one port (the console). `loop` may be NULL
 * (tests): input is then only read on kicks and handler calls. Other
 * arguments as for virtio_pci_init. Returns 0 or -errno with a message; on
 * failure the caller still calls virtio_console_destroy. */
int virtio_console_init(struct virtio_console *c, unsigned index,
			const struct virtio_console_io *io, const struct virtio_pci_config *cfg,
			const struct guest_mem *mem, int vm_fd, struct gsi_routes *routes,
			struct evloop *loop, struct bus *mmio, struct pci_window window,
			struct error *err);

/* Stops watching the input, closes the owned fds, releases the transport.
 * Safe after a failed or partial init. */
/* The terminal behind the console's output changed size (SIGWINCH): re-reads it and, if it
 * changed, tells the driver (a RESIZE control message with MULTIPORT, else a configuration
 * change with F_SIZE). No-op when the output is not a terminal. Takes the transport lock. */
void virtio_console_resize(struct virtio_console *c);

void virtio_console_destroy(struct virtio_console *c);

#endif
