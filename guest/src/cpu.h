/* guest/src/cpu.h - privileged CPU helpers: MSRs, interrupt flag, halt, barriers. */
#ifndef PROBE_CPU_H
#define PROBE_CPU_H

#include <stdint.h>

/* Compiler barrier: orders memory accesses as written (x86 is TSO, so this is
 * enough between plain RAM accesses shared with a device and an MMIO/port
 * access, which is itself a VM exit). */
static inline void barrier(void)
{
    __asm__ volatile("" : : : "memory");
}

static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
                     : "memory");
}

static inline void irq_disable(void)
{
    __asm__ volatile("cli" : : : "memory");
}

static inline void irq_enable(void)
{
    __asm__ volatile("sti" : : : "memory");
}

/* Enable interrupts and halt atomically (the STI shadow covers HLT): an
 * interrupt that became pending while IF was 0 wakes the HLT. Returns after
 * the interrupt handler ran, with IF=1. Counted in cpu_halts (lab.c), which the
 * lab's work window reports. */
static inline void irq_enable_and_halt(void)
{
    extern uint64_t cpu_halts;

    cpu_halts++;
    __asm__ volatile("sti; hlt" : : : "memory");
}

static inline uint64_t read_cr2(void)
{
    uint64_t v;
    __asm__ volatile("mov %%cr2, %0" : "=r"(v));
    return v;
}

#endif
