/* guest/src/ioapic.c - I/O APIC redirection table access through IOREGSEL/IOWIN. */
#include "ioapic.h"
#include "mmio.h"

#define IOREGSEL        0x00
#define IOWIN           0x10
#define REG_VER         0x01
#define REG_REDTBL(p)   (0x10 + 2 * (p))

#define RTE_ACTIVE_LOW  (1u << 13)
#define RTE_LEVEL       (1u << 15)
#define RTE_MASKED      (1u << 16)

static uint32_t ioapic_read(uint32_t reg)
{
    mmio_write32(IOAPIC_BASE + IOREGSEL, reg);
    return mmio_read32(IOAPIC_BASE + IOWIN);
}

static void ioapic_write(uint32_t reg, uint32_t v)
{
    mmio_write32(IOAPIC_BASE + IOREGSEL, reg);
    mmio_write32(IOAPIC_BASE + IOWIN, v);
}

unsigned int ioapic_pins(void)
{
    return ((ioapic_read(REG_VER) >> 16) & 0xff) + 1;
}

int ioapic_route(unsigned int pin, uint8_t vector, bool level, bool active_low,
                 uint8_t dest)
{
    uint32_t lo = vector;   /* delivery mode fixed (000), physical destination */

    if (pin >= ioapic_pins())
        return -1;
    if (level)
        lo |= RTE_LEVEL;
    if (active_low)
        lo |= RTE_ACTIVE_LOW;
    ioapic_write(REG_REDTBL(pin), lo | RTE_MASKED);
    ioapic_write(REG_REDTBL(pin) + 1, (uint32_t)dest << 24);
    ioapic_write(REG_REDTBL(pin), lo);
    return 0;
}

void ioapic_mask(unsigned int pin)
{
    if (pin < ioapic_pins())
        ioapic_write(REG_REDTBL(pin), ioapic_read(REG_REDTBL(pin)) | RTE_MASKED);
}
