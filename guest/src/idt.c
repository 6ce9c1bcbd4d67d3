/* guest/src/idt.c - IDT construction and the first-level interrupt/exception dispatcher. */
#include "idt.h"
#include "console.h"
#include "cpu.h"
#include "exit.h"
#include "irq.h"

#define IDT_BYTES       (256 * 16)
#define VEC_PAGE_FAULT  14

/* 256 gates, built at link time in isr.S. */
extern const char idt_table[IDT_BYTES];

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
