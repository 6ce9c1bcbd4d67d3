/* guest/src/idt.c - IDT construction and the first-level interrupt/exception dispatcher. */
#include "idt.h"
#include "console.h"
#include "cpu.h"
#include "exit.h"
#include "irq.h"

#define IDT_VECTORS     256
#define ISR_STUB_SIZE   16      /* must match isr.S */
#define SEL_CODE64      0x08    /* entry.S GDT */
#define GATE_INTR_DPL0  0x8eull /* present, DPL 0, 64-bit interrupt gate */
#define VEC_PAGE_FAULT  14

struct idt_gate {
    uint64_t lo;    /* offset 15:0, selector, IST, type/attr, offset 31:16 */
    uint64_t hi;    /* offset 63:32, reserved */
};

static struct idt_gate idt[IDT_VECTORS] __attribute__((aligned(16)));

extern const char isr_stubs[];

void idt_init(void)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) desc = { sizeof(idt) - 1, (uintptr_t)idt };
    uint64_t a = (uintptr_t)isr_stubs;
    unsigned int v;

    /* About 8 emulated instructions per gate. */
    for (v = 0; v < IDT_VECTORS; v++, a += ISR_STUB_SIZE) {
        idt[v].lo = (a & 0xffff) | ((uint64_t)SEL_CODE64 << 16) |
                    (GATE_INTR_DPL0 << 40) | ((a & 0xffff0000ull) << 32);
        idt[v].hi = a >> 32;
    }
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
