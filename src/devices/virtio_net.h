/* virtio-net: RX/TX/control queues of a NIC -> checked frames -> network backend -> frames into posted buffers, used ring. */
#ifndef MSIVM_DEVICES_VIRTIO_NET_H
#define MSIVM_DEVICES_VIRTIO_NET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "backends/net_backend.h"
#include "devices/rate_limiter.h"
#include "virtio/virtio_pci.h"
#include "virtio/vhost_rings.h"

#define VIRTIO_ID_NET 1

/* What the device offers a driver (docs for the guest driver rely on these). */
#define VIRTIO_NET_QUEUE_SIZE   256          /* per queue, the largest size offered */
#define VIRTIO_NET_MAX_PAIRS    7            /* 2 * pairs + control queue <= VIRTIO_PCI_MAX_QUEUES */
#define VIRTIO_NET_HDR_LEN      12u          /* struct virtio_net_hdr with num_buffers (VERSION_1) */
#define VIRTIO_NET_CONFIG_SIZE  12           /* mac, status, max_virtqueue_pairs, mtu */
#define VIRTIO_NET_MTU_DEFAULT  1500
#define VIRTIO_NET_MTU_MIN      68
#define VIRTIO_NET_MTU_MAX      65535
#define VIRTIO_NET_L2_OVERHEAD  18u          /* Ethernet header and one VLAN tag on top of the MTU */
#define VIRTIO_NET_GSO_FRAME_MAX (65535u + VIRTIO_NET_L2_OVERHEAD) /* a 64 KiB TSO frame */
#define VIRTIO_NET_MIN_FRAME    14u          /* an Ethernet header */
#define VIRTIO_NET_TX_IOV       64           /* TX segments passed as they are; more are copied */

/* Feature bits. */
#define VIRTIO_NET_F_CSUM       0
#define VIRTIO_NET_F_GUEST_CSUM 1
#define VIRTIO_NET_F_CTRL_GUEST_OFFLOADS 2
#define VIRTIO_NET_F_MTU        3
#define VIRTIO_NET_F_MAC        5
#define VIRTIO_NET_F_GUEST_TSO4 7
#define VIRTIO_NET_F_GUEST_TSO6 8
#define VIRTIO_NET_F_GUEST_ECN  9
#define VIRTIO_NET_F_GUEST_UFO  10
#define VIRTIO_NET_F_HOST_TSO4  11
#define VIRTIO_NET_F_HOST_TSO6  12
#define VIRTIO_NET_F_HOST_ECN   13
#define VIRTIO_NET_F_MRG_RXBUF  15
#define VIRTIO_NET_F_STATUS     16
#define VIRTIO_NET_F_CTRL_VQ    17
#define VIRTIO_NET_F_CTRL_RX    18
#define VIRTIO_NET_F_MQ         22
#define VIRTIO_NET_F_CTRL_MAC_ADDR 23

/* Receive offloads the driver can switch with CTRL_GUEST_OFFLOADS (their feature bits). */
#define VIRTIO_NET_GUEST_OFFLOADS_MASK ((1ull << VIRTIO_NET_F_GUEST_CSUM) | \
	(1ull << VIRTIO_NET_F_GUEST_TSO4) | (1ull << VIRTIO_NET_F_GUEST_TSO6) | \
	(1ull << VIRTIO_NET_F_GUEST_ECN) | (1ull << VIRTIO_NET_F_GUEST_UFO))

/* The header before every frame. */
#define VIRTIO_NET_HDR_F_NEEDS_CSUM 1
#define VIRTIO_NET_HDR_F_DATA_VALID 2
#define VIRTIO_NET_HDR_GSO_NONE     0
#define VIRTIO_NET_HDR_GSO_TCPV4    1
#define VIRTIO_NET_HDR_GSO_TCPV6    4
#define VIRTIO_NET_HDR_GSO_ECN      0x80

/* Config status and control queue. */
#define VIRTIO_NET_S_LINK_UP          1
#define VIRTIO_NET_CTRL_RX            0
#define VIRTIO_NET_CTRL_RX_PROMISC    0
#define VIRTIO_NET_CTRL_RX_ALLMULTI   1
#define VIRTIO_NET_CTRL_MAC           1
#define VIRTIO_NET_CTRL_MAC_TABLE_SET 0
#define VIRTIO_NET_CTRL_MAC_ADDR_SET  1
#define VIRTIO_NET_CTRL_MQ            4
#define VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET 0
#define VIRTIO_NET_CTRL_GUEST_OFFLOADS 5
#define VIRTIO_NET_CTRL_GUEST_OFFLOADS_SET 0
#define VIRTIO_NET_MAC_TABLE_MAX      64   /* entries per table (unicast, multicast) kept */
#define VIRTIO_NET_OK                 0
#define VIRTIO_NET_ERR                1

/* One --net option. */
struct virtio_net_opts {
	struct net_open_cfg be;    /* backend kind and its settings */
	uint8_t mac[6];
	bool mac_set;              /* else 52:54:00:12:34:<index> */
	uint16_t queues;           /* queue pairs, 1..VIRTIO_NET_MAX_PAIRS */
	uint16_t mtu;              /* 0: VIRTIO_NET_MTU_DEFAULT */
	char id[64];               /* id=: the operator's name for it (Firecracker's iface_id), "" none */
};

/* Why frames were dropped, for --stats. */
enum vnet_drop {
	VNET_DROP_TX_TOO_BIG,      /* longer than MTU + 18 (or 64 KiB + 18 with TSO) */
	VNET_DROP_TX_RUNT,         /* shorter than an Ethernet header */
	VNET_DROP_TX_BAD_HDR,      /* header asks for an offload not negotiated or malformed */
	VNET_DROP_TX_BACKEND,      /* the backend could not send it */
	VNET_DROP_RX_TOO_BIG,      /* does not fit the posted buffers (or the staging buffer) */
	VNET_DROP_RX_BAD_HDR,      /* backend frame with offloads the driver did not accept */
	VNET_DROP_RX_RESET,        /* waiting for buffers when the driver reset the device */
	VNET_DROP_RX_OVER_MTU,     /* longer than the MTU the driver was given (F_MTU), not GSO */
	VNET_DROP_RX_FILTERED,     /* destination not accepted by the driver's filters (CTRL_RX) */
	VNET_NDROPS
};

struct virtio_net_stats {
	uint64_t tx_frames, tx_bytes;  /* frames handed to the backend (without the header) */
	uint64_t rx_frames, rx_bytes;  /* frames placed in guest buffers (without the header) */
	uint64_t drops[VNET_NDROPS];
	uint64_t rx_stalls;        /* frames that had to wait for the guest to post buffers */
	uint64_t ctrl_ok, ctrl_err;
	uint64_t tx_flags_ignored; /* frames whose header flags the device does not know (ignored) */
};

/* The driver's receive filter (CTRL_RX, CTRL_MAC TABLE_SET); reset: promiscuous, empty tables. */
struct vnet_filter {
	bool promisc, allmulti;
	bool uni_overflow, multi_overflow; /* more entries than kept: accept the whole class */
	uint32_t n_uni, n_multi;
	uint8_t uni[VIRTIO_NET_MAC_TABLE_MAX][6], multi[VIRTIO_NET_MAC_TABLE_MAX][6];
};

struct virtio_net;

/* One backend queue's receive side. */
struct vnet_bq {
	struct virtio_net *dev;
	unsigned index;
	uint8_t *buf;              /* staging: VIRTIO_NET_HDR_LEN header bytes, then the frame */
	uint32_t len;              /* bytes waiting in buf, header included; 0: none */
	bool stalled;              /* not reading: no receive buffers, or no ready driver */
	bool waiting;              /* the frame in buf was counted in rx_stalls */
	bool admitted;             /* the frame in buf passed the receive rate limiter */
	bool watched;              /* the backend's rx fd is in the event loop */
	bool dead;                 /* the backend queue failed: never read again */
	struct evloop_handler handler;
};

struct virtio_net {
	struct virtio_pci pci;
	bool pci_ready;            /* virtio_pci_init was called */
	char name[16];
	uint8_t mac[6];            /* current (CTRL_MAC_ADDR may change it) */
	uint8_t mac_default[6];    /* the configured one, restored at reset */
	uint16_t mtu;
	uint64_t guest_offloads;   /* CTRL_GUEST_OFFLOADS state (feature bits), valid if set */
	bool guest_offloads_set;   /* else the negotiated receive offloads apply */
	bool tx_flags_logged;      /* unknown TX header flags were reported once */
	struct vnet_filter filter;
	uint16_t max_pairs;        /* queue pairs offered */
	uint16_t curr_pairs;       /* pairs the driver uses (VQ_PAIRS_SET), 1 after reset */
	uint64_t features;         /* device-specific features offered */
	struct net_backend *be;
	unsigned offloads_on;      /* NET_OFFLOAD_* last given to the backend */
	struct evloop *loop;
	struct vnet_bq bq[NET_BE_MAX_QUEUES];
	struct evloop_handler aux_handler;
	bool aux_watched;
	struct virtio_net_stats stats;
	struct ratelimit rl;
	uint8_t *txbuf;            /* a TX frame with too many segments, copied */
	struct iovec txiov[VIRTIO_NET_TX_IOV + 1];
	uint16_t rx_heads[VIRTIO_NET_QUEUE_SIZE];  /* chains of one merged RX frame */
	uint32_t rx_lens[VIRTIO_NET_QUEUE_SIZE];
	struct virtq_chain chain;  /* scratch for the chain being handled */
	struct rate_limiter limiter; /* bps=, ops=: transmitted frames */
	struct rate_limiter rx_limiter; /* the same limits for received frames, a bucket of its own */
	/* backend=vhost (virtio_net_vhost.c): the kernel runs receiveq 0 and transmitq 1. */
	bool vhost;
	struct vhost_rings vh;
};

/* Creates virtio-net number `index` with o->queues queue pairs over the
 * opened backend `be`, which the device owns from now on (also on failure:
 * call virtio_net_destroy). The backend's fds are watched on `loop` (NULL
 * in tests: call virtio_net_poll). Other arguments as for virtio_pci_init.
 * Returns 0 or -errno with a message. */
int virtio_net_init(struct virtio_net *n, unsigned index, const struct virtio_net_opts *o,
		    struct net_backend *be, const struct virtio_pci_config *cfg,
		    const struct guest_mem *mem, int vm_fd, struct gsi_routes *routes,
		    struct evloop *loop, struct bus *mmio, struct pci_window window,
		    struct error *err);

/* Stops watching the backend, closes it, releases the transport. */
void virtio_net_destroy(struct virtio_net *n);

/* Limits what the guest transmits (tx) and, separately, what it receives (rx), each direction
 * its own buckets, from now on. Returns 0 or -errno with a message. */
int virtio_net_set_limit(struct virtio_net *n, const struct rate_limit_opts *tx,
			 const struct rate_limit_opts *rx, struct evloop *loop, struct error *err);

/* Changes the limits of a running NIC (NULL: that direction unchanged), any thread but one
 * holding its lock: rate_limiter_update. Returns 0 or -errno with a message. */
int virtio_net_update_limit(struct virtio_net *n, const struct rate_limit_opts *tx,
			    const struct rate_limit_opts *rx, struct error *err);

/* What the event loop does, for callers without one (tests): under the
 * transport lock, runs the backend's timer work and moves waiting backend
 * frames into receive buffers (queues not stalled). */
void virtio_net_poll(struct virtio_net *n);

/* "tx_too_big", ... for --stats. */
const char *virtio_net_drop_name(enum vnet_drop d);

#endif
