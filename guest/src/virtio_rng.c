/* guest/src/virtio_rng.c - virtio-rng driver: fill 4 KiB buffers from the device and sanity-check the bytes. */
#include "virtio_rng.h"
#include "console.h"
#include "irq.h"
#include "lab.h"
#include "latency.h"
#include "lib.h"
#include "wait.h"

#define RNG_BUF_SIZE        4096
#define RNG_MAX_WAKEUPS     100     /* per request; >= 1 s of watchdog ticks */
#define RNG_MAX_EMPTY       16      /* consecutive zero-length completions */
#define RNG_MIN_DISTINCT    200
#define RNG_DISTINCT_BYTES  1024    /* the distinct check needs this much data */

static uint8_t rng_buf[RNG_BUF_SIZE] __noinit __attribute__((aligned(4096)));
static struct virtio_pci rng_vp;

struct virtio_pci *virtio_rng_device(void)
{
    return rng_vp.pci ? &rng_vp : 0;
}

bool virtio_rng_match(const struct pci_dev *d)
{
    return virtio_pci_type(d) == VIRTIO_TYPE_RNG;
}

static bool vq_has_used(const void *ctx)
{
    return virtq_has_used(ctx);
}

static bool vq_interrupted(const void *ctx)
{
    return ((const struct virtq *)ctx)->irqs != 0;
}

static unsigned int popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (unsigned int)((x * 0x0101010101010101ull) >> 56);
}

static bool all_seen(const uint64_t seen[4])
{
    return (seen[0] & seen[1] & seen[2] & seen[3]) == ~0ull;
}

/* Mark the byte values of p[0..n) in the 256-bit set; stops early once all
 * 256 were seen (a byte loop is ~7 emulated instructions per byte). */
static void mark_bytes(uint64_t seen[4], const uint8_t *p, uint32_t n)
{
    uint32_t i = 0;

    while (i < n && !all_seen(seen)) {
        uint32_t end = n - i > 256 ? i + 256 : n;

        for (; i < end; i++)
            seen[p[i] >> 6] |= 1ull << (p[i] & 63);
    }
}

static volatile uint64_t *qword_at(uint32_t off)
{
    return (volatile uint64_t *)(rng_buf + off);
}

int virtio_rng_run(struct pci_dev *d, unsigned long kib, enum virtio_irq_mode want,
                   const char **mode)
{
    struct virtio_pci *vp = &rng_vp;
    struct virtq *vq = &vp->vq[0];
    uint64_t want_bytes = (uint64_t)kib * 1024, total = 0, seen[4] = { 0, 0, 0, 0 };
    unsigned int requests = 0, empty = 0, distinct;
    uint64_t t0, t1, excluded = 0;
    int rc;

    *mode = "none";
    rc = virtio_pci_start(vp, d, 0, 1, want);
    if (rc)
        return rc;
    *mode = virtio_irq_mode_name(vp->mode);

    lab_work_begin(0);
    t0 = rdtsc();
    while (total < want_bytes) {
        uint32_t id, len;

        *qword_at(0) = 0;
        *qword_at(RNG_BUF_SIZE - 8) = 0;
        if (virtq_add_buf(vq, (uintptr_t)rng_buf, RNG_BUF_SIZE, true) < 0) {
            console_puts("probe: rng queue full\n");
            return PROBE_EXIT_VIRTIO;
        }
        virtio_pci_kick(vp, vq);
        requests++;
        if (wait_until(vq_has_used, vq, RNG_MAX_WAKEUPS)) {
            cprintf("probe: rng timeout (request %u, %lu bytes read)\n", requests,
                    (unsigned long)total);
            return PROBE_EXIT_RNG_TIMEOUT;
        }
        virtq_pop_used(vq, &id, &len);
        excluded += lab_ready();
        if (len > RNG_BUF_SIZE) {
            cprintf("probe: rng used length %u > %u\n", len, RNG_BUF_SIZE);
            return PROBE_EXIT_RNG_DATA;
        }
        if ((len >= 8 && *qword_at(0) == 0) ||
            (len == RNG_BUF_SIZE && *qword_at(RNG_BUF_SIZE - 8) == 0)) {
            cprintf("probe: rng buffer not written (request %u, len %u)\n", requests, len);
            return PROBE_EXIT_RNG_DATA;
        }
        if (len == 0 && ++empty >= RNG_MAX_EMPTY) {
            console_puts("probe: rng returned no data\n");
            return PROBE_EXIT_RNG_DATA;
        } else if (len) {
            empty = 0;
        }
        mark_bytes(seen, rng_buf, len);
        total += len;
    }
    t1 = rdtsc();
    lab_work_end(0);

    distinct = popcount64(seen[0]) + popcount64(seen[1]) + popcount64(seen[2]) +
               popcount64(seen[3]);
    cprintf("probe: rng read %lu bytes, distinct=%u, requests=%u\n",
            (unsigned long)total, distinct, requests);
    cprintf("probe: result rng requests=%u bytes=%lu cycles=%lu\n", requests,
            (unsigned long)total, (unsigned long)(t1 - t0 - excluded));
    cprintf("probe: virtio %s queue_irqs=%u config_irqs=%u isr_empty=%u\n", d->name,
            vq->irqs, vp->config_irqs, vp->isr_empty);
    if (total >= RNG_DISTINCT_BYTES && distinct <= RNG_MIN_DISTINCT) {
        cprintf("probe: rng data check failed, distinct=%u\n", distinct);
        return PROBE_EXIT_RNG_DATA;
    }
    /* The wait above ends when the used ring moves, which the device writes
     * before it signals: on a busy host the interrupt may still be on its way. */
    if (requests && vq->irqs == 0 && wait_until(vq_interrupted, vq, RNG_MAX_WAKEUPS)) {
        console_puts("probe: rng no queue interrupt\n");
        return PROBE_EXIT_IRQ_CHECK;
    }
    return 0;
}

int virtio_rng_latency(struct pci_dev *d, unsigned long n, bool poll,
                       enum virtio_irq_mode want, const char **mode)
{
    int rc;

    *mode = "none";
    rc = virtio_pci_start(&rng_vp, d, 0, 1, want);
    if (rc)
        return rc;
    *mode = virtio_irq_mode_name(rng_vp.mode);
    return lat_run_rng(&rng_vp, n, poll);
}
