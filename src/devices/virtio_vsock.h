/* virtio-vsock: hybrid (as Firecracker's: guest streams <-> host unix sockets, CONNECT <port> on PATH reaches the guest, its connects to port P reach PATH_P) or the kernel's vhost-vsock (the host's AF_VSOCK). */
#ifndef MSIVM_DEVICES_VIRTIO_VSOCK_H
#define MSIVM_DEVICES_VIRTIO_VSOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "virtio/vhost_rings.h"
#include "virtio/virtio_pci.h"

#define VIRTIO_ID_VSOCK          19
#define VIRTIO_VSOCK_F_STREAM    0
#define VSOCK_RXQ                0
#define VSOCK_TXQ                1
#define VSOCK_EVQ                2
#define VSOCK_EVENT_TRANSPORT_RESET 0 /* virtio_vsock_event.id: the driver's connections are gone */
#define VSOCK_NQUEUES            3
#define VSOCK_QUEUE_SIZE         256
#define VSOCK_CONFIG_SIZE        8      /* guest_cid, le64 */
#define VSOCK_HOST_CID           2
#define VSOCK_CID_MIN            3
#define VSOCK_CID_MAX            0xfffffffeu
#define VSOCK_HDR_SIZE           44
#define VSOCK_PKT_MAX            (64u << 10) /* payload of one packet at most (Linux's too) */
#define VSOCK_BUF_ALLOC          (256u << 10) /* what msivm buffers per connection, guest -> host */
#define VSOCK_MAX_CONNS          64     /* connections per device */
#define VSOCK_PATH_MAX           100    /* PATH plus "_4294967295" fits a sockaddr_un */
#define VSOCK_ORPHAN_MAX         16     /* RSTs owed to packets of no connection, waiting */

/* Packet types, operations and shutdown flags (virtio 1.2, 5.10.6). */
#define VSOCK_TYPE_STREAM        1
enum vsock_op {
	VSOCK_OP_INVALID, VSOCK_OP_REQUEST, VSOCK_OP_RESPONSE, VSOCK_OP_RST, VSOCK_OP_SHUTDOWN,
	VSOCK_OP_RW, VSOCK_OP_CREDIT_UPDATE, VSOCK_OP_CREDIT_REQUEST,
};
#define VSOCK_SHUTDOWN_RCV       1u
#define VSOCK_SHUTDOWN_SEND      2u

enum vsock_backend {
	VSOCK_BE_UNIX,                    /* msivm's device model, host unix sockets (hybrid) */
	VSOCK_BE_VHOST,                   /* the kernel's vhost-vsock: the host's AF_VSOCK */
};

/* One --vsock option. */
struct virtio_vsock_opts {
	uint64_t cid;                     /* the guest's context id (cid=) */
	char path[VSOCK_PATH_MAX];        /* the host's unix socket (path=; backend=unix only) */
	enum vsock_backend backend;
};

/* A packet header in host order. */
struct vsock_hdr {
	uint64_t src_cid, dst_cid;
	uint32_t src_port, dst_port, len;
	uint16_t type, op;
	uint32_t flags, buf_alloc, fwd_cnt;
};

/* Control packets a connection owes the guest (bits). */
#define VC_SEND_REQUEST  1u
#define VC_SEND_RESPONSE 2u
#define VC_SEND_CREDIT   4u
#define VC_SEND_RST      8u

enum vsock_state {
	VC_FREE,
	VC_HANDSHAKE,      /* host-initiated: reading "CONNECT <port>\n" from the unix client */
	VC_DIALING,        /* guest-initiated: PATH_P to be connected (on the I/O thread) */
	VC_CONNECTING,     /* host-initiated: REQUEST owed or sent to the guest, no RESPONSE yet */
	VC_ESTABLISHED,
	VC_CLOSING,        /* RST owed to the guest, or waiting for the guest's RST after SHUTDOWN */
};

/* One stream: guest port <-> host port, relayed to a unix stream socket. */
struct vsock_conn {
	struct virtio_vsock *dev;
	enum vsock_state state;
	uint32_t host_port, guest_port;
	int fd;                           /* the unix stream socket, non-blocking */
	uint32_t watching;                /* EPOLLIN/EPOLLOUT registered for fd (0: not in the loop) */
	struct evloop_handler handler;
	uint32_t owe;                     /* VC_SEND_* */
	/* credit the guest gave: it buffers peer_buf_alloc bytes, consumed peer_fwd_cnt */
	uint32_t peer_buf_alloc, peer_fwd_cnt;
	uint32_t tx_cnt;                  /* payload bytes sent to the guest */
	/* guest -> host: bytes the unix socket did not take yet (at most VSOCK_BUF_ALLOC) */
	uint8_t *pend;
	uint32_t pend_len;
	uint32_t fwd_cnt;                 /* guest bytes written to fd */
	uint32_t fwd_cnt_told;            /* fwd_cnt in the last packet sent to the guest */
	bool guest_no_send;               /* the guest will send no more (SHUTDOWN SEND) */
	bool guest_no_rcv;                /* the guest takes no more (SHUTDOWN RCV) */
	bool host_eof;                    /* the unix socket's reader side ended */
	bool readable;                    /* epoll said the socket has data (or an end) for us */
	char line[32];                    /* host-initiated handshake being read */
	uint32_t line_len;
};

struct virtio_vsock_stats {
	uint64_t conns_guest, conns_host; /* connections made, by who asked */
	uint64_t refused;                 /* connection requests refused (no listener, cap) */
	uint64_t bytes_to_host, bytes_to_guest;
	uint64_t bad_packets;             /* packets dropped or answered with RST as malformed */
	uint64_t resets;                  /* RSTs sent */
};

struct virtio_vsock {
	struct virtio_pci pci;
	char name[16];
	bool pci_ready;
	uint64_t cid;
	char path[VSOCK_PATH_MAX];
	int listen_fd;                    /* PATH, bound by msivm (-1: none) */
	struct evloop *loop;
	struct evloop_handler listen_handler;
	bool listen_watched;
	int dial_fd;                      /* eventfd: guest REQUESTs wait for the I/O thread */
	struct evloop_handler dial_handler;
	bool dial_watched;
	struct vsock_conn conns[VSOCK_MAX_CONNS];
	uint32_t next_host_port;          /* host ports of host-initiated connections */
	uint32_t rr;                      /* where rx_serve looks first (round robin) */
	struct vsock_hdr orphans[VSOCK_ORPHAN_MAX]; /* RSTs owed to packets of no connection */
	uint32_t norphans;
	struct virtq_chain chain;
	uint8_t *bounce;                  /* VSOCK_PKT_MAX: packet payloads on their way */
	bool owe_reset;                   /* restored from a snapshot: a TRANSPORT_RESET event is owed */
	uint64_t transport_resets;        /* TRANSPORT_RESET events sent */
	/* backend=vhost (vsock_vhost.c): the kernel runs rx and tx; conns[] and PATH stay unused */
	bool vhost;
	int vhost_fd;                     /* /dev/vhost-vsock (-1: none) */
	struct vhost_rings vh;
	struct ratelimit rl;
	struct virtio_vsock_stats stats;
};

/* Creates the device: backend=unix binds PATH (a new unix socket: refused if PATH exists) and
 * watches it in `loop`; backend=vhost opens /dev/vhost-vsock and claims the guest's CID on this
 * host (refused if another VM has it). Returns 0 or -errno with a message; virtio_vsock_destroy
 * is safe after a failure. */
int virtio_vsock_init(struct virtio_vsock *v, unsigned index, const struct virtio_vsock_opts *o,
		      const struct virtio_pci_config *cfg, const struct guest_mem *mem, int vm_fd,
		      struct gsi_routes *routes, struct evloop *loop, struct bus *mmio,
		      struct pci_window window, struct error *err);

/* Closes every connection and PATH (unlinked), and the transport. */
void virtio_vsock_destroy(struct virtio_vsock *v);

/* Packet header from/to its 44 wire bytes (little-endian). */
void vsock_hdr_decode(const uint8_t *b, struct vsock_hdr *h);
void vsock_hdr_encode(const struct vsock_hdr *h, uint8_t *b);

/* ---- inside the device (virtio_vsock.c <-> vsock_conn.c, vsock_vhost.c) ---- */

/* backend=vhost. open (before the transport exists): /dev/vhost-vsock, owner, features, the
 * guest's CID; init (after it): guest memory and rings 0 (rx) and 1 (tx) to vhost (the event
 * queue stays with msivm, which sends no event); start (DRIVER_OK, lock held): the rings run, a
 * refusal puts the device into NEEDS_RESET; stop (reset, lock held): vhost stops touching guest
 * memory; kick: passes on a kick that came as an MMIO exit; destroy: stop and close. Each
 * returns 0 or -errno with a message where it returns int. */
int vsock_vhost_open(struct virtio_vsock *v, struct error *err);
int vsock_vhost_init(struct virtio_vsock *v, const struct guest_mem *mem, struct error *err);
void vsock_vhost_start(struct virtio_vsock *v);
void vsock_vhost_stop(struct virtio_vsock *v);
void vsock_vhost_kick(struct virtio_vsock *v, uint16_t qi);
void vsock_vhost_destroy(struct virtio_vsock *v);

/* The connection of (host port, guest port), or NULL. */
struct vsock_conn *vsock_conn_find(struct virtio_vsock *v, uint32_t host_port, uint32_t guest_port);

/* Handles one packet from the guest (lock held); payload: h->len bytes, already checked. */
void vsock_conn_packet(struct virtio_vsock *v, const struct vsock_hdr *h, const uint8_t *payload);

/* Owes the guest an RST for a packet of no connection (bounded: extras are dropped). */
void vsock_owe_orphan_rst(struct virtio_vsock *v, const struct vsock_hdr *h);

/* Closes c's socket and frees it (no packet owed any more). */
void vsock_conn_free(struct vsock_conn *c);

/* Updates what c watches in the event loop from its state (lock held). */
void vsock_conn_watch(struct vsock_conn *c);

/* Flushes c's pending guest bytes into its socket; 0, or -1 if the socket failed (c is then
 * closing: RST owed). */
int vsock_conn_flush(struct vsock_conn *c);

/* Serves the receive queue: control packets owed, then data (lock held). */
void vsock_rx_serve(struct virtio_vsock *v);

/* A connection's socket is ready (EPOLLIN/OUT/HUP/ERR in events): the event loop's handler of
 * its fd (takes the lock). */
void vsock_conn_event(void *opaque, uint32_t events);

/* The listener: a new unix client (lock held; I/O thread). */
void vsock_accept(struct virtio_vsock *v);

/* Connects the guest's REQUESTs waiting in VC_DIALING (lock held; I/O thread: only its seccomp
 * filter allows connect). */
void vsock_dial(struct virtio_vsock *v);

#endif
