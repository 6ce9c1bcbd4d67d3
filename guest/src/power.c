/* guest/src/power.c - power off or reset through msivm's ACPI PM ports, the i8042 or a triple fault; wait for the power button. */
#include "power.h"

#include <stdint.h>

#include "cmdline.h"
#include "console.h"
#include "exit.h"
#include "io.h"
#include "ioapic.h"
#include "irq.h"
#include "lapic.h"
#include "wait.h"

#define ACPI_SLEEP_CONTROL 0x600
#define ACPI_SLEEP_STATUS  0x601
#define ACPI_RESET_REG     0x602
#define ACPI_RESET_VALUE   0x01
#define ACPI_SLP_S5_EN     ((5u << 2) | 0x20u)   /* SLP_TYP = 5 (msivm's \_S5), SLP_EN */
#define ACPI_WAK_STS       0x80u
#define I8042_COMMAND      0x64
#define I8042_PULSE_RESET  0xfe
#define UNMAPPED_ADDR      0x100000000ull   /* the probe maps [0, 4 GiB) */
#define GED_PIN            5                /* msivm's DSDT: GED0's interrupt, edge, active high */
#define BUTTON_WAKEUPS     6000u            /* watchdog ticks (10 ms): wait 60 s at most */

static const char *const power_names[] = { "off", "acpi-reset", "kbd-reset", "triple", "panic" };
#define PVPANIC_PORT       0x505            /* msivm's DSDT: PEVT (QEMU0001) */
#define PVPANIC_PANICKED   0x1u

/* An empty IDT: the next exception cannot be delivered (#GP, #DF, shutdown). */
static void triple_fault(void)
{
    struct __attribute__((packed)) { uint16_t limit; uint64_t base; } idtr = { 0, 0 };
    __asm__ volatile("lidt %0" : : "m"(idtr));
    (void)*(volatile uint32_t *)(uintptr_t)UNMAPPED_ADDR;  /* #PF, as the `fault` hook */
}

static const char *const button_names[] = { "off", "ignore" };

/* `key=` on the command line as an index into names: -1 when absent, -2
 * (after a "probe: bad <key> value" line) when it names none of them. */
static int pick_value(const char *cmdline, const char *key, const char *const *names, unsigned n)
{
    size_t len;
    const char *val = cmdline_get(cmdline, key, &len);
    unsigned char pick;
    if (!val)
        return -1;
    if (cmdline_pick_list(val, len, names, n, &pick, 1) != 1) {
        cprintf("probe: bad %s value\n", key);
        return -2;
    }
    return pick;
}

/* ACPI S5 through the sleep control register. */
static void power_off(void)
{
    outb(ACPI_SLEEP_STATUS, ACPI_WAK_STS);
    outb(ACPI_SLEEP_CONTROL, ACPI_SLP_S5_EN);
}
static volatile unsigned int presses;

static void on_button(void *ctx)
{
    (void)ctx;
    presses++;
}

static bool pressed(const void *ctx)
{
    (void)ctx;
    return presses != 0;
}

int probe_button(const char *cmdline)
{
    int pick = pick_value(cmdline, "button", button_names, 2);
    if (pick == -1)
        return 0;
    int v = irq_alloc_vector();
    if (pick < 0 || v < 0)
        return PROBE_EXIT_BAD_ARG;
    if (lapic_init())
        return PROBE_EXIT_LAPIC;
    irq_register((uint8_t)v, on_button, 0, IRQ_EDGE, 0, "ioapic pin %u (GED, power button)", GED_PIN);
    ioapic_route(GED_PIN, (uint8_t)v, false, false, 0);
    cprintf("probe: button=%s: waiting for the power button\n", button_names[pick]);
    console_flush();
    if (pick == 1) {
        for (;;)
            __asm__ volatile("sti; hlt; cli");
    }
    if (wait_until(pressed, 0, BUTTON_WAKEUPS)) {
        console_puts("probe: no power button press in 60 s\n");
        return PROBE_EXIT_POWER;
    }
    console_puts("probe: power button pressed: powering off\n");
    console_flush();
    power_off();
    console_puts("probe: power=off had no effect\n");
    return PROBE_EXIT_POWER;
}

int probe_power(const char *cmdline)
{
    int what = pick_value(cmdline, "power", power_names, 5);
    if (what == -1)
        return 0;
    if (what < 0)
        return PROBE_EXIT_BAD_ARG;
    cprintf("probe: power=%s\n", power_names[what]);
    console_flush();
    switch (what) {
    case 0:
        power_off();
        break;
    case 1:
        outb(ACPI_RESET_REG, ACPI_RESET_VALUE);
        break;
    case 2:
        outb(I8042_COMMAND, I8042_PULSE_RESET);
        break;
    case 4: /* as Linux's pvpanic driver: read what the device offers, report the panic */
        cprintf("probe: pvpanic offers 0x%x\n", inb(PVPANIC_PORT));
        console_flush();
        if (inb(PVPANIC_PORT) & PVPANIC_PANICKED)
            outb(PVPANIC_PORT, PVPANIC_PANICKED);
        break;
    default:
        triple_fault();
        break;
    }
    cprintf("probe: power=%s had no effect\n", power_names[what]);
    return PROBE_EXIT_POWER;
}
