/* virtio-blk config space: capacity, limits, topology, cache mode (writeback byte) and discard/write-zeroes fields (5.2.4). */
#include "devices/virtio_blk_config.h"

#include <endian.h>
#include <string.h>

#include "util/log.h"

#define DISCARD_ALIGN_SECTORS 8u

/* The config space's view of the backend's topology (5.2.4): blk_size in
 * bytes, the rest in logical blocks. Values the fields cannot hold, or that
 * are not whole blocks, are left out (0) rather than misreported. */
struct vblk_topo {
	uint32_t blk_size;
	uint8_t physical_block_exp, alignment_offset;
	uint16_t min_io_size;
	uint32_t opt_io_size;
};

static struct vblk_topo topology(const struct blk_topology *t)
{
	struct vblk_topo v = { .blk_size = BLK_SECTOR_SIZE };
	uint32_t lbs = t->logical_block;
	/* Linux takes logical blocks of 512 bytes to a page. */
	if (lbs >= BLK_SECTOR_SIZE && lbs <= 4096 && !(lbs & (lbs - 1)))
		v.blk_size = lbs;
	lbs = v.blk_size;
	uint32_t phys = t->physical_block;
	if (phys > lbs && !(phys & (phys - 1)))
		while ((lbs << v.physical_block_exp) < phys)
			v.physical_block_exp++;
	if (t->alignment_offset % lbs == 0 && t->alignment_offset / lbs <= UINT8_MAX)
		v.alignment_offset = (uint8_t)(t->alignment_offset / lbs);
	uint32_t min_io = t->min_io / lbs;
	v.min_io_size = min_io <= UINT16_MAX ? (uint16_t)min_io : 0;
	v.opt_io_size = t->opt_io / lbs;
	return v;
}

/* ---- config space ---- */

static void put16(uint8_t *p, uint16_t v) { v = htole16(v); memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { v = htole32(v); memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { v = htole64(v); memcpy(p, &v, 8); }

void vblk_config_read(void *opaque, uint32_t off, void *data, uint32_t len)
{
	struct virtio_blk *b = opaque;
	uint8_t c[VIRTIO_BLK_CONFIG_SIZE] = { 0 };
	struct vblk_topo t = topology(&b->be->topo);
	put64(c + 0, vblk_capacity(b));
	put32(c + 8, b->size_max);
	put32(c + 12, b->seg_max);
	put32(c + 20, t.blk_size);                       /* BLK_SIZE; addressing stays 512 */
	c[24] = t.physical_block_exp;                    /* TOPOLOGY */
	c[25] = t.alignment_offset;
	put16(c + 26, t.min_io_size);
	put32(c + 28, t.opt_io_size);
	c[32] = vblk_writeback(b);                            /* 0 means writethrough */
	put16(c + 34, b->nqueues);
	put32(c + 36, b->max_discard_sectors);
	put32(c + 40, 1);                                /* max_discard_seg */
	put32(c + 44, b->discard_align);
	put32(c + 48, b->max_write_zeroes_sectors);
	put32(c + 52, 1);                                /* max_write_zeroes_seg */
	c[56] = b->be->can_discard;                      /* write_zeroes_may_unmap */
	memcpy(data, c + off, len);
}

#define CONFIG_WRITEBACK 32u

/* Only `writeback` is writable, a byte at a time, with CONFIG_WCE
 * negotiated; any other write is ignored (and logged). */
void vblk_config_write(void *opaque, uint32_t off, const void *data, uint32_t len)
{
	struct virtio_blk *b = opaque;
	if (off != CONFIG_WRITEBACK || len != 1) {
		log_ratelimited(&b->rl, LOG_WARN, "%s: write of %u bytes to read-only config at "
				"0x%x ignored", b->name, len, off);
		return;
	}
	uint8_t v;
	memcpy(&v, data, 1);
	const char *why = NULL;
	if (!vblk_negotiated(b, VIRTIO_BLK_F_CONFIG_WCE))
		why = "CONFIG_WCE not negotiated";
	else if (v > 1)
		why = "not 0 or 1";
	else if (v && !vblk_negotiated(b, VIRTIO_BLK_F_FLUSH))
		why = "writeback needs FLUSH negotiated";
	if (why) {
		log_ratelimited(&b->rl, LOG_WARN, "%s: writeback=%u ignored: %s", b->name, v, why);
		return;
	}
	if (v != vblk_writeback(b)) {
		log_info("%s: the driver switched the cache to %s", b->name,
			 v ? "writeback" : "writethrough");
		b->pci.config_generation++; /* a config value changed (4.1.4.3.1) */
	}
	b->writeback = (int8_t)v;
}

static uint32_t min32(uint64_t a, uint64_t b) { return (uint32_t)(a < b ? a : b); }

/* The limits a driver is told and requests are held to: the device's
 * constants as upper bounds (the request struct's iovec array, 1 MiB
 * segments, 2 GiB discards), lowered to what the backend takes in one
 * attempt (IOV_MAX iovecs, its per-iovec and discard/write-zeroes bounds)
 * so that no request is split by the engine for being too big; a backend
 * reporting no limit (0) keeps the constant. */
void vblk_limits(struct virtio_blk *b)
{
	const struct blk_backend *be = b->be;
	b->seg_max = be->max_segs ? min32(VIRTIO_BLK_SEG_MAX, be->max_segs) : VIRTIO_BLK_SEG_MAX;
	b->size_max = VIRTIO_BLK_SIZE_MAX;
	if (be->max_seg_bytes >= BLK_SECTOR_SIZE)
		b->size_max = min32(VIRTIO_BLK_SIZE_MAX, be->max_seg_bytes);
	b->max_discard_sectors = min32(VIRTIO_BLK_MAX_DISCARD_SECTORS,
					 be->max_discard / BLK_SECTOR_SIZE);
	b->max_write_zeroes_sectors = min32(VIRTIO_BLK_MAX_DISCARD_SECTORS,
					      be->max_write_zeroes / BLK_SECTOR_SIZE);
	uint32_t lbs_sectors = be->topo.logical_block / BLK_SECTOR_SIZE;
	b->discard_align = lbs_sectors > DISCARD_ALIGN_SECTORS ? lbs_sectors : DISCARD_ALIGN_SECTORS;
}

