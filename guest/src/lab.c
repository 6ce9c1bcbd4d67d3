/* guest/src/lab.c - the one-time readiness marker and line, the work window around timed workloads. */
#include "lab.h"
#include "console.h"
#include "irq.h"
#include "virtio_pci.h"
#include "wait.h"

#include <stdbool.h>

uint64_t cpu_halts;

static bool ready;
static unsigned long window_ms;
static uint64_t irqs0, kicks0, halts0;

void lab_set_window(unsigned long ms)
{
    window_ms = ms;
}

static bool tsc_past(const void *deadline)
{
    return (int64_t)(rdtsc() - *(const uint64_t *)deadline) >= 0;
}

static void window_pause(lab_idle_fn idle)
{
    uint64_t deadline = rdtsc() + lab_tsc_hz(0) / 1000 * window_ms;

    if (idle)
        idle(deadline);
    else        /* watchdog ticks bound it: 10 ms each, two to spare */
        (void)wait_until(tsc_past, &deadline, (unsigned int)(window_ms / 10 + 2));
}

void lab_work_begin(lab_idle_fn idle)
{
    if (window_ms) {
        console_puts("probe: work begin\n");
        window_pause(idle);
        irqs0 = irq_device_count();
        kicks0 = virtio_pci_kicks();
        halts0 = cpu_halts;
    }
    lab_marker(LAB_MARK_BEGIN);
}

void lab_work_end(lab_idle_fn idle)
{
    uint64_t irqs, kicks, halts;

    lab_marker(LAB_MARK_END);
    if (window_ms) {
        irqs = irq_device_count() - irqs0;
        kicks = virtio_pci_kicks() - kicks0;
        halts = cpu_halts - halts0;
        cprintf("probe: work end irqs=%lu kicks=%lu halts=%lu\n", (unsigned long)irqs,
                (unsigned long)kicks, (unsigned long)halts);
        window_pause(idle);
    }
}

uint64_t lab_ready(void)
{
    uint64_t t0;

    if (__builtin_expect(ready, 1))
        return 0;
    ready = true;
    t0 = rdtsc();
    lab_marker(LAB_MARK_READY);
    console_puts("probe: ready\n");
    return rdtsc() - t0;
}

static void cpuid(uint32_t leaf, uint32_t r[4])
{
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3])
                     : "a"(leaf), "c"(0));
}

uint64_t lab_tsc_hz(const char **src)
{
    static uint64_t hz;
    static const char *from;
    uint32_t r[4], max;

    if (hz)
        goto out;
    cpuid(0, r);
    max = r[0];
    if (max >= 0x15) {
        cpuid(0x15, r);         /* TSC = crystal (ECX) * EBX / EAX */
        if (r[0] && r[1] && r[2]) {
            hz = (uint64_t)r[2] * r[1] / r[0];
            from = "cpuid 0x15";
            goto out;
        }
    }
    if (max >= 0x16) {
        cpuid(0x16, r);
        if (r[0] & 0xffff) {
            hz = (uint64_t)(r[0] & 0xffff) * 1000000;
            from = "cpuid 0x16";
            goto out;
        }
    }
    cpuid(1, r);
    if (r[2] & (1u << 31)) {    /* hypervisor present */
        cpuid(0x40000000, r);
        if (r[0] >= 0x40000010 && r[0] < 0x40000100) {
            cpuid(0x40000010, r);
            if (r[0]) {
                hz = (uint64_t)r[0] * 1000;
                from = "cpuid 0x40000010";
                goto out;
            }
        }
    }
    hz = 2000000000ull;
    from = "assumed";
out:
    if (src)
        *src = from;
    return hz;
}
