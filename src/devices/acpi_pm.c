/* ACPI PM registers: guest sleep-control/reset writes -> power requests to the VM. */
#include "devices/acpi_pm.h"

#include <string.h>

#include "util/log.h"

static void acpi_pm_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	struct acpi_pm *pm = opaque;
	memset(data, 0, len);
	if (offset == ACPI_PM_SLEEP_STATUS)
		((uint8_t *)data)[0] = atomic_load(&pm->sleep_status);
}

static void sleep_control_write(struct acpi_pm *pm, uint8_t v)
{
	if (!(v & ACPI_SLP_EN)) {
		atomic_fetch_add(&pm->ignored, 1);
		return;
	}
	unsigned type = (v & ACPI_SLP_TYP_MASK) >> ACPI_SLP_TYP_SHIFT;
	if (type == ACPI_SLP_TYP_S5) {
		pm->sink.request(pm->sink.opaque, POWER_OFF, "ACPI S5 (sleep control register)");
		return;
	}
	/* Only \_S5 is announced; wake the guest at once from anything else. */
	log_warn("acpi-pm: guest asked for sleep type %u, which msivm does not offer; waking it", type);
	atomic_fetch_add(&pm->ignored, 1);
	atomic_fetch_or(&pm->sleep_status, ACPI_WAK_STS);
}

static void acpi_pm_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct acpi_pm *pm = opaque;
	uint8_t v = ((const uint8_t *)data)[0];
	switch (offset) {
	case ACPI_PM_SLEEP_CONTROL:
		sleep_control_write(pm, v);
		break;
	case ACPI_PM_SLEEP_STATUS:
		atomic_fetch_and(&pm->sleep_status, (uint8_t)~(v & ACPI_WAK_STS));
		break;
	case ACPI_PM_RESET:
		if (v == ACPI_RESET_VALUE) {
			pm->sink.request(pm->sink.opaque, POWER_RESET, "ACPI reset register");
			return;
		}
		atomic_fetch_add(&pm->ignored, 1);
		break;
	}
}

const struct bus_ops acpi_pm_ops = {
	.read = acpi_pm_read,
	.write = acpi_pm_write,
};
