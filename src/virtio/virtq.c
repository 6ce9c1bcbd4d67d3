/* Virtio split virtqueue: reads the driver's rings through gm_ptr, checks every guest value, writes used elements. */
#include "virtio/virtq.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Offsets inside the rings. */
#define AVAIL_FLAGS     0u
#define AVAIL_IDX       2u
#define AVAIL_RING      4u
#define USED_FLAGS      0u
#define USED_IDX        2u
#define USED_RING       4u

/* One descriptor as read from the guest, already in host byte order. */
struct desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

/* Ring fields are naturally aligned (checked at init), so single atomic
 * accesses are possible: the compiler neither tears nor repeats them. */
static uint16_t load16_relaxed(const uint8_t *p)
{
	return le16toh(__atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED));
}

static uint16_t load16_acquire(const uint8_t *p)
{
	return le16toh(__atomic_load_n((const uint16_t *)p, __ATOMIC_ACQUIRE));
}

static void store16_relaxed(uint8_t *p, uint16_t v)
{
	__atomic_store_n((uint16_t *)p, htole16(v), __ATOMIC_RELAXED);
}

static void store16_release(uint8_t *p, uint16_t v)
{
	__atomic_store_n((uint16_t *)p, htole16(v), __ATOMIC_RELEASE);
}

static void store32_relaxed(uint8_t *p, uint32_t v)
{
	__atomic_store_n((uint32_t *)p, htole32(v), __ATOMIC_RELAXED);
}

/* Snapshots descriptor `i` of `table` (an indirect table need not be aligned,
 * so it is copied bytewise). Only the snapshot is used afterwards: the guest
 * may rewrite the descriptor while we look at it. */
static void read_desc(const uint8_t *table, uint32_t i, struct desc *d)
{
	uint8_t raw[VIRTQ_DESC_SIZE];
	memcpy(raw, table + (size_t)i * VIRTQ_DESC_SIZE, sizeof(raw));
	/* The compiler must not satisfy later uses of raw by re-reading guest memory. */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	uint64_t addr;
	uint32_t len;
	uint16_t flags, next;
	memcpy(&addr, raw, 8);
	memcpy(&len, raw + 8, 4);
	memcpy(&flags, raw + 12, 2);
	memcpy(&next, raw + 14, 2);
	d->addr = le64toh(addr);
	d->len = le32toh(len);
	d->flags = le16toh(flags);
	d->next = le16toh(next);
}

/* Marks the queue broken and logs why (rate-limited). Returns -EIO. */
__attribute__((format(printf, 2, 3)))
static int fail(struct virtq *q, const char *fmt, ...)
{
	char why[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	q->broken = true;
	log_ratelimited(&q->rl, LOG_WARN, "%s: %s; queue is broken", q->name ? q->name : "virtq", why);
	return -EIO;
}

/* Host view of ring [gpa, gpa+len) if it is inside RAM, `align`-aligned in the
 * guest and (as a consequence of how RAM is mapped) on the host; else NULL
 * after logging which ring is wrong. */
static uint8_t *bind_ring(struct virtq *q, const char *what, uint64_t gpa, uint64_t len,
			  uint64_t align)
{
	if (gpa & (align - 1)) {
		log_ratelimited(&q->rl, LOG_WARN, "%s: %s at 0x%" PRIx64 " is not %" PRIu64 "-byte aligned",
				q->name, what, gpa, align);
		return NULL;
	}
	uint8_t *host = gm_ptr(q->mem, gpa, len);
	if (!host) {
		log_ratelimited(&q->rl, LOG_WARN,
				"%s: %s [0x%" PRIx64 ", +0x%" PRIx64 ") is not inside guest RAM",
				q->name, what, gpa, len);
		return NULL;
	}
	if ((uintptr_t)host & (align - 1)) {
		log_ratelimited(&q->rl, LOG_WARN, "%s: host mapping of %s at 0x%" PRIx64 " is misaligned",
				q->name, what, gpa);
		return NULL;
	}
	return host;
}

int virtq_init(struct virtq *q, const struct guest_mem *mem, const char *name, uint16_t size,
	       uint64_t desc, uint64_t avail, uint64_t used, bool event_idx)
{
	struct ratelimit rl = q->rl;
	memset(q, 0, sizeof(*q));
	q->rl = rl;
	q->mem = mem;
	q->name = name ? name : "virtq";
	q->broken = true; /* until every check has passed */

	if (!mem) {
		log_ratelimited(&q->rl, LOG_WARN, "%s: no guest memory", q->name);
		return -EINVAL;
	}
	if (size == 0 || size > VIRTQ_MAX_SIZE || (size & (size - 1))) {
		log_ratelimited(&q->rl, LOG_WARN,
				"%s: queue size %u is not a power of two in [1, %u]",
				q->name, size, VIRTQ_MAX_SIZE);
		return -EINVAL;
	}
	uint8_t *d = bind_ring(q, "descriptor table", desc, VIRTQ_DESC_BYTES(size), 16);
	uint8_t *a = d ? bind_ring(q, "available ring", avail, VIRTQ_AVAIL_BYTES(size), 2) : NULL;
	uint8_t *u = a ? bind_ring(q, "used ring", used, VIRTQ_USED_BYTES(size), 4) : NULL;
	if (!u)
		return -EINVAL;

	q->size = size;
	q->desc_gpa = desc;
	q->avail_gpa = avail;
	q->used_gpa = used;
	q->desc_host = d;
	q->avail_host = a;
	q->used_host = u;
	q->event_idx = event_idx;
	q->broken = false;
	return 0;
}

/* Appends descriptor `d` (not INDIRECT) to chain `c`; `*seen_write` tracks
 * whether a device-writable descriptor came before. Returns 0 or -EIO. */
static int add_buf(struct virtq *q, struct virtq_chain *c, const struct desc *d,
		   bool *seen_write)
{
	bool write = d->flags & VIRTQ_DESC_F_WRITE;
	if (!write && *seen_write)
		return fail(q, "chain %u: device-readable descriptor after a device-writable one",
			    c->head);
	*seen_write |= write;
	if (d->len == 0)
		return 0; /* nothing to read or write: no buffer, no address to check */
	if (c->n_out + c->n_in >= VIRTQ_CHAIN_MAX)
		return fail(q, "chain %u has more than %u buffers", c->head, VIRTQ_CHAIN_MAX);
	uint32_t total = c->out_bytes + c->in_bytes; /* never overflows: checked below */
	if (d->len > UINT32_MAX - total)
		return fail(q, "chain %u is longer than 4 GiB in total", c->head);
	void *host = gm_ptr(q->mem, d->addr, d->len);
	if (!host)
		return fail(q, "chain %u: buffer [0x%" PRIx64 ", +0x%x) is not inside guest RAM",
			    c->head, d->addr, d->len);
	c->buf[c->n_out + c->n_in] = (struct virtq_buf){ host, d->len };
	if (write) {
		c->n_in++;
		c->in_bytes += d->len;
	} else {
		c->n_out++;
		c->out_bytes += d->len;
	}
	return 0;
}

/* Walks the chain starting at descriptor `head` into `c`. A direct chain may
 * visit at most q->size descriptors and an indirect table at most its entry
 * count, so a loop ends in -EIO instead of a hang. Returns 0 or -EIO. */
static int walk_chain(struct virtq *q, uint16_t head, struct virtq_chain *c)
{
	c->head = head;
	c->n_out = c->n_in = 0;
	c->out_bytes = c->in_bytes = 0;

	const uint8_t *table = q->desc_host;
	uint32_t count = q->size;   /* entries in the current table */
	uint32_t budget = q->size;  /* descriptors we may still visit in it */
	uint32_t i = head;
	bool indirect = false, seen_write = false;

	for (;;) {
		if (budget == 0)
			return fail(q, "chain %u: more than %u descriptors in %s (a loop?)", head,
				    count, indirect ? "the indirect table" : "the queue");
		budget--;
		struct desc d;
		read_desc(table, i, &d);

		if (d.flags & VIRTQ_DESC_F_INDIRECT) {
			if (!q->indirect)
				return fail(q, "chain %u: indirect descriptor, but the driver did not "
					    "negotiate VIRTIO_F_INDIRECT_DESC", head);
			if (indirect)
				return fail(q, "chain %u: nested indirect descriptor", head);
			if (d.flags & VIRTQ_DESC_F_NEXT)
				return fail(q, "chain %u: indirect descriptor %u also has NEXT", head, i);
			if (d.len == 0 || d.len % VIRTQ_DESC_SIZE ||
			    d.len / VIRTQ_DESC_SIZE > VIRTQ_MAX_SIZE)
				return fail(q, "chain %u: indirect table length %u is not a nonzero "
					    "multiple of %u up to %u", head, d.len, VIRTQ_DESC_SIZE,
					    VIRTQ_DESC_SIZE * VIRTQ_MAX_SIZE);
			const uint8_t *t = gm_ptr(q->mem, d.addr, d.len);
			if (!t)
				return fail(q, "chain %u: indirect table [0x%" PRIx64 ", +0x%x) is not "
					    "inside guest RAM", head, d.addr, d.len);
			/* The WRITE flag of the indirect descriptor itself is ignored (spec). */
			table = t;
			count = budget = d.len / VIRTQ_DESC_SIZE;
			i = 0;
			indirect = true;
			continue;
		}

		int ret = add_buf(q, c, &d, &seen_write);
		if (ret)
			return ret;
		if (!(d.flags & VIRTQ_DESC_F_NEXT))
			return 0;
		if (d.next >= count)
			return fail(q, "chain %u: next index %u >= %u%s", head, d.next, count,
				    indirect ? " (indirect table entries)" : " (queue size)");
		i = d.next;
	}
}

/* avail_event: the u16 after the used ring's last element. */
static uint8_t *avail_event_ptr(struct virtq *q)
{
	return q->used_host + USED_RING + VIRTQ_USED_ELEM_SIZE * q->size;
}

int virtq_pop(struct virtq *q, struct virtq_chain *c)
{
	if (q->broken || q->size == 0)
		return -EIO;
	/* Acquire: the ring entry and descriptors are read after the index. */
	uint16_t avail = load16_acquire(q->avail_host + AVAIL_IDX);
	if (avail == q->last_avail && q->event_idx && !q->notify_off) {
		/* Ask for a kick at the next chain, then look once more: a chain
		 * the driver added before it saw this avail_event sends no kick. */
		store16_relaxed(avail_event_ptr(q), q->last_avail);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		avail = load16_acquire(q->avail_host + AVAIL_IDX);
	}
	uint16_t pending = (uint16_t)(avail - q->last_avail);
	if (pending == 0)
		return 0;
	if (pending > q->size)
		return fail(q, "avail index jumped from %u to %u (queue size %u)",
			    q->last_avail, avail, q->size);
	uint32_t slot = q->last_avail & (q->size - 1u);
	uint16_t head = load16_relaxed(q->avail_host + AVAIL_RING + 2u * slot);
	if (head >= q->size)
		return fail(q, "head descriptor %u >= queue size %u (avail slot %u)", head,
			    q->size, slot);
	int ret = walk_chain(q, head, c);
	if (ret)
		return ret;
	q->last_avail++;
	q->popped++;
	/* With event_idx the driver kicks when it passes avail_event: keep it
	 * at the next chain we will look at (as the spec's device side does). */
	if (q->event_idx && !q->notify_off)
		store16_relaxed(avail_event_ptr(q), q->last_avail);
	return 1;
}

void virtq_fill(struct virtq *q, uint16_t head, uint32_t written)
{
	if (q->size == 0)
		return;
	uint32_t slot = q->used_idx & (q->size - 1u);
	uint8_t *elem = q->used_host + USED_RING + VIRTQ_USED_ELEM_SIZE * slot;
	store32_relaxed(elem, head);
	store32_relaxed(elem + 4, written);
	q->used_idx++;
	q->pushed++;
}

void virtq_flush(struct virtq *q)
{
	if (q->size == 0 || q->published_idx == q->used_idx)
		return;
	/* Release: the driver that sees the new index also sees the elements. */
	store16_release(q->used_host + USED_IDX, q->used_idx);
	q->published_idx = q->used_idx;
	q->publishes++;
	/* After 2^15 pushes without a check, signalled_used no longer says
	 * whether it lies behind or ahead of used_idx: notify next time. */
	if ((int16_t)(uint16_t)(q->used_idx - q->signalled_used) <= 0)
		q->signalled_used_valid = false;
}

void virtq_push(struct virtq *q, uint16_t head, uint32_t written)
{
	virtq_fill(q, head, written);
	virtq_flush(q);
}

/* The notification rule over used elements (old, now]. */
static bool notify_rule(struct virtq *q, uint16_t old, uint16_t now, bool valid)
{
	if (!q->event_idx)
		return !(load16_relaxed(q->avail_host + AVAIL_FLAGS) & VIRTQ_AVAIL_F_NO_INTERRUPT);
	if (!valid)
		return true;
	uint16_t used_event = load16_relaxed(q->avail_host + AVAIL_RING + 2u * q->size);
	/* Did used->idx step past used_event while going from old to now? All in
	 * modulo-2^16 arithmetic, so the comparison survives wrap-around. */
	return (uint16_t)(now - used_event - 1u) < (uint16_t)(now - old);
}

bool virtq_should_notify(struct virtq *q)
{
	if (q->size == 0)
		return false;
	virtq_flush(q);
	/* Our used->idx store must be visible before we read the driver's
	 * suppression fields, or both sides may decide not to signal. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint16_t old = q->signalled_used;
	bool valid = q->signalled_used_valid;
	q->signalled_used = q->used_idx;
	q->signalled_used_valid = true;
	return notify_rule(q, old, q->used_idx, valid);
}

bool virtq_would_notify(struct virtq *q)
{
	if (q->size == 0)
		return false;
	virtq_flush(q);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return notify_rule(q, q->signalled_used, q->used_idx, q->signalled_used_valid);
}

void virtq_set_notify(struct virtq *q, bool enable)
{
	if (q->size == 0)
		return;
	q->notify_off = !enable;
	if (q->event_idx) {
		/* On: kick at the next chain the driver adds, even when chains it already added are
		 * still unused (a device waiting for more). Off: a point the driver has passed, so
		 * that its next chain sends no kick either. */
		uint16_t avail = load16_acquire(q->avail_host + AVAIL_IDX);
		store16_relaxed(avail_event_ptr(q), enable ? avail : (uint16_t)(avail - 1));
	} else {
		store16_relaxed(q->used_host + USED_FLAGS, enable ? 0 : VIRTQ_USED_F_NO_NOTIFY);
	}
	/* Publish the enable before the caller re-reads avail->idx. */
	if (enable)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

bool virtq_has_work(struct virtq *q)
{
	if (q->broken || q->size == 0)
		return false;
	return load16_acquire(q->avail_host + AVAIL_IDX) != q->last_avail;
}

void virtq_chain_gather(const struct virtq_chain *c, uint32_t skip, void *dst, uint32_t len)
{
	uint8_t *d = dst;
	for (uint32_t i = 0; i < c->n_out && len; i++) {
		uint32_t blen = c->buf[i].len;
		if (skip >= blen) {
			skip -= blen;
			continue;
		}
		uint32_t n = blen - skip < len ? blen - skip : len;
		memcpy(d, (uint8_t *)c->buf[i].host + skip, n);
		d += n;
		len -= n;
		skip = 0;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* no re-reads of guest memory */
}

void virtq_chain_scatter(const struct virtq_chain *c, const void *src, uint32_t len)
{
	const uint8_t *s = src;
	for (uint32_t i = c->n_out; i < c->n_out + c->n_in && len; i++) {
		uint32_t n = c->buf[i].len < len ? c->buf[i].len : len;
		memcpy(c->buf[i].host, s, n);
		s += n;
		len -= n;
	}
}

void virtq_unpop(struct virtq *q, uint16_t cnt)
{
	q->last_avail = (uint16_t)(q->last_avail - cnt);
	q->popped -= cnt;
}

uint16_t virtq_avail_pending(struct virtq *q)
{
	if (q->broken || q->size == 0)
		return 0;
	return (uint16_t)(load16_acquire(q->avail_host + AVAIL_IDX) - q->last_avail);
}
