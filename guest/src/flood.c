/* guest/src/flood.c - flood=: rng/blk/net/console queues filled with huge requests (one kick, or re-posted from the interrupt hook) while the probe goes on. */
#include "flood.h"
#include "cmdline.h"
#include "console.h"
#include "cpu.h"
#include "lib.h"
#include "mem.h"
#include "wait.h"

#define TYPE_NET        1
#define TYPE_BLK        2
#define TYPE_CONSOLE    3
#define TYPE_RNG        4

#define MiB             (1ull << 20)
#define REGION_MAX      (64 * MiB)  /* the memory every flood buffer aliases */
#define REGION_MIN      MiB

/* rng: one indirect table of RNG_ENTRIES writable descriptors, each the
 * region (at most RNG_SEG_CAP bytes, so a chain stays below 4 GiB: msivm
 * refuses longer ones). Every chain points at the same table. */
#define RNG_ENTRIES     64
#define RNG_SEG_CAP     ((0xffffffffull / RNG_ENTRIES) & ~0xfffull)
#define NONEG_TICKS     20          /* 200 ms of watchdog ticks for the config interrupt */

/* blk: IN requests of up to BLK_SEGS data buffers of up to 1 MiB. */
#define BLK_F_SIZE_MAX  (1ull << 1)
#define BLK_F_SEG_MAX   (1ull << 2)
#define BLK_CFG_CAP     0
#define BLK_CFG_SIZEMAX 8
#define BLK_CFG_SEGMAX  12
#define BLK_SEGS        FLOOD_MAX_SEGS
#define BLK_SEG         MiB
#define BLK_T_IN        0

/* net: frames of MTU + 14 bytes after a zero 12-byte virtio-net header. */
#define NET_F_MTU       (1ull << 3)
#define NET_F_MAC       (1ull << 5)
#define NET_CFG_MTU     10
#define NET_HDR         12
#define NET_ETH         14
#define NET_TXQ         1
#define CON_TXQ         1

struct flood {
    unsigned char kind;
    struct pci_dev *d;
    struct virtio_pci vp;
    struct virtq *vq;           /* the flooded queue */
    bool repost;                /* net, console: re-post every completed chain */
    uint64_t addr;              /* the one-descriptor chain re-posted */
    uint32_t len;
    volatile uint32_t posted, completed;
    volatile uint64_t used_bytes;   /* sum of the used lengths */
};

static const char *const names[] = {
    [FLOOD_RNG] = "rng",
    [FLOOD_RNG_NONEG] = "rng-noneg",
    [FLOOD_BLK] = "blk",
    [FLOOD_NET] = "net",
    [FLOOD_CONSOLE] = "console",
};

static const int types[] = {
    [FLOOD_RNG] = TYPE_RNG,
    [FLOOD_RNG_NONEG] = TYPE_RNG,
    [FLOOD_BLK] = TYPE_BLK,
    [FLOOD_NET] = TYPE_NET,
    [FLOOD_CONSOLE] = TYPE_CONSOLE,
};

static const char *const type_names[] = {
    [TYPE_NET] = "net", [TYPE_BLK] = "blk", [TYPE_CONSOLE] = "console", [TYPE_RNG] = "rng",
};

static struct flood fl[FLOOD_MAX] __noinit;
static unsigned int nfl, nstarted;
static unsigned long blk_segs;
static uint8_t *region;
static uint64_t region_len;

/* Read-only request header shared by every blk flood request. */
static struct {
    uint32_t type;
    uint32_t reserved;
    uint64_t sector;
} blk_hdr __attribute__((aligned(16)));

bool flood_parse_args(const char *cmdline, struct flood_args *a)
{
    const char *val;
    size_t len;
    int n;

    memset(a, 0, sizeof(*a));
    a->exit_after = cmdline_has(cmdline, "exit");
    if (cmdline_get_uint(cmdline, "floodsegs", FLOOD_MAX_SEGS, &a->blk_segs) < 0 ||
        (cmdline_get(cmdline, "floodsegs", &len) && a->blk_segs == 0)) {
        console_puts("probe: bad floodsegs value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if (!(val = cmdline_get(cmdline, "flood", &len)))
        return false;
    n = cmdline_pick_list(val, len, names, ARRAY_SIZE(names), a->kind, FLOOD_MAX);
    if (n <= 0) {
        console_puts("probe: bad flood value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    a->n = (unsigned int)n;
    return true;
}

int flood_claim(const struct flood_args *a, int ndevs)
{
    unsigned int i;
    int j;

    nfl = 0;
    blk_segs = a->blk_segs;
    for (i = 0; i < a->n; i++) {
        struct pci_dev *d = NULL;

        for (j = 0; j < ndevs && !d; j++) {
            struct pci_dev *c = pci_get(j);

            if (c->usable && !c->claimed && virtio_pci_type(c) == types[a->kind[i]])
                d = c;
        }
        if (!d) {
            cprintf("probe: no virtio-%s device for flood=%s\n", type_names[types[a->kind[i]]],
                    names[a->kind[i]]);
            nfl = 0;
            return PROBE_EXIT_NO_FLOOD;
        }
        d->claimed = true;
        memset(&fl[nfl], 0, sizeof(fl[nfl]));
        fl[nfl].kind = a->kind[i];
        fl[nfl].d = d;
        nfl++;
    }
    return 0;
}

/* The region all flood buffers point into: 64 MiB, or half the free RAM
 * (whole MiB) if that is less. Not cleared. */
static int region_get(void)
{
    uint64_t want = REGION_MAX, half = (mem_avail() / 2) & ~(MiB - 1);

    if (region)
        return 0;
    if (want > half)
        want = half;
    if (want < REGION_MIN || !(region = mem_alloc(want))) {
        console_puts("probe: flood out of memory for its region\n");
        return PROBE_EXIT_VIRTIO;
    }
    region_len = want;
    return 0;
}

/* With EVENT_IDX, the next interrupt comes once 3/4 of the queue was used
 * (the device still has the rest to work on meanwhile): each interrupt
 * costs the probe ~300 emulated instructions, the repost a few. */
static void next_irq(struct flood *f)
{
    if (f->vp.features & VIRTIO_F_EVENT_IDX)
        virtq_set_used_event(f->vq, (uint16_t)(f->vq->last_used + f->vq->size * 3 / 4 - 1));
}

/* Interrupt context: take back every used chain; net/console put it straight
 * back into the avail ring (a few instructions per chain: the CPU time is the
 * other work's) and kick once. */
static void flood_hook(struct virtq *vq, void *ctx)
{
    struct flood *f = ctx;
    uint32_t id, len;
    uint64_t bytes = 0;
    unsigned int n;

    if (f->repost) {
        uint16_t before = vq->last_used;

        n = virtq_repost_used(vq, &bytes);
        f->completed += (uint16_t)(vq->last_used - before);
        f->used_bytes += bytes;
        if (n) {
            f->posted += n;
            next_irq(f);
            virtio_pci_kick(&f->vp, vq);
        }
        return;
    }
    while (virtq_pop_used(vq, &id, &len)) {
        f->completed++;
        f->used_bytes += len;
    }
}

static void hook(struct flood *f, unsigned int q)
{
    f->vq = &f->vp.vq[q];
    f->vq->irq_ctx = f;
    f->vq->irq_hook = flood_hook;
}

static bool config_irq_seen(const void *ctx)
{
    return ((const struct virtio_pci *)ctx)->config_irqs != 0;
}

static int start_rng(struct flood *f, enum virtio_irq_mode want)
{
    bool neg = f->kind == FLOOD_RNG;
    struct virtq_desc *t;
    uint64_t seg = region_len < RNG_SEG_CAP ? region_len : RNG_SEG_CAP;
    unsigned int i;
    int rc;

    if ((rc = virtio_pci_start(&f->vp, f->d, neg ? VIRTIO_F_INDIRECT_DESC : 0, 1, want)))
        return rc;
    if (neg && !(f->vp.features & VIRTIO_F_INDIRECT_DESC)) {
        cprintf("probe: flood rng %s: VIRTIO_F_INDIRECT_DESC not offered\n", f->d->name);
        return PROBE_EXIT_VIRTIO;
    }
    if (!(t = mem_alloc(RNG_ENTRIES * sizeof(*t)))) {
        console_puts("probe: flood out of memory\n");
        return PROBE_EXIT_VIRTIO;
    }
    for (i = 0; i < RNG_ENTRIES; i++) {
        t[i].addr = (uintptr_t)region;
        t[i].len = (uint32_t)seg;
        t[i].flags = VIRTQ_DESC_F_WRITE | (i + 1 < RNG_ENTRIES ? VIRTQ_DESC_F_NEXT : 0);
        t[i].next = (uint16_t)(i + 1 < RNG_ENTRIES ? i + 1 : 0);
    }
    hook(f, 0);
    while (virtq_add_indirect(f->vq, (uintptr_t)t, RNG_ENTRIES * sizeof(*t), 0) >= 0)
        f->posted++;
    virtio_pci_kick(&f->vp, f->vq);
    cprintf("probe: flood %s %s chains=%u chain_bytes=%lu indirect_negotiated=%d\n",
            names[f->kind], f->d->name, f->posted, (unsigned long)(seg * RNG_ENTRIES), neg);
    if (neg)
        return 0;
    /* Without the feature the device should refuse the chains: NEEDS_RESET
     * and a configuration interrupt. The status register is read only after
     * that interrupt (a device still busy with the chains may hold it). */
    if (wait_until(config_irq_seen, &f->vp, NONEG_TICKS) == 0) {
        uint8_t st = virtio_pci_status(&f->vp);

        cprintf("probe: flood rng-noneg %s status=0x%02x needs_reset=%d\n", f->d->name, st,
                (st & VIRTIO_STATUS_NEEDS_RESET) != 0);
    } else {
        cprintf("probe: flood rng-noneg %s no config interrupt within 200 ms (status not read)\n",
                f->d->name);
    }
    return 0;
}

static int start_blk(struct flood *f, enum virtio_irq_mode want)
{
    struct virtio_pci *vp = &f->vp;
    uint64_t cap, seg = BLK_SEG;
    unsigned int nseg = 1, n, r, i;
    struct virtq_desc *tables = NULL;
    struct virtq_buf b[BLK_SEGS + 2];
    volatile uint8_t *status;
    bool indirect;
    int rc;

    if ((rc = virtio_pci_start(vp, f->d, VIRTIO_F_INDIRECT_DESC | BLK_F_SIZE_MAX | BLK_F_SEG_MAX,
                               1, want)))
        return rc;
    indirect = vp->features & VIRTIO_F_INDIRECT_DESC;
    cap = virtio_pci_cfg64(vp, BLK_CFG_CAP) * 512;
    if ((vp->features & BLK_F_SIZE_MAX) && virtio_pci_cfg32(vp, BLK_CFG_SIZEMAX) < seg)
        seg = virtio_pci_cfg32(vp, BLK_CFG_SIZEMAX);
    if (seg > region_len)
        seg = region_len;
    seg &= ~4095ull;
    if (vp->features & BLK_F_SEG_MAX)
        nseg = virtio_pci_cfg32(vp, BLK_CFG_SEGMAX);
    if (nseg > BLK_SEGS)
        nseg = BLK_SEGS;
    if (blk_segs && nseg > blk_segs)
        nseg = (unsigned int)blk_segs;
    if (seg && nseg > cap / seg)
        nseg = (unsigned int)(cap / seg);
    if (!indirect && nseg + 2 > vp->vq[0].size)
        nseg = vp->vq[0].size > 2 ? vp->vq[0].size - 2u : 0;
    if (!seg || !nseg) {
        cprintf("probe: flood blk %s: no room for a request (capacity %lu bytes)\n", f->d->name,
                (unsigned long)cap);
        return PROBE_EXIT_VIRTIO;
    }
    n = indirect ? vp->vq[0].size : vp->vq[0].size / (nseg + 2);
    status = mem_alloc(n);
    if (indirect)
        tables = mem_alloc((size_t)n * (nseg + 2) * sizeof(*tables));
    if (!status || (indirect && !tables)) {
        console_puts("probe: flood out of memory\n");
        return PROBE_EXIT_VIRTIO;
    }
    blk_hdr.type = BLK_T_IN;
    blk_hdr.reserved = 0;
    blk_hdr.sector = 0;
    b[0] = (struct virtq_buf){ (uintptr_t)&blk_hdr, sizeof(blk_hdr), false };
    for (i = 0; i < nseg; i++)
        b[1 + i] = (struct virtq_buf){ (uintptr_t)region + (i * seg) % region_len,
                                       (uint32_t)seg, true };
    hook(f, 0);
    for (r = 0; r < n; r++) {
        b[nseg + 1] = (struct virtq_buf){ (uintptr_t)&status[r], 1, true };
        status[r] = 0xff;
        if (indirect) {
            struct virtq_desc *t = tables + (size_t)r * (nseg + 2);

            for (i = 0; i < nseg + 2; i++) {
                t[i].addr = b[i].addr;
                t[i].len = b[i].len;
                t[i].flags = (uint16_t)((b[i].writable ? VIRTQ_DESC_F_WRITE : 0) |
                                        (i + 1 < nseg + 2 ? VIRTQ_DESC_F_NEXT : 0));
                t[i].next = (uint16_t)(i + 1);
            }
            if (virtq_add_indirect(f->vq, (uintptr_t)t, (nseg + 2) * sizeof(*t), (uint16_t)r) < 0)
                break;
        } else if (virtq_add_chain(f->vq, b, nseg + 2, (uint16_t)r) < 0) {
            break;
        }
        f->posted++;
    }
    virtio_pci_kick(vp, f->vq);
    cprintf("probe: flood blk %s chains=%u chain_bytes=%lu indirect_negotiated=%d\n", f->d->name,
            f->posted, (unsigned long)(nseg * seg), indirect);
    return 0;
}

static int start_net(struct flood *f, enum virtio_irq_mode want)
{
    struct virtio_pci *vp = &f->vp;
    uint32_t mtu = 1500;
    uint8_t *buf;
    unsigned int i;
    int rc;

    if ((rc = virtio_pci_start(vp, f->d, NET_F_MTU | NET_F_MAC | VIRTIO_F_EVENT_IDX, 2, want)))
        return rc;
    if ((vp->features & NET_F_MTU) && virtio_pci_cfg16(vp, NET_CFG_MTU) >= 68)
        mtu = virtio_pci_cfg16(vp, NET_CFG_MTU);
    f->len = NET_HDR + NET_ETH + mtu;
    if (!(buf = mem_alloc(f->len))) {
        console_puts("probe: flood out of memory\n");
        return PROBE_EXIT_VIRTIO;
    }
    /* Zero virtio-net header; broadcast, from our MAC, EtherType 0x88b5
     * (local experimental); the payload is whatever the RAM holds. */
    memset(buf, 0, NET_HDR);
    for (i = 0; i < 6; i++) {
        buf[NET_HDR + i] = 0xff;
        buf[NET_HDR + 6 + i] = (vp->features & NET_F_MAC) ? virtio_pci_cfg8(vp, i)
                                                          : (uint8_t)"\x52\x54\x00\x12\x34\x56"[i];
    }
    buf[NET_HDR + 12] = 0x88;
    buf[NET_HDR + 13] = 0xb5;
    f->addr = (uintptr_t)buf;
    f->repost = true;
    hook(f, NET_TXQ);
    next_irq(f);
    while (virtq_add_buf(f->vq, f->addr, f->len, false) >= 0)
        f->posted++;
    virtio_pci_kick(vp, f->vq);
    cprintf("probe: flood net %s chains=%u chain_bytes=%u mtu=%u repost=1\n", f->d->name,
            f->posted, f->len, mtu);
    return 0;
}

static int start_console(struct flood *f, enum virtio_irq_mode want)
{
    int rc;

    if ((rc = virtio_pci_start(&f->vp, f->d, VIRTIO_F_EVENT_IDX, 2, want)))
        return rc;
    f->addr = (uintptr_t)region;
    f->len = (uint32_t)region_len;
    f->repost = true;
    hook(f, CON_TXQ);
    next_irq(f);
    while (virtq_add_buf(f->vq, f->addr, f->len, false) >= 0)
        f->posted++;
    virtio_pci_kick(&f->vp, f->vq);
    cprintf("probe: flood console %s chains=%u chain_bytes=%u repost=1\n", f->d->name,
            f->posted, f->len);
    return 0;
}

int flood_start(enum virtio_irq_mode want)
{
    unsigned int i;
    int rc;

    if (nfl && (rc = region_get()))
        return rc;
    for (i = 0; i < nfl; i++) {
        struct flood *f = &fl[i];

        switch (f->kind) {
        case FLOOD_RNG:
        case FLOOD_RNG_NONEG:
            rc = start_rng(f, want);
            break;
        case FLOOD_BLK:
            rc = start_blk(f, want);
            break;
        case FLOOD_NET:
            rc = start_net(f, want);
            break;
        default:
            rc = start_console(f, want);
            break;
        }
        if (rc)
            return rc;
        nstarted = i + 1;
    }
    return 0;
}

bool flood_active(void)
{
    return nstarted != 0;
}

void flood_report(void)
{
    unsigned int i;

    for (i = 0; i < nstarted; i++)
        cprintf("probe: flood %s %s posted=%u completed=%u used_bytes=%lu queue_irqs=%u\n",
                names[fl[i].kind], fl[i].d->name, fl[i].posted, fl[i].completed,
                (unsigned long)fl[i].used_bytes, fl[i].vq->irqs);
}

void flood_hold(void)
{
    console_puts("probe: flood holding\n");
    console_flush();
    for (;;)
        irq_enable_and_halt();
}
