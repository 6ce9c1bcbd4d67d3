/* guest/src/idt.c - IDT construction and the first-level interrupt/exception dispatcher. */
#include "idt.h"
#include "console.h"
#include "cpu.h"
#include "exit.h"
#include "irq.h"

#define IDT_BYTES       (256 * 16)
#define VEC_PAGE_FAULT  14

#define ISR_STUB_SIZE   16
#define ISR_TIMED_SIZE  32
#define ISR_NTIMED      4

/* 256 gates, built at link time in isr.S (writable: see idt_time_vector). */
extern char idt_table[IDT_BYTES];
extern char isr_stubs[], isr_timed_stubs[];
extern volatile uint64_t isr_timed_tsc[ISR_NTIMED];
extern uint64_t isr_timed_target[ISR_NTIMED];

/* Vector + 1 of each timed stub, 0 = free. */
static uint16_t timed_vec[ISR_NTIMED];

/* Point gate `vector` at `handler` (offset 31:0; the image is below 4 GiB).
 * Done with IF=0 so the gate is never half-written when the vector fires;
 * the IDT is reloaded afterwards in case an emulator caches gates. */
static void set_gate(uint8_t vector, uintptr_t handler)
{
    volatile uint16_t *g = (volatile uint16_t *)(idt_table + 16 * vector);
    uint64_t flags;

    __asm__ volatile("pushfq; popq %0; cli" : "=r"(flags) : : "memory");
    g[0] = (uint16_t)handler;
    g[3] = (uint16_t)(handler >> 16);
    idt_init();
    if (flags & 0x200)
        irq_enable();
}

int idt_time_vector(uint8_t vector)
{
    unsigned int k, free = ISR_NTIMED;

    for (k = 0; k < ISR_NTIMED; k++) {
        if (timed_vec[k] == vector + 1u)
            return 0;
        if (!timed_vec[k] && free == ISR_NTIMED)
            free = k;
    }
    if (free == ISR_NTIMED)
        return -1;
    timed_vec[free] = (uint16_t)(vector + 1u);
    isr_timed_tsc[free] = 0;
    isr_timed_target[free] = (uintptr_t)(isr_stubs + ISR_STUB_SIZE * vector);
    set_gate(vector, (uintptr_t)(isr_timed_stubs + ISR_TIMED_SIZE * free));
    return 0;
}

void idt_untime_vector(uint8_t vector)
{
    unsigned int k;

    for (k = 0; k < ISR_NTIMED; k++) {
        if (timed_vec[k] == vector + 1u) {
            set_gate(vector, (uintptr_t)(isr_stubs + ISR_STUB_SIZE * vector));
            timed_vec[k] = 0;
        }
    }
}

uint64_t idt_entry_tsc(uint8_t vector)
{
    unsigned int k;

    for (k = 0; k < ISR_NTIMED; k++)
        if (timed_vec[k] == vector + 1u)
            return isr_timed_tsc[k];
    return 0;
}

void idt_init(void)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) desc = { IDT_BYTES - 1, (uintptr_t)idt_table };

    __asm__ volatile("lidt %0" : : "m"(desc) : "memory");
}

void isr_dispatch(uint64_t vector, const uint64_t *frame)
{
    if (vector < 32) {
        cprintf("probe: exception %u rip=0x%lx\n", (unsigned int)vector,
                (unsigned long)frame[1]);
        if (vector == VEC_PAGE_FAULT)
            cprintf("probe: page fault cr2=0x%lx error=0x%lx\n",
                    (unsigned long)read_cr2(), (unsigned long)frame[0]);
        probe_exit(PROBE_EXIT_EXCEPTION);
    }
    irq_handle((uint8_t)vector);
}
