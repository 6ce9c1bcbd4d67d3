/* virtio-blk inside: the config space (5.2.4) and the limits it announces, and helpers both halves of the device share. */
#ifndef MSIVM_DEVICES_VIRTIO_BLK_CONFIG_H
#define MSIVM_DEVICES_VIRTIO_BLK_CONFIG_H

/* A two-file circle on purpose: the config space reads the device's struct virtio_blk
 * (virtio_blk.h), and virtio_blk.c uses the limits and helpers declared here. */
#include "devices/virtio_blk.h"

static inline uint64_t vblk_bit(unsigned n) { return 1ULL << n; }

/* Feature f was negotiated (FEATURES_OK). */
static inline bool vblk_negotiated(const struct virtio_blk *b, unsigned f)
{
	return b->pci.negotiated & vblk_bit(f);
}

/* The image's size in 512-byte sectors. */
static inline uint64_t vblk_capacity(const struct virtio_blk *b)
{
	return b->be->size / BLK_SECTOR_SIZE;
}

/* The cache mode in force: true for writeback, false for writethrough (the driver's
 * `writeback` byte if it wrote one, else whether it negotiated FLUSH). */
static inline bool vblk_writeback(const struct virtio_blk *b)
{
	return b->writeback >= 0 ? b->writeback : vblk_negotiated(b, VIRTIO_BLK_F_FLUSH);
}

/* The device's config space as the driver reads it (transport lock held). */
void vblk_config_read(void *opaque, uint32_t off, void *data, uint32_t len);

/* A driver's config write: only `writeback` (byte 32) with CONFIG_WCE negotiated; anything
 * else is ignored and logged (rate-limited). Transport lock held. */
void vblk_config_write(void *opaque, uint32_t off, const void *data, uint32_t len);

/* Sets seg_max, size_max, the discard/write-zeroes sectors and alignment from the device's
 * constants lowered to what the backend takes in one attempt (see the comment there). */
void vblk_limits(struct virtio_blk *b);

#endif
