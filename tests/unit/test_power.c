/* Unit tests for the power devices: ACPI sleep control/status and reset registers, the i8042 reset pulse. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "devices/acpi_pm.h"
#include "devices/i8042.h"

struct power_log {
	unsigned off, reset;
	const char *why;
};

static void record(void *opaque, enum power_request what, const char *why)
{
	struct power_log *l = opaque;
	if (what == POWER_OFF)
		l->off++;
	else
		l->reset++;
	l->why = why;
}

static void pm_write(struct acpi_pm *pm, uint64_t offset, uint8_t v)
{
	acpi_pm_ops.write(pm, offset, &v, 1);
}

static uint8_t pm_read(struct acpi_pm *pm, uint64_t offset)
{
	uint8_t v = 0xee;
	acpi_pm_ops.read(pm, offset, &v, 1);
	return v;
}

/* What Linux's acpi_hw_extended_sleep(S5) writes: clear WAK_STS, then SLP_TYP|SLP_EN. */
static void test_s5_sleep_control_powers_off(void **state)
{
	struct power_log log = { 0 };
	struct acpi_pm pm = { .sink = { record, &log } };
	pm_write(&pm, ACPI_PM_SLEEP_STATUS, ACPI_WAK_STS);
	pm_write(&pm, ACPI_PM_SLEEP_CONTROL, (ACPI_SLP_TYP_S5 << ACPI_SLP_TYP_SHIFT) | ACPI_SLP_EN);
	assert_int_equal(log.off, 1);
	assert_int_equal(log.reset, 0);
	assert_non_null(strstr(log.why, "S5"));
}

static void test_sleep_type_without_enable_does_nothing(void **state)
{
	struct power_log log = { 0 };
	struct acpi_pm pm = { .sink = { record, &log } };
	pm_write(&pm, ACPI_PM_SLEEP_CONTROL, ACPI_SLP_TYP_S5 << ACPI_SLP_TYP_SHIFT);
	assert_int_equal(log.off + log.reset, 0);
	assert_int_equal(pm.ignored, 1);
}

/* S3 is not offered: the guest is woken at once (WAK_STS) instead of spinning. */
static void test_other_sleep_state_wakes_at_once(void **state)
{
	struct power_log log = { 0 };
	struct acpi_pm pm = { .sink = { record, &log } };
	assert_int_equal(pm_read(&pm, ACPI_PM_SLEEP_STATUS), 0);
	pm_write(&pm, ACPI_PM_SLEEP_CONTROL, (3 << ACPI_SLP_TYP_SHIFT) | ACPI_SLP_EN);
	assert_int_equal(log.off + log.reset, 0);
	assert_int_equal(pm_read(&pm, ACPI_PM_SLEEP_STATUS), ACPI_WAK_STS);
	/* Write-1-to-clear; writing 0 leaves it. */
	pm_write(&pm, ACPI_PM_SLEEP_STATUS, 0);
	assert_int_equal(pm_read(&pm, ACPI_PM_SLEEP_STATUS), ACPI_WAK_STS);
	pm_write(&pm, ACPI_PM_SLEEP_STATUS, ACPI_WAK_STS);
	assert_int_equal(pm_read(&pm, ACPI_PM_SLEEP_STATUS), 0);
}

static void test_reset_register_needs_reset_value(void **state)
{
	struct power_log log = { 0 };
	struct acpi_pm pm = { .sink = { record, &log } };
	pm_write(&pm, ACPI_PM_RESET, 0x06);
	assert_int_equal(log.reset, 0);
	assert_int_equal(pm.ignored, 1);
	pm_write(&pm, ACPI_PM_RESET, ACPI_RESET_VALUE);
	assert_int_equal(log.reset, 1);
	assert_int_equal(log.off, 0);
	assert_non_null(strstr(log.why, "reset register"));
}

static void test_wide_access_uses_low_byte_and_reads_zero(void **state)
{
	struct power_log log = { 0 };
	struct acpi_pm pm = { .sink = { record, &log } };
	uint32_t v = 0xffffff00u | ACPI_RESET_VALUE;
	acpi_pm_ops.write(&pm, ACPI_PM_RESET, &v, 1);
	assert_int_equal(log.reset, 1);
	uint32_t r = 0xdeadbeef;
	acpi_pm_ops.read(&pm, ACPI_PM_SLEEP_CONTROL, &r, 2);
	assert_int_equal(r, 0xdead0000u);
}

static void kbc_cmd(struct i8042 *k, uint8_t v)
{
	i8042_command_ops.write(k, 0, &v, 1);
}

/* Linux's reboot=k: wait for the input buffer (status bit 1), then 0xFE. */
static void test_i8042_status_idle_and_pulse_resets(void **state)
{
	struct power_log log = { 0 };
	struct i8042 k = { .sink = { record, &log } };
	uint8_t st = 0xff;
	i8042_command_ops.read(&k, 0, &st, 1);
	assert_int_equal(st & 0x02, 0);
	kbc_cmd(&k, 0xfe);
	assert_int_equal(log.reset, 1);
	assert_non_null(strstr(log.why, "i8042"));
}

static void test_i8042_other_commands_ignored(void **state)
{
	struct power_log log = { 0 };
	struct i8042 k = { .sink = { record, &log } };
	kbc_cmd(&k, 0xff);  /* pulses no line */
	kbc_cmd(&k, 0xfd);  /* pulses bit 1 (A20), not reset */
	kbc_cmd(&k, 0xd1);  /* write output port: not a pulse */
	kbc_cmd(&k, 0xae);
	assert_null(i8042_data_ops.write); /* 0xFE on the data port is data: dropped by the bus */
	assert_int_equal(log.reset + log.off, 0);
	assert_int_equal(k.ignored, 4);
	kbc_cmd(&k, 0xf0);  /* pulses every line, reset included */
	assert_int_equal(log.reset, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_s5_sleep_control_powers_off),
		cmocka_unit_test(test_sleep_type_without_enable_does_nothing),
		cmocka_unit_test(test_other_sleep_state_wakes_at_once),
		cmocka_unit_test(test_reset_register_needs_reset_value),
		cmocka_unit_test(test_wide_access_uses_low_byte_and_reads_zero),
		cmocka_unit_test(test_i8042_status_idle_and_pulse_resets),
		cmocka_unit_test(test_i8042_other_commands_ignored),
	};
	return cmocka_run_group_tests_name("power", tests, NULL, NULL);
}
