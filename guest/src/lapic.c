/* guest/src/lapic.c - local APIC in xAPIC mode (MMIO), as seen by the BSP. */
#include "lapic.h"
#include "console.h"
#include "cpu.h"
#include "io.h"
#include "mmio.h"

#define MSR_APIC_BASE       0x1b
#define APIC_BASE_EXTD      (1ull << 10)
#define APIC_BASE_EN        (1ull << 11)
#define APIC_BASE_ADDR_MASK 0x000ffffffffff000ull

#define REG_ID          0x020
#define REG_TPR         0x080
#define REG_EOI         0x0b0
#define REG_SVR         0x0f0
#define REG_TMR         0x180   /* 8 x 32-bit, 16 bytes apart */
#define REG_IRR         0x200   /* 8 x 32-bit, 16 bytes apart */
#define REG_ICR_LO      0x300
#define REG_ICR_HI      0x310
#define REG_LVT_TIMER   0x320
#define REG_LVT_LINT0   0x350
#define REG_LVT_LINT1   0x360
#define REG_LVT_ERROR   0x370
#define REG_TIMER_INIT  0x380
#define REG_TIMER_DIV   0x3e0

#define SVR_ENABLE      0x100
#define LVT_MASKED      0x10000
#define LVT_PERIODIC    0x20000
#define TIMER_DIV_16    0x3
#define ICR_SELF        0x40000 /* destination shorthand 01: self */
#define ICR_DM_INIT     0x500
#define ICR_DM_STARTUP  0x600
#define ICR_BUSY        0x1000  /* delivery status: send pending */
#define ICR_ASSERT      0x4000
#define ICR_LEVEL       0x8000
#define ICR_IDLE_POLLS  1000

static bool ready;

static inline uint32_t lapic_read(uint32_t reg)
{
    return mmio_read32(LAPIC_BASE + reg);
}

static inline void lapic_write(uint32_t reg, uint32_t v)
{
    mmio_write32(LAPIC_BASE + reg, v);
}

int lapic_init(void)
{
    uint64_t msr;

    if (ready)
        return 0;
    msr = rdmsr(MSR_APIC_BASE);
    if ((msr & APIC_BASE_ADDR_MASK) != LAPIC_BASE || (msr & APIC_BASE_EXTD)) {
        cprintf("probe: lapic unusable, IA32_APIC_BASE=0x%lx\n", (unsigned long)msr);
        return -1;
    }
    if (!(msr & APIC_BASE_EN))
        wrmsr(MSR_APIC_BASE, msr | APIC_BASE_EN);

    lapic_write(REG_TPR, 0);
    lapic_write(REG_LVT_TIMER, LVT_MASKED);
    lapic_write(REG_LVT_LINT0, LVT_MASKED);
    lapic_write(REG_LVT_LINT1, LVT_MASKED);
    lapic_write(REG_LVT_ERROR, LVT_MASKED);
    lapic_write(REG_SVR, SVR_ENABLE | LAPIC_SPURIOUS_VECTOR);
    ready = true;
    return 0;
}

bool lapic_ready(void)
{
    return ready;
}

uint8_t lapic_id(void)
{
    return (uint8_t)(lapic_read(REG_ID) >> 24);
}

void lapic_eoi(void)
{
    lapic_write(REG_EOI, 0);
}

bool lapic_irr(uint8_t vector)
{
    return (lapic_read(REG_IRR + (vector >> 5) * 0x10) >> (vector & 31)) & 1;
}

bool lapic_tmr(uint8_t vector)
{
    return (lapic_read(REG_TMR + (vector >> 5) * 0x10) >> (vector & 31)) & 1;
}

void lapic_self_ipi(uint8_t vector)
{
    lapic_write(REG_ICR_LO, ICR_SELF | vector);     /* fixed, edge, physical */
}

void lapic_ap_enable(void)
{
    lapic_write(REG_SVR, SVR_ENABLE | LAPIC_SPURIOUS_VECTOR);
}

/* Physical destination `dest`: wait (bounded) for the previous IPI to leave,
 * then ICR high (destination) and low (command; the write sends). */
static void icr_send(uint8_t dest, uint32_t lo)
{
    unsigned int n;

    for (n = 0; n < ICR_IDLE_POLLS && (lapic_read(REG_ICR_LO) & ICR_BUSY); n++)
        cpu_relax();
    lapic_write(REG_ICR_HI, (uint32_t)dest << 24);
    lapic_write(REG_ICR_LO, lo);
}

void lapic_send_init(uint8_t dest)
{
    icr_send(dest, ICR_LEVEL | ICR_ASSERT | ICR_DM_INIT);
    icr_send(dest, ICR_LEVEL | ICR_DM_INIT);            /* de-assert, as Linux */
}

void lapic_send_sipi(uint8_t dest, uint8_t vector)
{
    icr_send(dest, ICR_DM_STARTUP | vector);
}

static bool timer_running;

void lapic_timer_start(uint8_t vector, uint32_t count)
{
    timer_running = true;
    lapic_write(REG_TIMER_DIV, TIMER_DIV_16);
    lapic_write(REG_LVT_TIMER, LVT_PERIODIC | vector);
    lapic_write(REG_TIMER_INIT, count);
}

bool lapic_timer_running(void)
{
    return timer_running;
}

void lapic_timer_stop(void)
{
    timer_running = false;
    lapic_write(REG_TIMER_INIT, 0);
    lapic_write(REG_LVT_TIMER, LVT_MASKED);
}
