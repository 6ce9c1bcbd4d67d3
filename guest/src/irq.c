/* guest/src/irq.c - vector registry, per-vector accounting and the final interrupt table. */
#include "irq.h"
#include "console.h"
#include "fmt.h"
#include "lapic.h"
#include "lib.h"

#include <stdarg.h>

#define SRC_LEN     48
#define MAX_SLOTS   48      /* distinct vectors registered or seen */
#define MAX_DEVS    8       /* devices in the per-device summary */

/* One slot per vector that was registered or fired; .bss stays small
 * because entry.S clears it with emulated instructions. */
struct irq_slot {
    irq_handler_fn fn;
    void *ctx;
    const char *owner;
    volatile uint32_t count;
    volatile uint32_t level;
    uint8_t vector;
    bool registered;
    uint8_t trig;
    uint8_t flags;
    char src[SRC_LEN];
};

static struct irq_slot slots[MAX_SLOTS];
static unsigned int nslots;
static uint8_t slot_of[256];        /* slot index + 1, 0 = none */
static volatile uint32_t overflow;  /* interrupts on vectors without a slot */
static struct {
    const char *name, *mode;
} devs[MAX_DEVS];
static unsigned int ndevs;

/* Slot of `vector`, created on first use; NULL when all slots are taken. */
static struct irq_slot *slot_get(uint8_t vector)
{
    struct irq_slot *s;

    if (slot_of[vector])
        return &slots[slot_of[vector] - 1];
    if (nslots == MAX_SLOTS)
        return 0;
    s = &slots[nslots++];
    s->vector = vector;
    slot_of[vector] = (uint8_t)nslots;
    return s;
}

int irq_alloc_vector(void)
{
    int v;

    for (v = IRQ_VEC_DEVICE_FIRST; v <= IRQ_VEC_DEVICE_LAST; v++)
        if (!slot_of[v] || !slots[slot_of[v] - 1].registered)
            return v;
    return -1;
}

void irq_register(uint8_t vector, irq_handler_fn fn, void *ctx,
                  enum irq_trigger trig, unsigned int flags, const char *fmt, ...)
{
    struct irq_slot *s = slot_get(vector);
    va_list ap;

    if (!s)
        return;
    s->fn = fn;
    s->ctx = ctx;
    s->trig = (uint8_t)trig;
    s->flags = (uint8_t)flags;
    va_start(ap, fmt);
    vsnprintf(s->src, sizeof(s->src), fmt, ap);
    va_end(ap);
    s->registered = true;
}

void irq_unregister(uint8_t vector)
{
    struct irq_slot *s;

    if (!slot_of[vector])
        return;
    s = &slots[slot_of[vector] - 1];
    s->registered = false;
    s->fn = 0;
    s->ctx = 0;
    s->owner = 0;
    s->flags = IRQ_F_HIDE_IDLE;     /* listed again only if it fires */
    s->count = 0;
    s->level = 0;
}

void irq_set_owner(uint8_t vector, const char *owner)
{
    if (slot_of[vector])
        slots[slot_of[vector] - 1].owner = owner;
}

void irq_device(const char *name, const char *mode)
{
    unsigned int i;

    for (i = 0; i < ndevs && strcmp(devs[i].name, name); i++)
        ;
    if (i == MAX_DEVS)
        return;
    devs[i].name = name;
    devs[i].mode = mode;
    if (i == ndevs)
        ndevs++;
}

void irq_handle(uint8_t vector)
{
    struct irq_slot *s = slot_get(vector);

    if (!s) {
        overflow++;
    } else {
        s->count++;
        if (vector == LAPIC_SPURIOUS_VECTOR)
            return;
        if (lapic_tmr(vector))
            s->level++;
        if (s->fn)
            s->fn(s->ctx);
    }
    if (vector != LAPIC_SPURIOUS_VECTOR)
        lapic_eoi();
}

uint32_t irq_count(uint8_t vector)
{
    return slot_of[vector] ? slots[slot_of[vector] - 1].count : 0;
}

uint64_t irq_device_count(void)
{
    uint64_t n = 0;
    unsigned int i;

    for (i = 0; i < nslots; i++)
        if (slots[i].registered && slots[i].owner)
            n += slots[i].count;
    return n;
}

/* Check one fired slot against its registration; prints and returns
 * PROBE_EXIT_IRQ_CHECK on mismatch. */
static int check_slot(const struct irq_slot *s)
{
    if (s->count == 0 || s->vector == LAPIC_SPURIOUS_VECTOR)
        return 0;
    if (!s->registered) {
        cprintf("probe: irq check failed vec=0x%02x unexpected interrupt\n", s->vector);
    } else if (s->trig == IRQ_EDGE && s->level != 0) {
        cprintf("probe: irq check failed vec=0x%02x expected edge, level=%u\n",
                s->vector, s->level);
    } else if (s->trig == IRQ_LEVEL && s->level != s->count) {
        cprintf("probe: irq check failed vec=0x%02x expected level, level=%u count=%u\n",
                s->vector, s->level, s->count);
    } else {
        return 0;
    }
    return PROBE_EXIT_IRQ_CHECK;
}

int irq_report(const char *mode)
{
    unsigned long total = overflow, level = 0;
    unsigned int i, j, done = 0;
    int rc = 0;

    /* Slots in vector order: repeated minimum search, nslots is small. */
    for (i = 0; i < nslots; i++) {
        const struct irq_slot *s = 0;

        for (j = 0; j < nslots; j++)
            if (slots[j].vector >= done && (!s || slots[j].vector < s->vector))
                s = &slots[j];
        done = s->vector + 1u;
        if (s->count == 0 && (!s->registered || (s->flags & IRQ_F_HIDE_IDLE)))
            continue;
        cprintf("probe: irq vec=0x%02x count=%u level=%u src=%s\n", s->vector, s->count,
                s->level, s->registered ? s->src :
                s->vector == LAPIC_SPURIOUS_VECTOR ? "lapic spurious" : "unexpected");
        total += s->count;
        level += s->level;
    }
    if (overflow)
        cprintf("probe: irq vec=other count=%u level=0 src=unexpected\n", overflow);
    for (i = 0; i < ndevs; i++) {
        unsigned long dt = 0, dl = 0;

        for (j = 0; j < nslots; j++) {
            if (slots[j].registered && slots[j].owner && !strcmp(slots[j].owner, devs[i].name)) {
                dt += slots[j].count;
                dl += slots[j].level;
            }
        }
        cprintf("probe: irq dev=%s mode=%s total=%lu level=%lu\n", devs[i].name,
                devs[i].mode, dt, dl);
    }
    cprintf("probe: irq mode=%s total=%lu level=%lu\n", mode, total, level);

    for (i = 0; i < nslots; i++)
        if (check_slot(&slots[i]))
            rc = PROBE_EXIT_IRQ_CHECK;
    if (overflow) {
        cprintf("probe: irq check failed: %u interrupts on untracked vectors\n", overflow);
        rc = PROBE_EXIT_IRQ_CHECK;
    }
    return rc;
}
