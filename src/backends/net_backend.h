/* Network backends: host packet I/O for a NIC (tap, unix datagram socket, built-in peer); no virtio types here. */
#ifndef MSIVM_BACKENDS_NET_BACKEND_H
#define MSIVM_BACKENDS_NET_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "util/error.h"

#define NET_BE_MAX_QUEUES  8
#define NET_IFNAME_MAX     16        /* IFNAMSIZ, with the NUL */
#define NET_PATH_MAX       100       /* socket base path; ".0"/".1" must still fit sun_path */
#define NET_BE_MAX_STATS   12

/* Offloads a backend can carry (the caller's frames may be partially
 * checksummed or segmentation-offloaded when the header says so). */
#define NET_OFFLOAD_CSUM 0x1u
#define NET_OFFLOAD_TSO4 0x2u
#define NET_OFFLOAD_TSO6 0x4u
#define NET_OFFLOAD_ECN  0x8u

/* Bytes of the offload header that precedes every frame when
 * net_backend.hdr_len is not 0: Linux tun's vnet header in its 12-byte
 * form (flags, gso type, lengths, checksum position, a 2-byte tail the
 * backend neither reads nor writes). The backend never interprets it. */
#define NET_OFFLOAD_HDR_LEN 12u

enum net_be_kind {
	NET_BE_TAP,
	NET_BE_PEER,
	NET_BE_SOCKET,
	NET_BE_VHOST,  /* a tap whose frames the kernel's vhost-net moves (one queue pair) */
	NET_BE_NKINDS
};

/* The built-in peer's behaviour. */
enum net_peer_mode {
	NET_PEER_RESPONDER,  /* answers ARP and ICMP echo for 10.0.2.2, echoes UDP port 7 */
	NET_PEER_SINK,       /* counts every frame and drops it */
	NET_PEER_SOURCE,     /* as responder, plus UDP frames at a set rate and size */
	NET_PEER_NMODES
};

/* The spellings, by value: tap, peer, socket, vhost; responder, sink, source. */
extern const char *const net_be_kind_names[NET_BE_NKINDS];
extern const char *const net_peer_mode_names[NET_PEER_NMODES];

/* The peer's addresses (documented for guest drivers and tests). */
#define NET_PEER_IP          0x0a000202u   /* 10.0.2.2 */
#define NET_PEER_GUEST_IP    0x0a00020fu   /* 10.0.2.15: source frames go here until the guest is heard */
#define NET_PEER_ECHO_PORT   7
#define NET_PEER_SOURCE_PORT 9             /* source frames: UDP 10.0.2.2:9 -> guest:9 */
#define NET_PEER_FRAME_MAX   2048          /* larger frames are counted and ignored */
#define NET_PEER_QUEUE       256           /* frames waiting for the guest */
#define NET_PEER_SIZE_MIN    60            /* source frame bytes (Ethernet, no FCS) */
#define NET_PEER_SIZE_MAX    1514
#define NET_PEER_RATE_MAX    10000000u     /* source frames per second */
#define NET_PEER_MAC         { 0x52, 0x54, 0x00, 0x00, 0x00, 0x02 }

struct net_open_cfg {
	enum net_be_kind kind;
	unsigned nqueues;              /* tap: one fd per queue (IFF_MULTI_QUEUE if > 1); others use 1 */
	char ifname[NET_IFNAME_MAX];   /* tap: existing tap to attach or name to create; "": kernel picks */
	char path[NET_PATH_MAX];       /* socket: base path P (see net_socket.c) */
	enum net_peer_mode peer_mode;  /* peer */
	uint32_t rate, size;           /* peer source: frames per second, bytes per frame */
};

/* A named counter a backend reports for --stats. */
struct net_be_stat {
	const char *name;
	uint64_t value;
};

struct net_backend;

/* Every hook is called with the owner's lock held (one caller at a time). */
struct net_backend_ops {
	/* Sends one frame (hdr_len header bytes first when hdr_len != 0) on
	 * queue q. Returns 0, or -errno: the frame is dropped (the backend has
	 * logged what a person must know, once). */
	int (*send)(struct net_backend *b, unsigned q, const struct iovec *iov, int iovcnt);
	/* Receives one frame (with its header when hdr_len != 0) from queue q
	 * into buf. Returns its length, -EAGAIN if none is waiting, -EMSGSIZE
	 * if one longer than len was dropped, or another -errno if the queue
	 * is unusable from now on (stop watching rx_fd); -ENODEV means the host
	 * side is gone and the backend has logged that once. */
	ssize_t (*recv)(struct net_backend *b, unsigned q, void *buf, size_t len);
	/* Tells the host which NET_OFFLOAD_* the receiver accepts in received
	 * frames (a subset of `offloads`). Optional. Returns 0 or -errno. */
	int (*set_offload)(struct net_backend *b, unsigned flags);
	/* Runs when aux_fd is readable (timers). Optional. */
	void (*aux)(struct net_backend *b);
	/* Fills up to max named counters. Optional. Returns how many. */
	unsigned (*stats)(struct net_backend *b, struct net_be_stat *out, unsigned max);
	void (*close)(struct net_backend *b);
};

struct net_backend {
	const struct net_backend_ops *ops;
	void *priv;
	const char *kind;              /* "tap", "peer", "socket" */
	char desc[256];                /* what it is attached to, for log lines and --stats */
	unsigned nqueues;
	int rx_fd[NET_BE_MAX_QUEUES];  /* level-triggered: readable while recv may return a frame */
	int aux_fd;                    /* -1, or readable when aux must run */
	uint32_t hdr_len;              /* 0 or NET_OFFLOAD_HDR_LEN */
	unsigned offloads;             /* NET_OFFLOAD_* the host side can carry (0 without a header) */
	uint32_t mtu;                  /* the host interface's MTU when opened (tap), 0: none */
	int vhost_fd;                  /* vhost: /dev/vhost-net, owned by this process; else -1 */
	uint64_t vhost_features;       /* vhost: VHOST_GET_FEATURES */
};

/* Parses "tap", "peer", "socket" or "vhost" / "responder", "sink" or "source".
 * Return 0 or -EINVAL. */
int net_be_kind_parse(const char *s, enum net_be_kind *out);
int net_peer_mode_parse(const char *s, enum net_peer_mode *out);

/* Opens the backend cfg asks for. Returns 0 and *out, or -errno with a
 * message (e.g. a tap that cannot be created without CAP_NET_ADMIN). */
int net_backend_open(struct net_backend **out, const struct net_open_cfg *cfg, struct error *err);

/* Closes fds, removes what the backend created (socket files) and frees it. NULL is a no-op. */
void net_backend_close(struct net_backend *b);

/* Wrappers that tolerate missing optional hooks. */
int net_backend_set_offload(struct net_backend *b, unsigned flags);
unsigned net_backend_stats(struct net_backend *b, struct net_be_stat *out, unsigned max);

/* Allocates a backend with every fd -1 (for the backends and test doubles). NULL if out of memory. */
struct net_backend *net_backend_alloc(void);

/* The backends. Each returns 0 or -errno with a message. */
int net_tap_open(struct net_backend *b, const struct net_open_cfg *cfg, struct error *err);
int net_peer_open(struct net_backend *b, const struct net_open_cfg *cfg, struct error *err);
int net_socket_open(struct net_backend *b, const struct net_open_cfg *cfg, struct error *err);
/* A tap as net_tap_open opens it (one queue, with the 12-byte offload header), plus
 * /dev/vhost-net with this process as its owner: the frames never pass through msivm
 * (devices/virtio_net_vhost.c drives it). */
int net_vhost_open(struct net_backend *b, const struct net_open_cfg *cfg, struct error *err);

#endif
