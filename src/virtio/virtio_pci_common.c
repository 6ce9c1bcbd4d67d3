/* Virtio-pci common configuration: register file, status transitions, feature and queue checks. */
/* Link circle, on purpose (virtio_pci.c, _common.c, _coalesce.c, _poll.c): one transport, struct virtio_pci, split by size; its register file, interrupt moderation and polling each look queues up and kick through virtio_pci.c, which drives all three. */
#include "virtio/virtio_pci_common.h"

#include <inttypes.h>
#include <string.h>

static uint64_t bit(unsigned n) { return 1ULL << n; }

uint64_t vpci_offered_features(const struct virtio_pci *t)
{
	return t->info.features | bit(VIRTIO_F_VERSION_1) | bit(VIRTIO_F_EVENT_IDX) |
	       bit(VIRTIO_F_INDIRECT_DESC);
}

static struct vpci_queue *selected(struct virtio_pci *t)
{
	return t->queue_select < t->info.nqueues ? &t->queues[t->queue_select] : NULL;
}

/* A vector the guest asks for: kept if the MSI-X table has it, otherwise
 * VIRTIO_NO_VECTOR, which the driver reads back as a refusal. */
static uint16_t accept_vector(struct virtio_pci *t, uint16_t v, uint32_t use_bit)
{
	if (!t->has_msix || v >= t->msix.nvec)
		return VIRTIO_NO_VECTOR;
	t->vec_use[v] |= use_bit; /* remembered for --stats, never cleared */
	return v;
}

void vpci_common_reset(struct virtio_pci *t)
{
	t->dfselect = t->gfselect = 0;
	t->driver_features = t->negotiated = 0;
	t->status = 0;
	t->queue_select = 0;
	t->config_vector = VIRTIO_NO_VECTOR;
	t->isr = 0;
	for (uint16_t q = 0; q < t->info.nqueues; q++) {
		struct vpci_queue *vq = &t->queues[q];
		vq->size = t->info.queue_max;
		vq->msix_vector = VIRTIO_NO_VECTOR;
		vq->enabled = false;
		vq->desc = vq->driver = vq->device = 0;
		vpci_hold_reset(vq); /* a held notification has no driver left to tell */
	}
	if (t->ops->reset)
		t->ops->reset(t->opaque);
}

/* The common configuration as bytes, for reads of any width. */
static void snapshot(struct virtio_pci *t, uint8_t *b)
{
	struct vpci_queue *q = selected(t);
	uint64_t feats = vpci_offered_features(t);
	uint32_t df = t->dfselect == 0 ? (uint32_t)feats : t->dfselect == 1 ? (uint32_t)(feats >> 32) : 0;
	uint32_t gf = t->gfselect == 0 ? (uint32_t)t->driver_features
		    : t->gfselect == 1 ? (uint32_t)(t->driver_features >> 32) : 0;
	uint16_t qsize = q ? q->size : 0, qmsix = q ? q->msix_vector : VIRTIO_NO_VECTOR;
	uint16_t qen = q ? q->enabled : 0, qnoff = q ? t->queue_select : 0;
	uint64_t desc = q ? q->desc : 0, drv = q ? q->driver : 0, dev = q ? q->device : 0;
	uint16_t nq = t->info.nqueues;

	memset(b, 0, VPCI_COMMON_LEN);
	memcpy(b + VPCI_DFSELECT, &t->dfselect, 4);
	memcpy(b + VPCI_DF, &df, 4);
	memcpy(b + VPCI_GFSELECT, &t->gfselect, 4);
	memcpy(b + VPCI_GF, &gf, 4);
	memcpy(b + VPCI_MSIX_CONFIG, &t->config_vector, 2);
	memcpy(b + VPCI_NUM_QUEUES, &nq, 2);
	b[VPCI_STATUS] = t->status;
	b[VPCI_CFG_GEN] = t->config_generation;
	memcpy(b + VPCI_Q_SELECT, &t->queue_select, 2);
	memcpy(b + VPCI_Q_SIZE, &qsize, 2);
	memcpy(b + VPCI_Q_MSIX, &qmsix, 2);
	memcpy(b + VPCI_Q_ENABLE, &qen, 2);
	memcpy(b + VPCI_Q_NOFF, &qnoff, 2);
	memcpy(b + VPCI_Q_DESC_LO, &desc, 8);
	memcpy(b + VPCI_Q_DRIVER_LO, &drv, 8);
	memcpy(b + VPCI_Q_DEVICE_LO, &dev, 8);
}

void vpci_common_read(struct virtio_pci *t, uint64_t off, void *data, uint32_t len)
{
	uint8_t b[VPCI_COMMON_LEN];
	if (off + len > VPCI_COMMON_LEN) {
		memset(data, 0xff, len);
		return;
	}
	snapshot(t, b);
	memcpy(data, b + off, len);
}

static void features_ok(struct virtio_pci *t, uint8_t *v)
{
	uint64_t offered = vpci_offered_features(t);
	uint64_t extra = t->driver_features & ~offered;
	if (extra || !(t->driver_features & bit(VIRTIO_F_VERSION_1))) {
		log_ratelimited(&t->rl, LOG_WARN, "%s: refusing FEATURES_OK: driver features 0x%" PRIx64
				" %s", t->info.name, t->driver_features,
				extra ? "include bits the device did not offer" : "lack VERSION_1");
		*v &= (uint8_t)~VIRTIO_STATUS_FEATURES_OK; /* the driver reads it back as a refusal */
		return;
	}
	t->negotiated = t->driver_features;
}

static void status_write(struct virtio_pci *t, uint8_t v)
{
	if (v == 0) {
		vpci_common_reset(t);
		return;
	}
	uint8_t old = t->status & (uint8_t)~VIRTIO_STATUS_NEEDS_RESET;
	if (old & ~v) {
		log_ratelimited(&t->rl, LOG_WARN, "%s: status 0x%x -> 0x%x clears bits; ignored",
				t->info.name, old, v);
		return;
	}
	if ((v & VIRTIO_STATUS_FEATURES_OK) && !(old & VIRTIO_STATUS_FEATURES_OK))
		features_ok(t, &v);
	if ((v & VIRTIO_STATUS_DRIVER_OK) && !(v & VIRTIO_STATUS_FEATURES_OK)) {
		log_ratelimited(&t->rl, LOG_WARN, "%s: DRIVER_OK without FEATURES_OK; ignored",
				t->info.name);
		v &= (uint8_t)~VIRTIO_STATUS_DRIVER_OK;
	}
	t->status = (uint8_t)((v & ~VIRTIO_STATUS_NEEDS_RESET) |
			      (t->status & VIRTIO_STATUS_NEEDS_RESET));
	bool now_ok = (v & VIRTIO_STATUS_DRIVER_OK) && !(old & VIRTIO_STATUS_DRIVER_OK);
	if (now_ok && t->ops->driver_ok)
		t->ops->driver_ok(t->opaque);
	/* Buffers made available before DRIVER_OK are looked at now. */
	if (now_ok && t->ops->queue_notify)
		for (uint16_t q = 0; q < t->info.nqueues; q++)
			if (virtio_pci_queue(t, q))
				t->ops->queue_notify(t->opaque, q);
}

static void queue_enable(struct virtio_pci *t, struct vpci_queue *q, uint16_t v)
{
	if (v != 1 || q->enabled) /* 0 may not be written; enabling twice is a no-op */
		return;
	if (!(t->status & VIRTIO_STATUS_FEATURES_OK)) {
		virtio_pci_set_needs_reset(t, "queue enabled before FEATURES_OK");
		return;
	}
	if (q->size == 0 || q->size > t->info.queue_max || (q->size & (q->size - 1))) {
		virtio_pci_set_needs_reset(t, "queue size is not a power of two within the maximum");
		return;
	}
	if (virtq_init(&q->vq, t->mem, q->name, q->size, q->desc, q->driver, q->device,
		       t->negotiated & bit(VIRTIO_F_EVENT_IDX))) {
		virtio_pci_set_needs_reset(t, "queue rings misaligned or outside guest RAM");
		return;
	}
	q->vq.indirect = (t->negotiated & bit(VIRTIO_F_INDIRECT_DESC)) != 0;
	q->pushed_seen = q->vq.pushed;
	vpci_hold_reset(q);
	q->enabled = true;
}

/* Width each register must be written with (0: read-only). */
static uint32_t reg_width(uint64_t off)
{
	switch (off) {
	case VPCI_DFSELECT: case VPCI_GFSELECT: case VPCI_GF:
		return 4;
	case VPCI_MSIX_CONFIG: case VPCI_Q_SELECT: case VPCI_Q_SIZE: case VPCI_Q_MSIX:
	case VPCI_Q_ENABLE:
		return 2;
	case VPCI_STATUS:
		return 1;
	case VPCI_Q_DESC_LO: case VPCI_Q_DESC_HI: case VPCI_Q_DRIVER_LO: case VPCI_Q_DRIVER_HI:
	case VPCI_Q_DEVICE_LO: case VPCI_Q_DEVICE_HI:
		return 4; /* or 8 at the _LO offsets */
	default:
		return 0;
	}
}

static void set_addr_half(uint64_t *a, bool high, uint32_t v)
{
	*a = high ? (*a & 0xffffffffULL) | (uint64_t)v << 32 : (*a & ~0xffffffffULL) | v;
}

static void queue_reg_write(struct virtio_pci *t, uint64_t off, uint64_t v, uint32_t len)
{
	struct vpci_queue *q = selected(t);
	if (!q)
		return;
	if (off == VPCI_Q_ENABLE) {
		queue_enable(t, q, (uint16_t)v);
		return;
	}
	if (off == VPCI_Q_MSIX) {
		q->msix_vector = accept_vector(t, (uint16_t)v, 1u << t->queue_select);
		return;
	}
	if (q->enabled) {
		log_ratelimited(&t->rl, LOG_WARN, "%s: write to queue %u register 0x%" PRIx64
				" after enable; ignored", t->info.name, t->queue_select, off);
		return;
	}
	uint64_t base = off & ~7ULL;
	bool high = off & 4;
	uint64_t *a = base == VPCI_Q_DESC_LO ? &q->desc : base == VPCI_Q_DRIVER_LO ? &q->driver
		    : base == VPCI_Q_DEVICE_LO ? &q->device : NULL;
	if (off == VPCI_Q_SIZE)
		q->size = (uint16_t)v;
	else if (a && len == 8)
		*a = v;
	else if (a)
		set_addr_half(a, high, (uint32_t)v);
}

void vpci_common_write(struct virtio_pci *t, uint64_t off, const void *data, uint32_t len)
{
	uint64_t v = 0;
	uint32_t w = reg_width(off);
	bool wide_addr = len == 8 && off >= VPCI_Q_DESC_LO && off % 8 == 0 && off < VPCI_COMMON_LEN;
	if (!w || (len != w && !wide_addr)) {
		log_ratelimited(&t->rl, LOG_WARN, "%s: bad common config write of %u bytes at 0x%"
				PRIx64, t->info.name, len, off);
		return;
	}
	memcpy(&v, data, len);
	switch (off) {
	case VPCI_DFSELECT: t->dfselect = (uint32_t)v; break;
	case VPCI_GFSELECT: t->gfselect = (uint32_t)v; break;
	case VPCI_GF:
		if (t->status & VIRTIO_STATUS_FEATURES_OK) {
			log_ratelimited(&t->rl, LOG_WARN, "%s: feature write after FEATURES_OK; ignored",
					t->info.name);
		} else if (t->gfselect < 2) {
			unsigned shift = 32 * t->gfselect;
			t->driver_features = (t->driver_features & ~(0xffffffffULL << shift)) |
					     (v << shift);
		}
		break;
	case VPCI_MSIX_CONFIG: t->config_vector = accept_vector(t, (uint16_t)v, 1u << 31); break;
	case VPCI_STATUS: status_write(t, (uint8_t)v); break;
	case VPCI_Q_SELECT: t->queue_select = (uint16_t)v; break;
	default: queue_reg_write(t, off, v, len); break;
	}
}
