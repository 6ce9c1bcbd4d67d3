/* virtio-blk: request queues of a raw disk image -> checked requests -> block backend -> status byte, used ring. */
#ifndef MSIVM_DEVICES_VIRTIO_BLK_H
#define MSIVM_DEVICES_VIRTIO_BLK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "backends/blk_backend.h"
#include "devices/rate_limiter.h"
#include "virtio/virtio_pci.h"

#define VIRTIO_ID_BLOCK 2

/* What the device offers a driver (see docs: the guest driver relies on these).
 * SEG_MAX, SIZE_MAX and MAX_DISCARD_SECTORS are upper bounds: a device
 * advertises min(bound, what its backend takes), see virtio_blk_init. */
#define VIRTIO_BLK_QUEUE_SIZE   256          /* per queue, the largest size offered */
#define VIRTIO_BLK_MAX_QUEUES   8
#define VIRTIO_BLK_SEG_MAX      126          /* data segments per request (header and status fit a 128-entry table) */
#define VIRTIO_BLK_SIZE_MAX     (1u << 20)   /* bytes per data segment */
#define VIRTIO_BLK_MAX_DISCARD_SECTORS (1u << 22) /* 2 GiB per discard/write-zeroes */
#define VIRTIO_BLK_ID_BYTES     20
#define VIRTIO_BLK_CONFIG_SIZE  60           /* through write_zeroes_may_unmap + padding */
#define VIRTIO_BLK_PATH_MAX     4096

/* Feature bits. */
#define VIRTIO_BLK_F_SIZE_MAX     1
#define VIRTIO_BLK_F_SEG_MAX      2
#define VIRTIO_BLK_F_RO           5
#define VIRTIO_BLK_F_BLK_SIZE     6
#define VIRTIO_BLK_F_FLUSH        9
#define VIRTIO_BLK_F_TOPOLOGY     10
#define VIRTIO_BLK_F_CONFIG_WCE   11
#define VIRTIO_BLK_F_MQ           12
#define VIRTIO_BLK_F_DISCARD      13
#define VIRTIO_BLK_F_WRITE_ZEROES 14

/* Request types and status values. */
#define VIRTIO_BLK_T_IN           0
#define VIRTIO_BLK_T_OUT          1
#define VIRTIO_BLK_T_FLUSH        4
#define VIRTIO_BLK_T_GET_ID       8
#define VIRTIO_BLK_T_DISCARD      11
#define VIRTIO_BLK_T_WRITE_ZEROES 13
#define VIRTIO_BLK_S_OK           0
#define VIRTIO_BLK_S_IOERR        1
#define VIRTIO_BLK_S_UNSUPP       2
#define VIRTIO_BLK_DWZ_F_UNMAP    1u   /* flags of a discard/write-zeroes segment */

/* One --disk option. */
struct virtio_blk_opts {
	char path[VIRTIO_BLK_PATH_MAX];
	bool ro;
	uint16_t queues;           /* 1..VIRTIO_BLK_MAX_QUEUES (0 in a config being parsed: one per vCPU) */
	enum blk_engine engine;
};

/* Request counters by type, for --stats. */
enum virtio_blk_stat { VBLK_IN, VBLK_OUT, VBLK_FLUSH, VBLK_GET_ID, VBLK_DISCARD,
		       VBLK_WRITE_ZEROES, VBLK_OTHER, VBLK_NSTATS };

struct virtio_blk_stats {
	uint64_t requests[VBLK_NSTATS];
	uint64_t bytes_read, bytes_written;
	uint64_t ioerr;            /* completed with IOERR (bad request or host error) */
	uint64_t unsupp;           /* completed with UNSUPP */
};

struct virtio_blk;

/* One request in flight; a queue has at most VIRTIO_BLK_QUEUE_SIZE, made VBLK_REQ_CHUNK at a time. */
#define VBLK_REQ_CHUNK  16
#define VBLK_REQ_CHUNKS (VIRTIO_BLK_QUEUE_SIZE / VBLK_REQ_CHUNK)
/* Read/write bytes a queue may have in flight before it stops taking requests (one request of
 * any size still starts when less is in flight). Without it a guest could put 256 requests of
 * 64 MiB each into the host's I/O queue: another disk's requests wait behind them, and stopping
 * the VM (which must wait for I/O writing into guest RAM) waits for all of it. */
#define VBLK_INFLIGHT_BYTES (16u << 20)

struct vblk_req {
	struct blk_io io;
	struct virtio_blk *dev;
	struct vblk_req *next_free;
	uint8_t *status;           /* the last byte of the last device-writable buffer */
	uint32_t type;
	uint32_t written;          /* used length: every device-writable byte, status included */
	uint32_t bytes;            /* data bytes of a read or write */
	uint32_t charged;          /* bytes counted in the queue's inflight_bytes until done */
	uint16_t queue, head;
	bool syncing;              /* a writethrough flush follows the write */
	struct iovec iov[VIRTIO_BLK_SEG_MAX];
};

struct virtio_blk {
	struct virtio_pci pci;
	bool pci_ready;            /* virtio_pci_init was called */
	char name[16];
	char id[VIRTIO_BLK_ID_BYTES];
	struct blk_backend *be;
	uint16_t nqueues;
	uint64_t features;         /* device-specific features offered */
	/* Limits advertised in the config space and enforced on requests
	 * (fixed at init from the constants above and the backend). */
	uint32_t seg_max, size_max;
	uint32_t max_discard_sectors, max_write_zeroes_sectors, discard_align;
	int8_t writeback;          /* set by the driver (CONFIG_WCE): 0 or 1; -1: FLUSH negotiated */
	int flush_error;           /* first failed flush (-errno), latched until reset */
	/* Each queue's requests, VBLK_REQ_CHUNK per allocation, made on first need. */
	struct vblk_req *req_chunks[VIRTIO_BLK_MAX_QUEUES][VBLK_REQ_CHUNKS];
	struct vblk_req *free_reqs[VIRTIO_BLK_MAX_QUEUES];
	uint16_t fresh_reqs[VIRTIO_BLK_MAX_QUEUES]; /* requests made so far */
	bool starved[VIRTIO_BLK_MAX_QUEUES];  /* stopped popping: no free request, or too many
					       * bytes in flight (VBLK_INFLIGHT_BYTES) */
	uint64_t inflight_bytes[VIRTIO_BLK_MAX_QUEUES]; /* read/write data bytes started, not done */
	bool pushed[VIRTIO_BLK_MAX_QUEUES];   /* used buffers not yet signalled */
	struct evloop *loop;
	struct evloop_handler io_handler;
	bool io_registered;
	struct virtio_blk_stats stats;
	struct ratelimit rl;
	struct virtq_chain chain;  /* scratch for the chain being parsed */
	struct rate_limiter limiter; /* bps=, ops= */
};

/* Creates virtio-blk number `index` with `nqueues` request queues over the
 * opened backend `be`, which the device owns from now on (also on failure:
 * call virtio_blk_destroy). The backend's completion eventfd is watched on
 * `loop` (NULL in tests: call virtio_blk_complete). Other arguments as for
 * virtio_pci_init. Returns 0 or -errno with a message. */
int virtio_blk_init(struct virtio_blk *b, unsigned index, uint16_t nqueues,
		    struct blk_backend *be, const struct virtio_pci_config *cfg,
		    const struct guest_mem *mem, int vm_fd, struct gsi_routes *routes,
		    struct evloop *loop, struct bus *mmio, struct pci_window window,
		    struct error *err);

/* Waits for I/O in flight, closes the backend, releases the transport. */
/* Re-reads the backing image's size (the operator grew or shrank it; SIGUSR2 asks for this)
 * and, if it changed, updates capacity and tells the driver with a configuration-change
 * interrupt. Requests past a shrunk end fail with IOERR. Takes the transport lock. Returns
 * 1 if the size changed, 0 if not, -errno if it cannot be read (logged). */
int virtio_blk_resize(struct virtio_blk *b);

void virtio_blk_destroy(struct virtio_blk *b);

/* Puts the opened backend `be` in place of the disk's and returns the old one in *old (the
 * caller closes it), then tells the driver the new capacity with a configuration-change
 * interrupt (every interrupt mode), whether or not the size changed. The I/O thread must be
 * parked with no request in flight (vm_io_park). Takes the transport lock. Returns 0 or -errno
 * with a message (be is then not taken). */
int virtio_blk_swap_backend(struct virtio_blk *b, struct blk_backend *be,
			    struct blk_backend **old, struct error *err);

/* Limits the disk's requests (bytes/s, requests/s) from now on. Returns 0
 * or -errno with a message. */
int virtio_blk_set_limit(struct virtio_blk *b, const struct rate_limit_opts *o,
			 struct evloop *loop, struct error *err);

/* Changes the limits of a running disk, any thread but one holding its lock:
 * rate_limiter_update. Returns 0 or -errno with a message. */
int virtio_blk_update_limit(struct virtio_blk *b, const struct rate_limit_opts *o,
			    struct error *err);

/* The event loop's handler body: under the transport lock, runs finished
 * backend I/Os to their used-ring entries and interrupts. */
void virtio_blk_complete(struct virtio_blk *b);

#endif
