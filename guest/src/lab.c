/* guest/src/lab.c - the one-time readiness marker and line. */
#include "lab.h"
#include "console.h"

#include <stdbool.h>

static bool ready;

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
