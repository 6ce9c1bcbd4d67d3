/* guest/src/power.c - power off or reset through msivm's ACPI PM ports, the i8042 or a triple fault. */
#include "power.h"

#include <stdint.h>

#include "cmdline.h"
#include "console.h"
#include "exit.h"
#include "io.h"

#define ACPI_SLEEP_CONTROL 0x600
#define ACPI_SLEEP_STATUS  0x601
#define ACPI_RESET_REG     0x602
#define ACPI_RESET_VALUE   0x01
#define ACPI_SLP_S5_EN     ((5u << 2) | 0x20u)   /* SLP_TYP = 5 (msivm's \_S5), SLP_EN */
#define ACPI_WAK_STS       0x80u
#define I8042_COMMAND      0x64
#define I8042_PULSE_RESET  0xfe
#define UNMAPPED_ADDR      0x100000000ull   /* the probe maps [0, 4 GiB) */

static const char *const power_names[] = { "off", "acpi-reset", "kbd-reset", "triple" };

/* An empty IDT: the next exception cannot be delivered (#GP, #DF, shutdown). */
static void triple_fault(void)
{
    struct __attribute__((packed)) { uint16_t limit; uint64_t base; } idtr = { 0, 0 };
    __asm__ volatile("lidt %0" : : "m"(idtr));
    (void)*(volatile uint32_t *)(uintptr_t)UNMAPPED_ADDR;  /* #PF, as the `fault` hook */
}

int probe_power(const char *cmdline)
{
    size_t len;
    const char *val = cmdline_get(cmdline, "power", &len);
    if (!val)
        return 0;
    unsigned char pick;
    int what = cmdline_pick_list(val, len, power_names, 4, &pick, 1) == 1 ? pick : -1;
    if (what < 0) {
        console_puts("probe: bad power value\n");
        return PROBE_EXIT_BAD_ARG;
    }
    cprintf("probe: power=%s\n", power_names[what]);
    console_flush();
    switch (what) {
    case 0:
        outb(ACPI_SLEEP_STATUS, ACPI_WAK_STS);
        outb(ACPI_SLEEP_CONTROL, ACPI_SLP_S5_EN);
        break;
    case 1:
        outb(ACPI_RESET_REG, ACPI_RESET_VALUE);
        break;
    case 2:
        outb(I8042_COMMAND, I8042_PULSE_RESET);
        break;
    default:
        triple_fault();
        break;
    }
    cprintf("probe: power=%s had no effect\n", power_names[what]);
    return PROBE_EXIT_POWER;
}
