/* guest/src/mmio.h - volatile MMIO accessors (all MMIO lives in the identity-mapped, uncached 3-4 GiB hole). */
#ifndef PROBE_MMIO_H
#define PROBE_MMIO_H

#include <stdint.h>

/* Each access is a single mov of the given width; the "memory" clobber keeps
 * the compiler from reordering RAM accesses around it. */
static inline uint8_t mmio_read8(uintptr_t a)
{
    uint8_t v;
    __asm__ volatile("movb %1, %0" : "=q"(v) : "m"(*(volatile uint8_t *)a) : "memory");
    return v;
}

static inline uint16_t mmio_read16(uintptr_t a)
{
    uint16_t v;
    __asm__ volatile("movw %1, %0" : "=r"(v) : "m"(*(volatile uint16_t *)a) : "memory");
    return v;
}

static inline uint32_t mmio_read32(uintptr_t a)
{
    uint32_t v;
    __asm__ volatile("movl %1, %0" : "=r"(v) : "m"(*(volatile uint32_t *)a) : "memory");
    return v;
}

static inline void mmio_write8(uintptr_t a, uint8_t v)
{
    __asm__ volatile("movb %1, %0" : "=m"(*(volatile uint8_t *)a) : "q"(v) : "memory");
}

static inline void mmio_write16(uintptr_t a, uint16_t v)
{
    __asm__ volatile("movw %1, %0" : "=m"(*(volatile uint16_t *)a) : "r"(v) : "memory");
}

static inline void mmio_write32(uintptr_t a, uint32_t v)
{
    __asm__ volatile("movl %1, %0" : "=m"(*(volatile uint32_t *)a) : "r"(v) : "memory");
}

/* 64-bit register as two 32-bit writes, low half first (virtio common cfg
 * allows this for its 64-bit queue address fields). */
static inline void mmio_write64_split(uintptr_t a, uint64_t v)
{
    mmio_write32(a, (uint32_t)v);
    mmio_write32(a + 4, (uint32_t)(v >> 32));
}

#endif
