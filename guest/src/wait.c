/* guest/src/wait.c - halt-based waiting with a periodic LAPIC timer as watchdog. */
#include "wait.h"
#include "cpu.h"
#include "irq.h"
#include "lapic.h"

int wait_until(bool (*cond)(const void *ctx), const void *ctx, unsigned int max_wakeups)
{
    static bool registered;
    uint32_t ticks0;
    bool own_timer;
    int rc = 0;

    irq_disable();
    if (cond(ctx)) {
        irq_enable();
        return 0;
    }
    /* A timer already running (a net/latency workload printing to the
     * virtio console) belongs to the caller's caller: keep it as it is. */
    own_timer = !lapic_timer_running();
    if (own_timer && !registered) {
        irq_register(IRQ_VEC_WATCHDOG, 0, 0, IRQ_EDGE, IRQ_F_HIDE_IDLE,
                     "lapic timer (watchdog)");
        registered = true;
    }
    if (own_timer)
        lapic_timer_start(IRQ_VEC_WATCHDOG, WAIT_WATCHDOG_TICKS);
    /* Only watchdog ticks count: other interrupts (a flood= device's,
     * arriving at any rate) wake the CPU without bringing the limit closer. */
    ticks0 = irq_count(IRQ_VEC_WATCHDOG);
    for (;;) {
        irq_enable_and_halt();
        irq_disable();
        if (cond(ctx))
            break;
        if (irq_count(IRQ_VEC_WATCHDOG) - ticks0 >= max_wakeups) {
            rc = -1;
            break;
        }
    }
    if (own_timer)
        lapic_timer_stop();
    irq_enable();
    return rc;
}
