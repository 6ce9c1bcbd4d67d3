/* guest/src/intx_stress.c - intxstress=N: two vCPUs on one level-triggered virtio-rng line; a lost INTx assertion fails the run. */
#include "intx_stress.h"

#include <stdbool.h>
#include <stdint.h>

#include "console.h"
#include "exit.h"
#include "io.h"
#include "lab.h"
#include "smp.h"
#include "virtio_pci.h"
#include "virtq.h"
#include "wait.h"

#define STRESS_QD       4       /* requests in flight at most */
#define STRESS_BYTES    16      /* per request */
#define LATE_ROUNDS     16
#define WINDOW_ROUNDS   16
#define WINDOW_US       5000    /* the BSP stays in its handler (ISR read, no EOI yet) this long */
#define LATE_MAX_US     5000    /* the late request comes 0..5 ms after the BSP went idle */
#define LOST_WAKEUPS    200     /* 2 s of 10 ms watchdog ticks without progress: lost */

enum ap_cmd { AP_IDLE, AP_STRESS, AP_LATE };

static struct virtio_pci svp;
static uint8_t bufs[STRESS_QD][64] __attribute__((aligned(64)));

/* The queue is shared: the AP posts, the BSP's interrupt hook pops. */
static volatile uint32_t qlock;
static volatile uint32_t posted, done;
static volatile uint32_t ap_cmd, ap_n, ap_delay_us;
static volatile bool in_window;  /* the next completion asks the AP for one more, then waits */
static uint64_t tsc_hz;

static void delay_us(uint32_t us);

static void lock(void)
{
    while (__atomic_exchange_n(&qlock, 1, __ATOMIC_ACQUIRE))
        cpu_relax();
}

static void unlock(void)
{
    __atomic_store_n(&qlock, 0, __ATOMIC_RELEASE);
}

/* BSP, interrupt context (IF=0, before the EOI): take every completion. */
static void on_used(struct virtq *vq, void *ctx)
{
    uint32_t id, len, popped = 0;

    (void)ctx;
    lock();
    while (virtq_pop_used(vq, &id, &len)) {
        __atomic_fetch_add(&done, 1, __ATOMIC_RELEASE);
        popped++;
    }
    unlock();
    /* Only a completion opens the window: an interrupt with nothing new (PVM delivers each
     * level-triggered one twice, see docs/linux-guests.md) must not give the AP a command,
     * or it would overwrite the one the BSP just gave and a request would never be posted. */
    if (in_window && popped) {
        /* The device completes the AP's next request while this CPU has read ISR and not
         * yet EOIed: the line is still up, so that completion's interrupt must come from
         * the VMM raising the line again after the EOI (KVM's resample). */
        in_window = false;
        ap_delay_us = 0;
        __atomic_store_n(&ap_cmd, AP_LATE, __ATOMIC_RELEASE);
        delay_us(WINDOW_US);
    }
}

/* AP: one 16-byte request, kicked at once. */
static void post_one(void)
{
    struct virtq *vq = &svp.vq[0];

    lock();
    (void)virtq_add_buf(vq, (uintptr_t)bufs[posted % STRESS_QD], STRESS_BYTES, true);
    __atomic_fetch_add(&posted, 1, __ATOMIC_RELEASE);
    virtio_pci_kick(&svp, vq);
    unlock();
}

static void delay_us(uint32_t us)
{
    uint64_t end = rdtsc() + tsc_hz / 1000000 * us;

    while (rdtsc() < end)
        cpu_relax();
}

/* The AP's work loop (smp_ap_set_work): serves the BSP's commands for ever. A command is
 * taken (reset to AP_IDLE) before it is done, so the one the BSP's handler gives while the AP
 * still finishes the last (a completion can come back before post_one returns) is not lost. */
static void ap_work(void)
{
    for (;;) {
        uint32_t cmd = __atomic_exchange_n(&ap_cmd, AP_IDLE, __ATOMIC_ACQ_REL);

        if (cmd == AP_STRESS) {
            for (uint32_t i = 0; i < ap_n; i++) {
                while (posted - __atomic_load_n(&done, __ATOMIC_ACQUIRE) >= STRESS_QD)
                    cpu_relax();
                post_one();
            }
        } else if (cmd == AP_LATE) {
            delay_us(ap_delay_us);
            post_one();
        } else {
            cpu_relax();
        }
    }
}

struct progress {
    uint32_t want;
};

static bool reached(const void *ctx)
{
    return __atomic_load_n(&done, __ATOMIC_ACQUIRE) >= ((const struct progress *)ctx)->want;
}

/* Waits (sti; hlt) until `want` requests completed by interrupt. False after 2 s without
 * progress; the line says what was lost. */
static bool wait_done(uint32_t want, const char *phase)
{
    struct progress p = { want };
    uint32_t last = done;

    while (!reached(&p)) {
        if (wait_until(reached, &p, LOST_WAKEUPS) == 0)
            break;
        if (done != last) {     /* slow but moving: keep waiting */
            last = done;
            continue;
        }
        cprintf("probe: intxstress lost interrupt in %s: posted=%u done=%u want=%u "
                "used-ring-has-completions=%s irqs=%u isr_empty=%u\n", phase, posted, done,
                want, virtq_has_used(&svp.vq[0]) ? "yes" : "no", svp.vq[0].irqs,
                svp.isr_empty);
        return false;
    }
    return true;
}

static bool ap_idle(void)
{
    for (uint32_t i = 0; i < 2000000; i++) {
        if (__atomic_load_n(&ap_cmd, __ATOMIC_ACQUIRE) == AP_IDLE)
            return true;
        cpu_relax();
    }
    return false;
}

int intx_stress_run(struct pci_dev *d, unsigned long n)
{
    struct virtq *vq = &svp.vq[0];
    uint32_t late = 0, windows = 0;
    int rc;

    if (smp_ap_count() < 1) {
        console_puts("probe: intxstress needs smp and a second CPU\n");
        return PROBE_EXIT_SMP;
    }
    rc = virtio_pci_start(&svp, d, 0, 1, VIRTIO_IRQ_INTX);
    if (rc)
        return rc;
    tsc_hz = lab_tsc_hz(0);
    vq->irq_hook = on_used;
    smp_ap_set_work(ap_work);

    ap_n = (uint32_t)n;
    __atomic_store_n(&ap_cmd, AP_STRESS, __ATOMIC_RELEASE);
    if (!wait_done((uint32_t)n, "the stress"))
        return PROBE_EXIT_INTX_LOST;
    uint32_t want = (uint32_t)n;
    for (uint32_t r = 0; r < WINDOW_ROUNDS; r++) {
        if (!ap_idle()) {
            console_puts("probe: intxstress: the AP did not come back\n");
            return PROBE_EXIT_SMP;
        }
        in_window = true;
        ap_delay_us = 0;
        __atomic_store_n(&ap_cmd, AP_LATE, __ATOMIC_RELEASE);
        want += 2;
        if (!wait_done(want, "a completion between ISR read and EOI"))
            return PROBE_EXIT_INTX_LOST;
        windows++;
    }
    for (uint32_t r = 0; r < LATE_ROUNDS; r++) {
        if (!ap_idle()) {
            console_puts("probe: intxstress: the AP did not come back\n");
            return PROBE_EXIT_SMP;
        }
        ap_delay_us = (r * 331u) % LATE_MAX_US;
        __atomic_store_n(&ap_cmd, AP_LATE, __ATOMIC_RELEASE);
        if (!wait_done(++want, "a late single request"))
            return PROBE_EXIT_INTX_LOST;
        late++;
    }
    cprintf("probe: intxstress n=%lu done=%u irqs=%u isr_empty=%u window=%u/%u late=%u/%u\n", n,
            done, vq->irqs, svp.isr_empty, windows, WINDOW_ROUNDS, late, LATE_ROUNDS);
    return 0;
}
