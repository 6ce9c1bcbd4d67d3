/* guest/src/latency.c - interrupt latency: rng latency-mode stamps vs. timed handler entry, and the self-IPI floor. */
#include "latency.h"
#include "console.h"
#include "cpu.h"
#include "idt.h"
#include "irq.h"
#include "lab.h"
#include "lapic.h"
#include "lib.h"
#include "stats.h"

#define LAT_BUFS            8
#define LAT_BUF_SIZE        64
#define LAT_STAMP_LEN       16
#define LAT_WD_TICKS        6250000u    /* watchdog period: 100 ms at KVM's 62.5 MHz (1 GHz / 16) */
#define LAT_MAX_IDLE_TICKS  20          /* 2 s without a completion: timeout */

static uint8_t lat_bufs[LAT_BUFS][LAT_BUF_SIZE] __noinit __attribute__((aligned(64)));
static uint64_t lat_vals[LAT_MAX_N] __noinit;

/* Shared between the interrupt hook and the waiting loop. */
static struct {
    struct virtio_pci *vp;
    uint8_t vector;
    volatile bool repost;       /* re-post completed buffers */
    volatile bool measuring;    /* record latencies; cleared at the target */
    volatile uint32_t wake;     /* bumped by every queue and watchdog interrupt */
    volatile uint32_t seen;     /* queue interrupts that completed >= 1 buffer */
    volatile uint32_t ticks;    /* watchdog interrupts */
    uint32_t target, coalesced, empty;
    volatile uint32_t bad_len, bad_seq, bad_id;
    uint32_t late;              /* buffers stamped after the entry of the interrupt that took them */
    uint32_t last_len;
    uint64_t last_seq;
    bool have_seq;
    struct stats st;
} L __noinit;                   /* cleared by each run */

static volatile bool ipi_got;

static void post(struct virtq *vq, unsigned int b)
{
    struct virtq_buf vb = { (uintptr_t)lat_bufs[b], LAT_BUF_SIZE, true };
    volatile uint64_t *p = (volatile uint64_t *)lat_bufs[b];

    p[0] = 0;
    p[1] = 0;
    virtq_add_chain(vq, &vb, 1, (uint16_t)b);
}

/* Queue interrupt (interrupt context, after the ISR read in msi/intx). */
static void lat_irq(struct virtq *vq, void *ctx)
{
    uint64_t t = idt_entry_tsc(L.vector), best = ~0ull;
    uint32_t id, len, n = 0, late = 0, reposted = 0;

    (void)ctx;
    L.wake++;
    while (virtq_pop_used(vq, &id, &len)) {
        const volatile uint64_t *p;
        unsigned int b;

        if (id >= vq->size || (b = virtq_token(vq, id)) >= LAT_BUFS) {
            L.bad_id++;
            L.repost = false;
            continue;
        }
        p = (const volatile uint64_t *)lat_bufs[b];
        if (len != LAT_STAMP_LEN) {
            L.bad_len++;
            L.last_len = len;
            L.repost = false;   /* not in latency mode: a kick would refill at once */
        } else {
            uint64_t stamp = p[0], seq = p[1];

            if (L.have_seq && seq <= L.last_seq)
                L.bad_seq++;
            L.last_seq = seq;
            L.have_seq = true;
            if (stamp > t) {
                late++;         /* completed after this interrupt was taken */
            } else {
                if (stamp < best)
                    best = stamp;
                n++;
            }
        }
        if (L.repost) {
            post(vq, b);
            reposted++;
        }
    }
    if (reposted)
        virtio_pci_kick(L.vp, vq);
    if (L.measuring) {
        L.late += late;
        L.coalesced += late;
    }
    if (!n) {
        L.empty++;
        return;
    }
    L.seen++;
    if (!L.measuring)
        return;
    stats_add(&L.st, t - best);
    L.coalesced += n - 1;
    if (L.st.n >= L.target)
        L.measuring = false;
}

static void lat_tick(void *ctx)
{
    (void)ctx;
    L.ticks++;
    L.wake++;
}

/*
 * Wait (IF=1 throughout) until the warm-up interrupt was seen (warmup) or
 * the target was reached. Handlers do all the work; this loop only decides
 * when to stop. 0, -1 on timeout, -2 on a data/device error.
 */
static int lat_wait(bool poll, bool warmup)
{
    uint32_t last = L.seen, idle_from = L.ticks;

    irq_enable();
    for (;;) {
        uint32_t w = L.wake;

        if (L.bad_len || L.bad_id)
            return -2;
        if (warmup ? L.seen != 0 : !L.measuring)
            return 0;
        if (L.seen != last) {
            last = L.seen;
            idle_from = L.ticks;
        } else if (L.ticks - idle_from >= LAT_MAX_IDLE_TICKS) {
            return -1;
        }
        if (poll) {
            while (L.wake == w)
                ;
        } else {
            irq_enable_and_halt();
        }
    }
}

int lat_run_rng(struct virtio_pci *vp, unsigned long n, bool poll)
{
    struct virtq *vq = &vp->vq[0];
    unsigned int nb = vq->size < LAT_BUFS ? vq->size : LAT_BUFS, b;
    const char *wait = poll ? "poll" : "hlt";
    char buf[112];
    int rc = 0, w;

    memset(&L, 0, sizeof(L));
    L.vp = vp;
    L.vector = vp->vectors[0];      /* the queue vector in every mode */
    L.target = (uint32_t)n;
    L.repost = true;
    stats_reset(&L.st, lat_vals, LAT_MAX_N);
    if (idt_time_vector(L.vector)) {
        console_puts("probe: latency no timed entry stub left\n");
        return PROBE_EXIT_VIRTIO;
    }
    irq_register(IRQ_VEC_WATCHDOG, lat_tick, 0, IRQ_EDGE, IRQ_F_HIDE_IDLE,
                 "lapic timer (watchdog)");
    irq_disable();
    for (b = 0; b < nb; b++)
        post(vq, b);
    vq->irq_ctx = 0;
    vq->irq_hook = lat_irq;
    virtio_pci_kick(vp, vq);    /* latency mode ignores kicks; spec-wise due */
    lapic_timer_start(IRQ_VEC_WATCHDOG, LAT_WD_TICKS);

    w = lat_wait(poll, true);   /* warm-up: first completion, not measured */
    if (!w) {
        lab_ready();
        lab_marker(LAB_MARK_BEGIN);
        L.measuring = true;
        w = lat_wait(poll, false);
        if (!w)
            lab_marker(LAB_MARK_END);
    }
    irq_disable();
    L.measuring = false;
    L.repost = false;
    vq->irq_hook = 0;           /* later completions are left in the ring */
    lapic_timer_stop();
    irq_register(IRQ_VEC_WATCHDOG, 0, 0, IRQ_EDGE, IRQ_F_HIDE_IDLE, "lapic timer (watchdog)");
    idt_untime_vector(L.vector);
    irq_enable();

    if (w == -1) {
        cprintf("probe: rng timeout (latency, %u of %u interrupts)\n", L.st.n, L.target);
        if (L.late)
            console_puts("probe: latency every stamp later than the handler entry: TSC not comparable?\n");
        rc = PROBE_EXIT_RNG_TIMEOUT;
    } else if (L.bad_id) {
        console_puts("probe: rng used id out of range\n");
        rc = PROBE_EXIT_VIRTIO;
    } else if (L.bad_len) {
        cprintf("probe: latency used length %u != 16 (device not in latency mode?)\n",
                L.last_len);
        rc = PROBE_EXIT_RNG_DATA;
    } else {
        cprintf("probe: result latency requests=%u %s coalesced=%u wait=%s\n", L.st.n,
                stats_format(&L.st, buf, sizeof(buf)), L.coalesced, wait);
        stats_print_hist(&L.st, "latency");
        if (L.bad_seq) {
            cprintf("probe: latency sequence numbers not increasing (%u times)\n", L.bad_seq);
            rc = PROBE_EXIT_RNG_DATA;
        }
    }
    if (L.empty || L.late)
        cprintf("probe: latency empty=%u late=%u\n", L.empty, L.late);
    cprintf("probe: virtio %s queue_irqs=%u config_irqs=%u isr_empty=%u\n", vp->pci->name,
            vq->irqs, vp->config_irqs, vp->isr_empty);
    return rc;
}

static void ipi_irq(void *ctx)
{
    (void)ctx;
    ipi_got = true;
}

int lat_run_floor(unsigned long n, bool poll)
{
    uint8_t vec = IRQ_VEC_SELFIPI;
    struct stats st;
    char buf[112];
    unsigned long i;
    int rc = 0;

    memset(&L, 0, sizeof(L));
    irq_register(IRQ_VEC_WATCHDOG, lat_tick, 0, IRQ_EDGE, IRQ_F_HIDE_IDLE,
                 "lapic timer (watchdog)");
    irq_register(vec, ipi_irq, 0, IRQ_EDGE, 0, "lapic self-ipi");
    if (idt_time_vector(vec)) {
        console_puts("probe: floor no timed entry stub left\n");
        return PROBE_EXIT_IRQ_CHECK;
    }
    stats_reset(&st, lat_vals, LAT_MAX_N);
    lapic_timer_start(IRQ_VEC_WATCHDOG, LAT_WD_TICKS);
    irq_enable();
    lab_marker(LAB_MARK_BEGIN);
    for (i = 0; i < n; i++) {
        uint32_t ticks = L.ticks;
        uint64_t t0;

        ipi_got = false;
        if (!poll)
            irq_disable();      /* the IPI stays pending until "sti; hlt" */
        t0 = rdtsc();
        lapic_self_ipi(vec);
        while (!ipi_got) {
            if (!poll)
                irq_enable_and_halt();
            if (L.ticks - ticks >= LAT_MAX_IDLE_TICKS) {
                cprintf("probe: self-ipi %lu not delivered\n", i + 1);
                rc = PROBE_EXIT_IRQ_CHECK;
                goto out;
            }
        }
        stats_add(&st, idt_entry_tsc(vec) - t0);
    }
    lab_marker(LAB_MARK_END);
    cprintf("probe: result floor requests=%u %s wait=%s\n", st.n,
            stats_format(&st, buf, sizeof(buf)), poll ? "poll" : "hlt");
    stats_print_hist(&st, "floor");
out:
    irq_enable();
    lapic_timer_stop();
    irq_register(IRQ_VEC_WATCHDOG, 0, 0, IRQ_EDGE, IRQ_F_HIDE_IDLE, "lapic timer (watchdog)");
    idt_untime_vector(vec);
    return rc;
}
