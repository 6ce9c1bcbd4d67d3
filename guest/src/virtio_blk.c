/* guest/src/virtio_blk.c - virtio-blk driver: 3-descriptor requests, up to qd in flight over all queues, timed workloads with per-request TSC latency. */
#include "cmdline.h"
#include "virtio_blk.h"
#include "console.h"
#include "lab.h"
#include "lib.h"
#include "mem.h"
#include "stats.h"
#include "wait.h"

/* Feature bits (virtio 1.x, 5.2.3). */
#define BLK_F_SIZE_MAX  (1ull << 1)
#define BLK_F_SEG_MAX   (1ull << 2)
#define BLK_F_RO        (1ull << 5)
#define BLK_F_BLK_SIZE  (1ull << 6)
#define BLK_F_FLUSH     (1ull << 9)
#define BLK_F_MQ        (1ull << 12)
#define BLK_FEATURES    (BLK_F_SIZE_MAX | BLK_F_SEG_MAX | BLK_F_RO | BLK_F_BLK_SIZE | \
                         BLK_F_FLUSH | BLK_F_MQ)

/* struct virtio_blk_config offsets. */
#define CFG_CAPACITY    0
#define CFG_SIZE_MAX    8
#define CFG_SEG_MAX     12
#define CFG_BLK_SIZE    20
#define CFG_NUM_QUEUES  34

/* Request types and status values. */
#define BLK_T_IN        0
#define BLK_T_OUT       1
#define BLK_T_FLUSH     4
#define BLK_T_GET_ID    8
#define BLK_S_OK        0
#define BLK_S_IOERR     1
#define BLK_S_NONE      0xff    /* preset before posting: "device wrote no status" */

#define BLK_SECTOR      512
#define BLK_IO          4096    /* request size (smaller only if the region is) */
#define BLK_ID_BYTES    20
#define BLK_MAX_LAT     BLK_MAX_OPS     /* latencies kept per workload */
#define BLK_MAX_WAKEUPS 100     /* per wait for any completion: >= 1 s of watchdog ticks */
#define BLOCK_SHIFT     12      /* pattern image filled per 4 KiB block */
#define XORSHIFT_INIT   0x9e3779b97f4a7c15ull
#define LATE_IRQ_TICKS  10      /* 100 ms for an interrupt behind its completion */

struct blk_hdr {
    uint32_t type;
    uint32_t reserved;
    uint64_t sector;
};

/* Per request slot (qd of them): header, status byte, read buffer, and the
 * driver's bookkeeping. All DMA memory is guest-physical == virtual. */
static struct blk_hdr req_hdr[BLK_MAX_QD] __noinit __attribute__((aligned(16)));
static volatile uint8_t req_status[BLK_MAX_QD] __noinit;
static uint8_t req_buf[BLK_MAX_QD][BLK_IO] __noinit __attribute__((aligned(4096)));
static struct {
    uint64_t t0;            /* TSC when posted */
    uint64_t off;           /* byte offset on the disk */
    uint32_t len;           /* data bytes */
    uint32_t reqno;         /* index within the workload */
} req[BLK_MAX_QD] __noinit;
static uint64_t lat[BLK_MAX_LAT] __noinit;   /* per-request latency, by reqno */

/* The device and the region the workloads use. */
static struct {
    struct virtio_pci vp;
    uint64_t capacity;      /* sectors */
    uint64_t region;        /* bytes, multiple of 1 KiB */
    uint64_t nblocks;       /* whole iosize blocks in the region (random I/O) */
    uint32_t iosize;
    unsigned int qd, nq, rr;
    bool flush, ro;
    uint64_t tag;           /* seed << 56 */
    uint64_t seed;
    uint8_t *image;         /* the pattern for [0, region), filled on demand */
    uint64_t *filled;       /* bitmap of filled 4 KiB blocks of image */
    uint64_t nfilled, nimage_blocks;
    uint64_t requests;      /* all requests issued */
} B;

/* What to issue: `count` requests of `type`, at sequential positions (from
 * pos, wrapping at the region end) or random iosize blocks. */
struct blk_gen {
    uint8_t type;
    bool rand;
    bool compare;           /* IN: compare with the pattern image */
    bool seqlog;            /* OUT: seqlog blocks built in the slot's buffer */
    uint32_t count;
    uint64_t pos;
    uint64_t x;             /* xorshift64 state */
};

struct blk_stats {
    uint32_t requests, ioerr;
    uint64_t bytes;
    uint64_t lat_sum, lat_min, lat_max;
    uint64_t excluded;      /* cycles of the "probe: ready" line */
    uint8_t last_status;
    unsigned int last_slot;
    bool mismatch;
    uint64_t mismatch_off;
    uint64_t err_off;       /* first request that failed: its offset, type, status */
    uint8_t err_type, err_status;
};

static const char *const wl_names[] = {
    [BLK_WL_VERIFY] = "verify",
    [BLK_WL_RANDREAD] = "randread",
    [BLK_WL_SEQREAD] = "seqread",
    [BLK_WL_RANDWRITE] = "randwrite",
    [BLK_WL_SEQWRITE] = "seqwrite",
    [BLK_WL_ROTEST] = "rotest",
    [BLK_WL_SEQLOG] = "seqlog",
};

int blk_parse_workloads(const char *s, size_t len, struct blk_args *a)
{
    int n = cmdline_pick_list(s, len, wl_names, ARRAY_SIZE(wl_names), a->wl, BLK_MAX_WORKLOADS);

    if (n < 0)
        return -1;
    a->nwl = (unsigned int)n;
    return 0;
}

bool virtio_blk_match(const struct pci_dev *d)
{
    return virtio_pci_type(d) == VIRTIO_TYPE_BLK;
}

/* ---- the pattern: qword at disk offset off holds off | seed << 56 ---- */

static void fill_pattern(uint64_t *p, uint64_t off, size_t nq)
{
    uint64_t v = off | B.tag;
    size_t i = 0;

    /* Unrolled: every instruction is emulated, so loop overhead counts. */
    for (; i + 8 <= nq; i += 8, v += 64) {
        p[i] = v;
        p[i + 1] = v + 8;
        p[i + 2] = v + 16;
        p[i + 3] = v + 24;
        p[i + 4] = v + 32;
        p[i + 5] = v + 40;
        p[i + 6] = v + 48;
        p[i + 7] = v + 56;
    }
    for (; i < nq; i++, v += 8)
        p[i] = v;
}

/* Make sure the image holds the pattern for [off, off + len). */
static void image_need(uint64_t off, uint64_t len)
{
    uint64_t b, end = off + len;

    for (b = off >> BLOCK_SHIFT; (b << BLOCK_SHIFT) < end; b++) {
        uint64_t start = b << BLOCK_SHIFT, n;

        if (B.filled[b >> 6] & (1ull << (b & 63)))
            continue;
        n = B.region - start < (1u << BLOCK_SHIFT) ? B.region - start : (1u << BLOCK_SHIFT);
        fill_pattern((uint64_t *)(B.image + start), start, (size_t)(n >> 3));
        B.filled[b >> 6] |= 1ull << (b & 63);
        B.nfilled++;
    }
}

/* Index of the first differing qword of a[0..n) and b[0..n), or n. */
static size_t cmp_qwords(const void *a, const void *b, size_t n)
{
    const void *pa = a, *pb = b;
    size_t c = n;
    uint8_t ne;

    if (!n)
        return 0;
    __asm__ volatile("repe cmpsq; setne %3"
                     : "+S"(pa), "+D"(pb), "+c"(c), "=q"(ne) : : "memory", "cc");
    return ne ? n - c - 1 : n;
}

/* ---- request generation ---- */

static uint64_t xorshift64(uint64_t *s)
{
    uint64_t x = *s;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void gen_init(struct blk_gen *g, uint8_t type, bool rand, uint32_t count)
{
    memset(g, 0, sizeof(*g));
    g->type = type;
    g->rand = rand;
    /* Data requests need a non-empty region. */
    g->count = B.region || type == BLK_T_FLUSH || type == BLK_T_GET_ID ? count : 0;
    g->x = XORSHIFT_INIT ^ B.seed;
}

static void gen_next(struct blk_gen *g, uint64_t *off, uint32_t *len)
{
    if (g->type == BLK_T_FLUSH) {
        *off = 0;
        *len = 0;
    } else if (g->type == BLK_T_GET_ID) {
        *off = 0;
        *len = BLK_ID_BYTES;
    } else if (g->rand) {
        *off = (xorshift64(&g->x) % B.nblocks) * B.iosize;
        *len = B.iosize;
    } else {
        uint64_t rest = B.region - g->pos;

        *off = g->pos;
        *len = rest < B.iosize ? (uint32_t)rest : B.iosize;
        g->pos += *len;
        if (g->pos >= B.region)
            g->pos = 0;
    }
}

/* Fill the image for every block the OUT requests of g will write (a replay
 * of the generator on a copy; stops once the whole region is filled). */
static void prefill(const struct blk_gen *g)
{
    struct blk_gen c = *g;
    uint32_t i;

    for (i = 0; i < c.count && B.nfilled < B.nimage_blocks; i++) {
        uint64_t off;
        uint32_t len;

        gen_next(&c, &off, &len);
        image_need(off, len);
    }
}

/* ---- seqlog blocks ----
 *
 * A 4 KiB block, as 512 little-endian u64 words w[]: w[0] the magic, w[1]
 * the sequence number, w[2] the block's first 512-byte sector (LBA), w[3]
 * the checksum; in each sector k (0..7) w[64k + 4] = seq and w[64k + 5] =
 * LBA + k (a block torn at a sector boundary shows it); every other word
 * is fixed: w[i] = i * 0x9e3779b97f4a7c15 ^ 0x5a5a5a5a5a5a5a5a. Checksum =
 * sum over i != 3 of w[i] * (2i + 1), modulo 2^64. The fixed words are
 * written into the slot buffers once, their share of the checksum computed
 * once: a block costs ~20 stores, not 512.
 */

#define SEQLOG_FIXED(i) ((uint64_t)(i) * 0x9e3779b97f4a7c15ull ^ 0x5a5a5a5a5a5a5a5aull)

static uint64_t seqlog_fixed_sum;

static bool seqlog_special(unsigned int i)
{
    return i < 4 || (i % 64 == 4) || (i % 64 == 5);
}

static void seqlog_init(void)
{
    unsigned int s, i;

    seqlog_fixed_sum = 0;
    for (i = 0; i < 512; i++)
        if (!seqlog_special(i))
            seqlog_fixed_sum += SEQLOG_FIXED(i) * (2 * i + 1);
    for (s = 0; s < B.qd; s++) {
        uint64_t *w = (uint64_t *)req_buf[s];

        for (i = 0; i < 512; i++)
            w[i] = SEQLOG_FIXED(i);
    }
}

/* Build the block for disk offset off (seq = off / 4 KiB + 1) in slot s's
 * buffer; returns its address. */
static uintptr_t seqlog_block(unsigned int s, uint64_t off)
{
    uint64_t *w = (uint64_t *)req_buf[s], seq = off / BLK_IO + 1, lba = off / BLK_SECTOR;
    uint64_t sum;
    unsigned int k;

    w[0] = BLK_SEQLOG_MAGIC;
    w[1] = seq;
    w[2] = lba;
    sum = seqlog_fixed_sum + BLK_SEQLOG_MAGIC + seq * 3 + lba * 5;
    for (k = 0; k < 8; k++) {
        w[64 * k + 4] = seq;
        w[64 * k + 5] = lba + k;
        sum += seq * (2 * (64 * k + 4) + 1) + (lba + k) * (2 * (64 * k + 5) + 1);
    }
    w[3] = sum;
    return (uintptr_t)w;
}

/* ---- issuing and reaping ---- */

static bool any_used(const void *ctx)
{
    unsigned int q;

    (void)ctx;
    for (q = 0; q < B.nq; q++)
        if (virtq_has_used(&B.vp.vq[q]))
            return true;
    return false;
}

static void complete(const struct blk_gen *g, struct blk_stats *st, unsigned int s, uint64_t t1)
{
    uint64_t l = t1 - req[s].t0;
    uint8_t status = req_status[s];

    if (req[s].reqno < BLK_MAX_LAT)
        lat[req[s].reqno] = l;
    st->lat_sum += l;
    if (l < st->lat_min)
        st->lat_min = l;
    if (l > st->lat_max)
        st->lat_max = l;
    st->last_status = status;
    st->last_slot = s;
    if (status != BLK_S_OK) {
        if (!st->ioerr++) {
            st->err_off = req[s].off;
            st->err_type = g->type;
            st->err_status = status;
        }
        return;
    }
    st->bytes += req[s].len;
    if (g->compare && !st->mismatch) {
        const uint8_t *want = B.image + req[s].off, *got = req_buf[s];
        size_t q = cmp_qwords(got, want, req[s].len >> 3);

        if (q < req[s].len >> 3) {
            size_t i = q * 8;

            while (got[i] == want[i])
                i++;
            st->mismatch = true;
            st->mismatch_off = req[s].off + i;
        }
    }
}

/*
 * Issue g's requests, keeping up to B.qd in flight, round robin over the
 * queues (each queue kicked once per batch), sleeping until any used ring
 * advances. Returns 0, PROBE_EXIT_BLK_TIMEOUT or PROBE_EXIT_VIRTIO.
 */
static int issue(struct blk_gen *g, struct blk_stats *st, const char *name)
{
    uint8_t freel[BLK_MAX_QD];
    unsigned int nfree = B.qd, inflight = 0, i, q;
    uint32_t issued = 0;

    for (i = 0; i < B.qd; i++)
        freel[i] = (uint8_t)i;
    while (issued < g->count || inflight) {
        unsigned int kick = 0;
        uint64_t t1;

        while (issued < g->count && nfree) {
            struct virtq *vq = &B.vp.vq[B.rr];
            struct virtq_buf b[3];
            unsigned int s, n = 1;
            uint64_t off;
            uint32_t len;

            if (virtq_num_free(vq) < 3)
                break;
            s = freel[--nfree];
            gen_next(g, &off, &len);
            req_hdr[s].type = g->type;
            req_hdr[s].reserved = 0;
            req_hdr[s].sector = off / BLK_SECTOR;
            req_status[s] = BLK_S_NONE;
            b[0].addr = (uintptr_t)&req_hdr[s];
            b[0].len = sizeof(req_hdr[s]);
            b[0].writable = false;
            if (len) {
                b[1].addr = g->seqlog ? seqlog_block(s, off)
                          : g->type == BLK_T_OUT ? (uintptr_t)(B.image + off)
                                                 : (uintptr_t)req_buf[s];
                b[1].len = len;
                b[1].writable = g->type != BLK_T_OUT;
                n = 2;
            }
            b[n].addr = (uintptr_t)&req_status[s];
            b[n].len = 1;
            b[n].writable = true;
            req[s].off = off;
            req[s].len = len;
            req[s].reqno = st->requests + issued;
            req[s].t0 = rdtsc();
            virtq_add_chain(vq, b, n + 1, (uint16_t)s);
            kick |= 1u << B.rr;
            B.rr = B.rr + 1 == B.nq ? 0 : B.rr + 1;
            issued++;
            inflight++;
        }
        for (q = 0; kick; q++, kick >>= 1)
            if (kick & 1)
                virtio_pci_kick(&B.vp, &B.vp.vq[q]);
        if (!inflight) {
            cprintf("probe: blk queue %u too small (size %u)\n", B.rr, B.vp.vq[B.rr].size);
            return PROBE_EXIT_VIRTIO;
        }
        if (wait_until(any_used, 0, BLK_MAX_WAKEUPS)) {
            cprintf("probe: blk timeout (%s request %u, %u in flight)\n", name,
                    st->requests + issued - inflight + 1, inflight);
            return PROBE_EXIT_BLK_TIMEOUT;
        }
        t1 = rdtsc();
        for (q = 0; q < B.nq; q++) {
            struct virtq *vq = &B.vp.vq[q];
            uint32_t id, ulen;

            while (virtq_pop_used(vq, &id, &ulen)) {
                unsigned int s;

                if (id >= vq->size || (s = virtq_token(vq, id)) >= B.qd) {
                    cprintf("probe: blk queue %u returned bad id %u\n", q, id);
                    return PROBE_EXIT_VIRTIO;
                }
                complete(g, st, s, t1);
                freel[nfree++] = (uint8_t)s;
                inflight--;
            }
        }
        st->excluded += lab_ready();
    }
    st->requests += issued;
    B.requests += issued;
    return 0;
}

static bool any_queue_irq(const void *ctx)
{
    unsigned int q;

    (void)ctx;
    for (q = 0; q < B.nq; q++)
        if (B.vp.vq[q].irqs)
            return true;
    return false;
}

/* ---- statistics ---- */

static void print_result(const char *name, const struct blk_stats *st, uint64_t cycles)
{
    uint64_t n = st->requests, m = n < BLK_MAX_LAT ? n : BLK_MAX_LAT, p99 = 0;

    if (m) {
        uint64_t rank = (99 * m + 99) / 100;    /* nearest rank: ceil(0.99 m) */

        p99 = stats_select_kth(lat, (long)m, (long)rank - 1);
    }
    cprintf("probe: result blk-%s requests=%u bytes=%lu cycles=%lu lat_min=%lu lat_avg=%lu "
            "lat_p99=%lu lat_max=%lu ioerr=%u qd=%u\n", name, st->requests,
            (unsigned long)st->bytes, (unsigned long)cycles,
            (unsigned long)(n ? st->lat_min : 0), (unsigned long)(n ? st->lat_sum / n : 0),
            (unsigned long)p99, (unsigned long)st->lat_max, st->ioerr, B.qd);
}

static void stats_init(struct blk_stats *st)
{
    memset(st, 0, sizeof(*st));
    st->lat_min = ~0ull;
}

/* ---- workloads ---- */

/* One timed workload. Returns 0 or an exit status; *stop when the remaining
 * workloads must not run. */
static int run_workload(enum blk_workload w, unsigned long ops, bool *stop)
{
    struct blk_stats st;
    struct blk_gen g, f;
    const char *name = wl_names[w];
    uint64_t t0, t1;
    bool write = w == BLK_WL_VERIFY || w == BLK_WL_RANDWRITE || w == BLK_WL_SEQWRITE;
    int rc = 0;

    stats_init(&st);
    switch (w) {
    case BLK_WL_VERIFY:
        gen_init(&g, BLK_T_OUT, false, (uint32_t)((B.region + B.iosize - 1) / B.iosize));
        break;
    case BLK_WL_RANDREAD:
    case BLK_WL_RANDWRITE:
        gen_init(&g, w == BLK_WL_RANDREAD ? BLK_T_IN : BLK_T_OUT, true, (uint32_t)ops);
        break;
    default:
        gen_init(&g, w == BLK_WL_SEQREAD ? BLK_T_IN : BLK_T_OUT, false, (uint32_t)ops);
        break;
    }
    gen_init(&f, BLK_T_FLUSH, false, B.flush ? 1 : 0);
    if (write)
        prefill(&g);        /* pattern generation is not part of the timing */

    lab_work_begin(0);
    t0 = rdtsc();
    rc = issue(&g, &st, name);
    if (!rc && (w == BLK_WL_VERIFY || w == BLK_WL_SEQWRITE))
        rc = issue(&f, &st, name);
    if (!rc && w == BLK_WL_VERIFY) {
        uint32_t n = g.count;

        gen_init(&g, BLK_T_IN, false, n);
        g.compare = true;
        rc = issue(&g, &st, name);
    }
    t1 = rdtsc();
    lab_work_end(0);
    if (rc) {
        *stop = true;
        return rc;
    }

    if (w == BLK_WL_VERIFY) {
        if (st.mismatch) {
            cprintf("probe: blk verify MISMATCH at offset 0x%lx\n",
                    (unsigned long)st.mismatch_off);
            rc = PROBE_EXIT_BLK_VERIFY;
            *stop = true;
        } else if (st.ioerr) {
            cprintf("probe: blk verify incomplete ioerr=%u\n", st.ioerr);
        } else {
            cprintf("probe: blk verify ok bytes=%lu\n", (unsigned long)B.region);
        }
    }
    print_result(name, &st, t1 - t0 - st.excluded);
    if (!rc && st.ioerr)
        rc = PROBE_EXIT_BLK_IOERR;
    return rc;
}

/* One OUT request to sector 0, expected to fail with IOERR. */
static int run_rotest(bool *stop)
{
    struct blk_stats st;
    struct blk_gen g;
    int rc;

    stats_init(&st);
    gen_init(&g, BLK_T_OUT, false, 1);
    prefill(&g);            /* a writable disk gets the pattern, not garbage */
    if ((rc = issue(&g, &st, "rotest"))) {
        *stop = true;
        return rc;
    }
    if (!st.requests)
        return 0;           /* empty region: nothing to write */
    cprintf("probe: blk ro write status=%u\n", st.last_status);
    return st.last_status == BLK_S_IOERR ? 0 : PROBE_EXIT_BLK_RO;
}

/*
 * seqlog: blocks seq = 1, 2, ... to 4 KiB block seq - 1 of the region, in
 * batches of `every` writes (qd in flight); after a batch completed, a FLUSH
 * (if negotiated; else every write was already written through); once that
 * completed, "probe: durable seq=N" (all blocks <= N are on stable storage).
 * The first failing request ends the log ("probe: blk seqlog ioerr ...");
 * that is an outcome, not a failure: the next workloads run and the exit
 * status does not change. Returns 0, or a timeout/virtio exit status.
 */
static int run_seqlog(unsigned long every, bool *stop)
{
    uint64_t nblocks = B.iosize == BLK_IO ? B.region / BLK_IO : 0, done = 0, t0, t1;
    struct blk_stats st;
    struct blk_gen g;
    int rc = 0;

    if (!nblocks) {
        console_puts("probe: blk seqlog region smaller than 4 KiB\n");
        return 0;
    }
    seqlog_init();
    stats_init(&st);
    cprintf("probe: blk seqlog start blocks=%lu flush_every=%lu qd=%u flush=%d\n",
            (unsigned long)nblocks, every, B.qd, B.flush);
    lab_work_begin(0);
    t0 = rdtsc();
    while (done < nblocks) {
        uint64_t n = nblocks - done < every ? nblocks - done : every;

        gen_init(&g, BLK_T_OUT, false, (uint32_t)n);
        g.pos = done * BLK_IO;
        g.seqlog = true;
        if ((rc = issue(&g, &st, "seqlog")) || st.ioerr)
            break;
        if (B.flush) {
            gen_init(&g, BLK_T_FLUSH, false, 1);
            if ((rc = issue(&g, &st, "seqlog")) || st.ioerr)
                break;
        }
        done += n;
        cprintf("probe: durable seq=%lu\n", (unsigned long)done);
        console_flush();
    }
    t1 = rdtsc();
    lab_work_end(0);
    if (rc) {
        *stop = true;
        return rc;
    }
    if (st.ioerr && st.err_type == BLK_T_FLUSH)
        cprintf("probe: blk seqlog ioerr flush status=%u durable=%lu\n", st.err_status,
                (unsigned long)done);
    else if (st.ioerr)
        cprintf("probe: blk seqlog ioerr seq=%lu status=%u durable=%lu\n",
                (unsigned long)(st.err_off / BLK_IO + 1), st.err_status, (unsigned long)done);
    else
        cprintf("probe: blk seqlog done seq=%lu\n", (unsigned long)done);
    print_result("seqlog", &st, t1 - t0 - st.excluded);
    return 0;
}

/* GET_ID: print the device's serial (up to 20 bytes, NUL-padded). */
static int run_get_id(void)
{
    struct blk_stats st;
    struct blk_gen g;
    char id[BLK_ID_BYTES + 1];
    unsigned int i;
    int rc;

    stats_init(&st);
    gen_init(&g, BLK_T_GET_ID, false, 1);
    if ((rc = issue(&g, &st, "get-id")))
        return rc;
    for (i = 0; i < BLK_ID_BYTES && req_buf[st.last_slot][i]; i++) {
        uint8_t c = req_buf[st.last_slot][i];

        id[i] = c >= 0x20 && c < 0x7f && c != '"' ? (char)c : '?';
    }
    id[i] = 0;
    cprintf("probe: blk id=\"%s\" status=%u\n", st.last_status == BLK_S_OK ? id : "",
            st.last_status);
    return 0;
}

/* Region = min(blkkb KiB, capacity, RAM left for the pattern image). */
static int setup_region(const struct blk_args *a)
{
    uint64_t want = (uint64_t)a->kib * 1024, cap = B.capacity * BLK_SECTOR & ~1023ull;
    uint64_t avail = mem_avail(), bitmap;

    if (want > cap)
        want = cap;
    /* image + bitmap (1 bit per 4 KiB) + page rounding of both */
    if (avail > 2 * 4096 && want > avail - 2 * 4096 - avail / 32768) {
        uint64_t fit = (avail - 2 * 4096 - avail / 32768) & ~4095ull;

        cprintf("probe: blk region clamped to %lu KiB (RAM)\n", (unsigned long)(fit >> 10));
        want = fit;
    } else if (avail <= 2 * 4096) {
        want = 0;
    }
    B.region = want;
    B.iosize = want < BLK_IO ? (uint32_t)want : BLK_IO;
    B.nblocks = B.iosize ? want / B.iosize : 0;
    B.nimage_blocks = (want + 4095) >> BLOCK_SHIFT;
    bitmap = ((B.nimage_blocks + 63) / 64) * 8;
    B.image = mem_alloc(want ? want : 1);
    B.filled = mem_alloc(bitmap ? bitmap : 8);
    if (!B.image || !B.filled) {
        console_puts("probe: blk out of memory for the pattern image\n");
        return PROBE_EXIT_VIRTIO;
    }
    memset(B.filled, 0, bitmap);
    B.nfilled = 0;
    return 0;
}

int virtio_blk_run(struct pci_dev *d, const struct blk_args *a, enum virtio_irq_mode want,
                   const char **mode)
{
    struct virtio_pci *vp = &B.vp;
    uint64_t offered, irqs = 0;
    unsigned int nq = 1, i;
    bool stop = false;
    int rc, frc = 0;

    *mode = "none";
    if ((rc = virtio_pci_open(vp, d)))
        return rc;
    if (!vp->device) {
        cprintf("probe: virtio %s missing device config capability\n", d->name);
        return PROBE_EXIT_VIRTIO;
    }
    offered = virtio_pci_offered(vp);
    if (offered & BLK_F_MQ) {
        nq = virtio_pci_cfg16(vp, CFG_NUM_QUEUES);
        if (nq == 0)
            nq = 1;
        if (nq > VIRTIO_MAX_QUEUES)
            nq = VIRTIO_MAX_QUEUES;
    }
    if ((rc = virtio_pci_setup(vp, offered & BLK_FEATURES, nq, want)))
        return rc;
    *mode = virtio_irq_mode_name(vp->mode);

    B.capacity = virtio_pci_cfg64(vp, CFG_CAPACITY);
    B.nq = nq;
    B.rr = 0;
    B.qd = (unsigned int)a->qd;
    B.seed = a->seed;
    B.tag = (uint64_t)a->seed << 56;
    B.flush = vp->features & BLK_F_FLUSH;
    B.ro = vp->features & BLK_F_RO;
    cprintf("probe: blk %s capacity=%lu ro=%d queues=%u seg_max=%u size_max=%u\n", d->name,
            (unsigned long)B.capacity, B.ro, nq,
            vp->features & BLK_F_SEG_MAX ? virtio_pci_cfg32(vp, CFG_SEG_MAX) : 0,
            vp->features & BLK_F_SIZE_MAX ? virtio_pci_cfg32(vp, CFG_SIZE_MAX) : 0);
    if ((rc = setup_region(a)))
        return rc;

    B.requests = 0;
    if (a->get_id && (frc = run_get_id()))
        stop = true;
    for (i = 0; i < a->nwl && !stop; i++) {
        rc = a->wl[i] == BLK_WL_ROTEST ? run_rotest(&stop)
           : a->wl[i] == BLK_WL_SEQLOG ? run_seqlog(a->seqflush, &stop)
                                       : run_workload(a->wl[i], a->ops, &stop);
        if (rc && !frc)
            frc = rc;
    }

    /* A request can be seen complete (used ring) before its interrupt is
     * taken: with a single request (rotest, blkid) the count may still be 0
     * here. Give a late interrupt 100 ms. */
    if (B.requests && !any_queue_irq(0))
        (void)wait_until(any_queue_irq, 0, LATE_IRQ_TICKS);
    for (i = 0; i < nq; i++)
        irqs += vp->vq[i].irqs;
    if (vp->mode != VIRTIO_IRQ_MSIX)
        irqs = vp->vq[0].irqs;      /* one interrupt signals every queue */
    cprintf("probe: virtio %s queue_irqs=%lu config_irqs=%u isr_empty=%u\n", d->name,
            (unsigned long)irqs, vp->config_irqs, vp->isr_empty);
    if (!frc && irqs == 0 && B.requests) {
        console_puts("probe: blk no queue interrupt\n");
        frc = PROBE_EXIT_IRQ_CHECK;
    }
    return frc;
}
