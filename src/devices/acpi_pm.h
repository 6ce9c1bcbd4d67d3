/* ACPI power management registers of the hardware-reduced platform: sleep control/status and reset. */
#ifndef MSIVM_DEVICES_ACPI_PM_H
#define MSIVM_DEVICES_ACPI_PM_H

#include <stdatomic.h>
#include <stdint.h>

#include "bus/bus.h"
#include "devices/power.h"

/* Three byte-wide I/O ports, described to the guest by the FADT's
 * SLEEP_CONTROL_REG, SLEEP_STATUS_REG and RESET_REG (ACPI 6.3, 4.8.3.7 and
 * 4.8.3.6) and by the DSDT's \_S5 object. */
#define ACPI_PM_PORT          0x600
#define ACPI_PM_SIZE          3
#define ACPI_PM_SLEEP_CONTROL 0       /* offsets from ACPI_PM_PORT */
#define ACPI_PM_SLEEP_STATUS  1
#define ACPI_PM_RESET         2

#define ACPI_SLP_TYP_S5       5       /* the SLP_TYP value \_S5 announces */
#define ACPI_SLP_TYP_SHIFT    2       /* sleep control: SLP_TYP in bits 2-4 */
#define ACPI_SLP_TYP_MASK     0x1cu
#define ACPI_SLP_EN           0x20u   /* sleep control: enter the state */
#define ACPI_WAK_STS          0x80u   /* sleep status: the platform woke (write 1 to clear) */
#define ACPI_RESET_VALUE      0x01u   /* FADT RESET_VALUE */

struct acpi_pm {
	struct power_sink sink;
	_Atomic uint8_t sleep_status;   /* WAK_STS */
	_Atomic uint64_t ignored;       /* writes that asked for nothing msivm does */
};

/* Handlers for the ACPI_PM_SIZE ports at ACPI_PM_PORT. A sleep-control
 * write with SLP_EN and SLP_TYP = S5 sends POWER_OFF; SLP_EN with any other
 * type (a sleep state msivm does not offer) sets WAK_STS at once so a guest
 * waiting for the wake does not spin forever. A write of ACPI_RESET_VALUE
 * to the reset port sends POWER_RESET. Sleep status reads WAK_STS and a
 * write of 1 clears it. Other reads return 0; other writes are counted in
 * `ignored` and dropped. Accesses wider than a byte use the low byte. */
extern const struct bus_ops acpi_pm_ops;

#endif
