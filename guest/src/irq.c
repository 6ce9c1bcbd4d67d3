/* guest/src/irq.c - vector registry, per-vector accounting and the final interrupt table. */
#include "irq.h"
#include "console.h"
#include "fmt.h"
#include "lapic.h"

#include <stdarg.h>

#define SRC_LEN 48

struct irq_vec {
    irq_handler_fn fn;
    void *ctx;
    volatile uint32_t count;
    volatile uint32_t level;
    bool registered;
    uint8_t trig;
    uint8_t flags;
    char src[SRC_LEN];
};

static struct irq_vec vecs[256];

int irq_alloc_vector(void)
{
    int v;

    for (v = IRQ_VEC_DEVICE_FIRST; v <= IRQ_VEC_DEVICE_LAST; v++)
        if (!vecs[v].registered)
            return v;
    return -1;
}

void irq_register(uint8_t vector, irq_handler_fn fn, void *ctx,
                  enum irq_trigger trig, unsigned int flags, const char *fmt, ...)
{
    struct irq_vec *e = &vecs[vector];
    va_list ap;

    e->fn = fn;
    e->ctx = ctx;
    e->trig = (uint8_t)trig;
    e->flags = (uint8_t)flags;
    va_start(ap, fmt);
    vsnprintf(e->src, sizeof(e->src), fmt, ap);
    va_end(ap);
    e->registered = true;
}

void irq_unregister(uint8_t vector)
{
    struct irq_vec *e = &vecs[vector];

    e->registered = false;
    e->fn = 0;
    e->ctx = 0;
    e->count = 0;
    e->level = 0;
}

void irq_handle(uint8_t vector)
{
    struct irq_vec *e = &vecs[vector];

    e->count++;
    if (vector == LAPIC_SPURIOUS_VECTOR)
        return;
    if (lapic_tmr(vector))
        e->level++;
    if (e->fn)
        e->fn(e->ctx);
    lapic_eoi();
}

uint32_t irq_count(uint8_t vector)
{
    return vecs[vector].count;
}

int irq_report(const char *mode)
{
    unsigned long total = 0, level = 0;
    int rc = 0;
    unsigned int v;

    for (v = 32; v < 256; v++) {
        const struct irq_vec *e = &vecs[v];
        const char *src = e->registered ? e->src :
                          v == LAPIC_SPURIOUS_VECTOR ? "lapic spurious" : "unexpected";

        if (e->count == 0 && (!e->registered || (e->flags & IRQ_F_HIDE_IDLE)))
            continue;
        cprintf("probe: irq vec=0x%02x count=%u level=%u src=%s\n", v, e->count,
                e->level, src);
        total += e->count;
        level += e->level;
    }
    cprintf("probe: irq mode=%s total=%lu level=%lu\n", mode, total, level);

    for (v = 32; v < 256; v++) {
        const struct irq_vec *e = &vecs[v];

        if (e->count == 0)
            continue;
        if (!e->registered && v != LAPIC_SPURIOUS_VECTOR) {
            cprintf("probe: irq check failed vec=0x%02x unexpected interrupt\n", v);
            rc = PROBE_EXIT_IRQ_CHECK;
        } else if (e->registered && e->trig == IRQ_EDGE && e->level != 0) {
            cprintf("probe: irq check failed vec=0x%02x expected edge, level=%u\n",
                    v, e->level);
            rc = PROBE_EXIT_IRQ_CHECK;
        } else if (e->registered && e->trig == IRQ_LEVEL && e->level != e->count) {
            cprintf("probe: irq check failed vec=0x%02x expected level, level=%u count=%u\n",
                    v, e->level, e->count);
            rc = PROBE_EXIT_IRQ_CHECK;
        }
    }
    return rc;
}
