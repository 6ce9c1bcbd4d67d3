/* guest/src/virtio_blk.h - virtio-blk (virtio type 2) driver and its timed workloads (verify, rand/seq read/write, rotest). */
#ifndef PROBE_VIRTIO_BLK_H
#define PROBE_VIRTIO_BLK_H

#include <stdbool.h>
#include <stddef.h>

#include "exit.h"
#include "pci.h"
#include "virtio_pci.h"

#define VIRTIO_TYPE_BLK     2

#define BLK_MAX_WORKLOADS   16
#define BLK_DEFAULT_KIB     256
#define BLK_MAX_KIB         16777216ul  /* 16 GiB; clamped to capacity and RAM */
#define BLK_DEFAULT_OPS     256
#define BLK_MAX_OPS         4096
#define BLK_MAX_QD          64   /* 3 descriptors each: 192 of a 256-entry ring */
#define BLK_MAX_SEED        255         /* the pattern keeps 8 bits of it */
#define BLK_DEFAULT_SEQFLUSH 16
#define BLK_MAX_SEQFLUSH    4096
#define BLK_SEQLOG_MAGIC    0x474f4c4d5649534dull  /* "MSIVMLOG" little-endian */

enum blk_workload {
    BLK_WL_VERIFY,
    BLK_WL_RANDREAD,
    BLK_WL_SEQREAD,
    BLK_WL_RANDWRITE,
    BLK_WL_SEQWRITE,
    BLK_WL_ROTEST,
    BLK_WL_SEQLOG,
};

struct blk_args {
    uint8_t wl[BLK_MAX_WORKLOADS];  /* enum blk_workload, run in this order */
    unsigned int nwl;
    unsigned long kib;              /* blkkb= */
    unsigned long ops;              /* blkops= */
    unsigned long qd;               /* qd= */
    unsigned long seed;             /* seed= */
    bool get_id;                    /* blkid */
    unsigned long seqflush;         /* seqflush=: seqlog writes per FLUSH */
};

/* Parse the comma-separated blk= list s[0..len) into a->wl. 0 or -1. */
int blk_parse_workloads(const char *s, size_t len, struct blk_args *a);

/* True if d is a virtio-blk PCI function (modern 0x1042 or transitional
 * 0x1001, i.e. subsystem ID 2). */
bool virtio_blk_match(const struct pci_dev *d);

/*
 * Start d (negotiating VERSION_1 and, if offered, SIZE_MAX, SEG_MAX,
 * BLK_SIZE, FLUSH, MQ, RO; all queues up to VIRTIO_MAX_QUEUES) in irq mode
 * `want`, print "probe: blk <bdf> capacity=... ro=... queues=... seg_max=...
 * size_max=...", then run the workloads of `a` in order, each printing its
 * "probe: result blk-<name> ..." line (see guest/README.md). *mode is set to
 * the interrupt mode used ("none" if the device did not start).
 * Returns 0 or the first PROBE_EXIT_* status (5, 8, 9, 11, 12, 13, 15);
 * a verify mismatch or a timeout stops the remaining workloads.
 */
int virtio_blk_run(struct pci_dev *d, const struct blk_args *a, enum virtio_irq_mode want,
                   const char **mode);

#endif
