/* virtio-rng: queue kick -> chains of writable buffers -> DRBG or getrandom (pooled for small buffers) -> used ring -> interrupt. */
#include "devices/virtio_rng.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "util/ctr_drbg.h"
#include "util/log.h"
#include "util/parse.h"
#include "virtio/budget.h"

/* Bytes given to one chain at most: the driver takes fewer than it offered
 * (virtio-rng allows it), so a chain of gigabytes costs no more than this. */
#define RNG_CHAIN_MAX (64u * 1024)

/* The DRBG takes fresh entropy from the kernel after this many generate calls (64 KiB each
 * at most: one MiB between reseeds; SP 800-90A allows 2^48). */
#define RNG_DRBG_RESEED_CALLS 16

/* Fills `len` bytes straight from getrandom; returns how many (short only on failure). */
static uint32_t getrandom_all(uint8_t *p, uint32_t len)
{
	uint32_t done = 0;
	while (done < len) {
		ssize_t n = getrandom(p + done, len - done, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_warn("virtio-rng: getrandom: %s", strerror(errno));
			break;
		}
		done += (uint32_t)n;
	}
	return done;
}

const char *const virtio_rng_source_names[VIRTIO_RNG_NSOURCES] = { "drbg", "getrandom" };

int virtio_rng_source_parse(const char *s, enum virtio_rng_source *out)
{
	unsigned v;
	if (parse_word(s, virtio_rng_source_names, VIRTIO_RNG_NSOURCES, &v))
		return -EINVAL;
	*out = (enum virtio_rng_source)v;
	return 0;
}

/* The device's DRBG, reseeded from getrandom every RNG_DRBG_RESEED_CALLS calls: `len` bytes
 * (at most RNG_CHAIN_MAX) into p. Returns how many (0 when a reseed found no entropy). */
static uint32_t drbg_fill(struct virtio_rng *r, uint8_t *p, uint32_t len)
{
	uint32_t done = 0;
	while (done < len) {
		if (r->drbg_calls == RNG_DRBG_RESEED_CALLS) {
			uint8_t e[CTR_DRBG_SEED_BYTES];
			uint32_t got = getrandom_all(e, sizeof(e));
			if (got == sizeof(e))
				ctr_drbg_reseed(&r->drbg, e);
			explicit_bzero(e, sizeof(e));
			if (got != sizeof(e)) {
				log_ratelimited(&r->pci.rl, LOG_WARN, "%s: the DRBG cannot reseed; "
						"buffer returned short", r->name);
				break;
			}
			r->drbg_calls = 0;
		}
		done += (uint32_t)ctr_drbg_generate(&r->drbg, p + done, len - done);
		r->drbg_calls++;
	}
	return done;
}

/* Fills `len` bytes (at most RNG_CHAIN_MAX) straight from the device's source; returns how
 * many (short only when the source fails: getrandom's error, or a DRBG that cannot reseed). */
static uint32_t source_fill(struct virtio_rng *r, uint8_t *p, uint32_t len)
{
	return r->source == VIRTIO_RNG_GETRANDOM ? getrandom_all(p, len) : drbg_fill(r, p, len);
}

/* Fills `len` bytes of guest buffer: small requests from the device's pool (one call to the
 * source per VIRTIO_RNG_POOL_BYTES, not one per buffer: getrandom's syscall, or the DRBG's
 * counter setup and update), large ones straight from the source. Pool bytes are handed out once: what was
 * copied is wiped. Returns how many were filled (short only when the source fails). */
static uint32_t fill_random(struct virtio_rng *r, uint8_t *p, uint32_t len)
{
	if (len >= VIRTIO_RNG_POOL_BYTES)
		return source_fill(r, p, len);
	uint32_t done = 0;
	while (done < len) {
		if (r->pool_left == 0) {
			if (source_fill(r, r->pool, VIRTIO_RNG_POOL_BYTES) != VIRTIO_RNG_POOL_BYTES)
				break;
			r->pool_left = VIRTIO_RNG_POOL_BYTES;
			r->pool_refills++;
		}
		uint32_t k = len - done < r->pool_left ? len - done : r->pool_left;
		uint8_t *src = r->pool + VIRTIO_RNG_POOL_BYTES - r->pool_left;
		memcpy(p + done, src, k);
		explicit_bzero(src, k);
		r->pool_left -= k;
		done += k;
	}
	return done;
}

static void rng_notify(void *opaque, uint16_t qi)
{
	struct virtio_rng *r = opaque;
	struct virtq *q = virtio_pci_queue(&r->pci, qi);
	if (!q || r->period_us)
		return; /* latency mode: the timer completes buffers */
	struct vbudget budget = vbudget_start(VBUDGET_BYTES);
	while (vbudget_left(&budget) && virtq_pop(q, &r->chain) == 1) {
		uint64_t room = budget.bytes < RNG_CHAIN_MAX ? budget.bytes : RNG_CHAIN_MAX;
		if (r->chain.in_bytes < room)
			room = r->chain.in_bytes;
		if (!rate_limiter_admit(&r->limiter, room)) {
			virtq_unpop(q, 1); /* the limiter's timer kicks the queue again */
			break;
		}
		uint32_t written = 0;
		for (uint32_t i = r->chain.n_out; i < r->chain.n_out + r->chain.n_in; i++) {
			uint32_t want = r->chain.buf[i].len;
			if (want > room - written)
				want = (uint32_t)(room - written);
			uint32_t n = fill_random(r, r->chain.buf[i].host, want);
			written += n;
			if (n < r->chain.buf[i].len)
				break; /* full, or getrandom failed */
		}
		virtq_fill(q, r->chain.head, written); /* published once, by queue_done below */
		vbudget_charge(&budget, written);
		r->bytes += written;
		r->requests++;
	}
	if (!vbudget_left(&budget) && virtq_has_work(q))
		virtio_pci_queue_resume(&r->pci, qi);
	virtio_pci_queue_done(&r->pci, qi);
}

/* Latency mode tick: one buffer gets the current guest TSC, then the interrupt. */
static void rng_tick(void *opaque, uint32_t events)
{
	struct virtio_rng *r = opaque;
	uint64_t expirations;
	if (read(r->timer_fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return;
	pthread_mutex_lock(&r->pci.lock);
	r->ticks++;
	struct virtq *q = virtio_pci_queue(&r->pci, 0);
	int got = q ? virtq_pop(q, &r->chain) : 0;
	const struct virtq_buf *b = &r->chain.buf[r->chain.n_out];
	if (got == 1 && r->chain.n_in && b->len >= 16) {
		uint64_t seq = r->requests;
		uint64_t now = __builtin_ia32_rdtsc() + (uint64_t)*r->tsc_offset;
		memcpy(b->host, &now, 8);
		memcpy((uint8_t *)b->host + 8, &seq, 8);
		virtq_push(q, r->chain.head, 16);
		r->requests++;
		r->bytes += 16;
	} else {
		r->ticks_idle++;
		if (got == 1) /* a buffer too small for a stamp goes back unused */
			virtq_push(q, r->chain.head, 0);
	}
	if (got != 0) /* pushed something, or the ring is broken: let the transport act */
		virtio_pci_queue_done(&r->pci, 0);
	pthread_mutex_unlock(&r->pci.lock);
}

int virtio_rng_set_latency(struct virtio_rng *r, uint32_t period_us, const int64_t *tsc_offset,
			   struct evloop *loop, struct error *err)
{
	r->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (r->timer_fd < 0)
		return error_set(err, -errno, "%s: timerfd: %s", r->name, strerror(errno));
	struct itimerspec its = {
		.it_interval = { period_us / 1000000, (long)(period_us % 1000000) * 1000 },
		.it_value = { period_us / 1000000, (long)(period_us % 1000000) * 1000 },
	};
	r->period_us = period_us;
	r->tsc_offset = tsc_offset;
	r->timer_handler = (struct evloop_handler){ rng_tick, r };
	int ret = timerfd_settime(r->timer_fd, 0, &its, NULL) ? -errno
		: evloop_add(loop, r->timer_fd, EPOLLIN, &r->timer_handler);
	if (ret)
		return error_set(err, ret, "%s: cannot start the latency timer: %s", r->name,
				 strerror(-ret));
	return 0;
}

static const struct virtio_dev_ops rng_ops = {
	.queue_notify = rng_notify,
};

int virtio_rng_init(struct virtio_rng *r, unsigned index, enum virtio_rng_source source,
		    const struct virtio_pci_config *cfg,
		    const struct guest_mem *mem, int vm_fd, struct gsi_routes *routes,
		    struct evloop *loop, struct bus *mmio, struct pci_window window,
		    struct error *err)
{
	snprintf(r->name, sizeof(r->name), "rng%u", index);
	r->source = source;
	r->timer_fd = -1; /* before any failure: virtio_rng_destroy closes it */
	if (source == VIRTIO_RNG_DRBG) {
		/* Seeded here, per device and per process: a restored snapshot's clones each draw
		 * their own stream (no DRBG state is saved). */
		uint8_t seed[CTR_DRBG_SEED_BYTES];
		uint32_t got = getrandom_all(seed, sizeof(seed));
		if (got == sizeof(seed))
			ctr_drbg_instantiate(&r->drbg, seed);
		explicit_bzero(seed, sizeof(seed));
		if (got != sizeof(seed))
			return error_set(err, -EIO, "%s: no entropy from getrandom to seed the DRBG",
					 r->name);
		r->drbg_calls = 0;
	}
	r->period_us = 0;
	r->bytes = r->requests = 0;
	struct virtio_dev_info info = {
		.name = r->name, .device_id = VIRTIO_ID_RNG, .nqueues = 1, .queue_max = 256,
		.config_size = 0, .pci_class = 0x00ff00, .features = 0,
	};
	return virtio_pci_init(&r->pci, &info, &rng_ops, r, cfg, mem, vm_fd, routes, loop, mmio,
			       window, err);
}

static void rng_resume(void *opaque)
{
	struct virtio_rng *r = opaque;
	virtio_pci_kick(&r->pci, 0);
}

int virtio_rng_set_limit(struct virtio_rng *r, const struct rate_limit_opts *o,
			 struct evloop *loop, struct error *err)
{
	return rate_limiter_init(&r->limiter, o, loop, rng_resume, r, r->name, err);
}

void virtio_rng_destroy(struct virtio_rng *r)
{
	rate_limiter_destroy(&r->limiter);
	if (r->timer_fd >= 0)
		close(r->timer_fd);
	r->timer_fd = -1;
	ctr_drbg_wipe(&r->drbg);
	virtio_pci_destroy(&r->pci);
}
