/* virtio-rng: one queue of device-writable buffers filled from a DRBG seeded by the host kernel, or from getrandom. */
#ifndef MSIVM_DEVICES_VIRTIO_RNG_H
#define MSIVM_DEVICES_VIRTIO_RNG_H

#include <stdint.h>

#include "devices/rate_limiter.h"
#include "util/ctr_drbg.h"
#include "virtio/virtio_pci.h"

#define VIRTIO_ID_RNG 4

#define VIRTIO_RNG_POOL_BYTES (64u * 1024) /* one call to the source serves this many bytes of small buffers */

/* Where the entropy comes from (--rng source=). */
enum virtio_rng_source {
	/* A DRBG per device (NIST SP 800-90A CTR_DRBG, AES-256, util/ctr_drbg.c), seeded and
	 * reseeded from the kernel's getrandom: far less host CPU per byte than getrandom. */
	VIRTIO_RNG_DRBG,
	VIRTIO_RNG_GETRANDOM, /* the kernel's getrandom for every byte (pooled for small buffers) */
	VIRTIO_RNG_NSOURCES
};

/* The spellings, by value: "drbg", "getrandom". */
extern const char *const virtio_rng_source_names[VIRTIO_RNG_NSOURCES];

/* "drbg" or "getrandom" into *out. Returns 0 or -EINVAL. */
int virtio_rng_source_parse(const char *s, enum virtio_rng_source *out);

struct virtio_rng {
	struct virtio_pci pci;
	char name[16];
	enum virtio_rng_source source;
	uint64_t bytes;             /* entropy handed to the guest */
	uint64_t requests;
	struct virtq_chain chain;   /* scratch for the chain being served */
	uint8_t pool[VIRTIO_RNG_POOL_BYTES]; /* source output not handed out yet (the tail) */
	uint32_t pool_left;         /* unused bytes at the end of pool */
	uint64_t pool_refills;      /* calls to the source that refilled the pool */
	struct ctr_drbg drbg;       /* source=drbg: this device's generator (never saved) */
	uint32_t drbg_calls;        /* generate calls since the last (re)seed */

	/* Latency mode: instead of entropy, one buffer is completed per timer
	 * tick with the guest-TSC time of the interrupt in its first 8 bytes. */
	uint32_t period_us;
	const int64_t *tsc_offset;  /* guest TSC = host TSC + *tsc_offset */
	int timer_fd;
	struct evloop_handler timer_handler;
	uint64_t ticks, ticks_idle; /* timer ticks, and ticks that found no buffer */
	struct rate_limiter limiter; /* bps=, ops= */
};

/* Creates virtio-rng number `index` on the transport, serving entropy from `source` (the DRBG
 * is set up here, so that the I/O thread's first request needs no file or new syscall). Other
 * arguments as for virtio_pci_init. Returns 0 or -errno with a message. */
int virtio_rng_init(struct virtio_rng *r, unsigned index, enum virtio_rng_source source,
		    const struct virtio_pci_config *cfg,
		    const struct guest_mem *mem, int vm_fd, struct gsi_routes *routes,
		    struct evloop *loop, struct bus *mmio, struct pci_window window,
		    struct error *err);
void virtio_rng_destroy(struct virtio_rng *r);

/* Limits the entropy handed out (bytes/s, requests/s) from now on. Returns 0
 * or -errno with a message. */
int virtio_rng_set_limit(struct virtio_rng *r, const struct rate_limit_opts *o,
			 struct evloop *loop, struct error *err);

/* Switches the device to latency mode: every `period_us` the event loop
 * completes one posted buffer, writing (guest TSC now, sequence number) as
 * two little-endian u64 at its start, then raises the queue interrupt.
 * Kicks no longer complete buffers. Returns 0 or -errno with a message. */
int virtio_rng_set_latency(struct virtio_rng *r, uint32_t period_us, const int64_t *tsc_offset,
			   struct evloop *loop, struct error *err);

#endif
