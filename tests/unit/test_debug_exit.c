/* Unit tests for the debug-exit port: a write ends the VM with its low byte. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "bus/bus.h"
#include "devices/debug_exit.h"

struct exit_log {
	unsigned calls;
	int status;
};

static void record_exit(void *opaque, int status)
{
	struct exit_log *l = opaque;
	l->calls++;
	l->status = status;
}

static void test_one_byte_write_requests_exit_with_value(void **state)
{
	struct exit_log log = { .status = -1 };
	struct debug_exit d = { .request_exit = record_exit, .opaque = &log };
	uint8_t v = 0x2a;
	debug_exit_ops.write(&d, 0, &v, 1);
	assert_int_equal(log.calls, 1);
	assert_int_equal(log.status, 0x2a);
}

static void test_zero_is_a_status_of_its_own(void **state)
{
	struct exit_log log = { .status = -1 };
	struct debug_exit d = { .request_exit = record_exit, .opaque = &log };
	uint8_t v = 0;
	debug_exit_ops.write(&d, 0, &v, 1);
	assert_int_equal(log.calls, 1);
	assert_int_equal(log.status, 0); /* not QEMU's (0 << 1) | 1 */
}

static void test_four_byte_write_uses_low_byte(void **state)
{
	struct exit_log log = { .status = -1 };
	struct debug_exit d = { .request_exit = record_exit, .opaque = &log };
	uint32_t v = 0x123456ff;
	debug_exit_ops.write(&d, 0, &v, 4);
	assert_int_equal(log.calls, 1);
	assert_int_equal(log.status, 0xff); /* 255, not -1 */

	v = 0xabcdef03;
	debug_exit_ops.write(&d, 0, &v, 4);
	assert_int_equal(log.calls, 2);
	assert_int_equal(log.status, 3);
}

/* --testdev: QEMU's isa-debug-exit status, (V << 1) | 1, as kvm-unit-tests' runner expects. */
static void test_qemu_status(void **state)
{
	struct exit_log log = { .status = -1 };
	struct debug_exit d = { .request_exit = record_exit, .opaque = &log, .qemu_status = true };
	uint32_t v = 0;
	debug_exit_ops.write(&d, 0, &v, 4);
	assert_int_equal(log.status, 1);   /* kvm-unit-tests: all passed */
	v = 1;
	debug_exit_ops.write(&d, 0, &v, 4);
	assert_int_equal(log.status, 3);   /* a failure */
	v = 0x7f;
	debug_exit_ops.write(&d, 0, &v, 1);
	assert_int_equal(log.status, 0xff);
	v = 0x180;                          /* low byte 0x80: (0x80 << 1 | 1) & 0xff, as QEMU's exit() */
	debug_exit_ops.write(&d, 0, &v, 2);
	assert_int_equal(log.status, 1);
	assert_int_equal(log.calls, 4);
}

static void test_two_byte_write_uses_low_byte(void **state)
{
	struct exit_log log = { .status = -1 };
	struct debug_exit d = { .request_exit = record_exit, .opaque = &log };
	uint16_t v = 0x0107;
	debug_exit_ops.write(&d, 0, &v, 2);
	assert_int_equal(log.calls, 1);
	assert_int_equal(log.status, 7);
}

static void test_write_through_bus_at_port(void **state)
{
	struct exit_log log = { .status = -1 };
	struct debug_exit d = { .request_exit = record_exit, .opaque = &log };
	struct bus bus;
	assert_int_equal(bus_init(&bus, "pio"), 0);
	assert_int_equal(bus_register(&bus, DEBUG_EXIT_PORT, DEBUG_EXIT_SIZE, &debug_exit_ops, &d,
				      "debug-exit"), 0);
	uint32_t v = 0x00000031;
	assert_int_equal(bus_write(&bus, DEBUG_EXIT_PORT, &v, 4), 0);
	assert_int_equal(log.calls, 1);
	assert_int_equal(log.status, 0x31);

	/* Reads have no effect and return all-ones. */
	uint32_t r = 0;
	assert_int_equal(bus_read(&bus, DEBUG_EXIT_PORT, &r, 4), 0);
	assert_true(r == 0xffffffffu);
	assert_int_equal(log.calls, 1);
	bus_destroy(&bus);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_byte_write_requests_exit_with_value),
		cmocka_unit_test(test_zero_is_a_status_of_its_own),
		cmocka_unit_test(test_four_byte_write_uses_low_byte),
		cmocka_unit_test(test_qemu_status),
		cmocka_unit_test(test_two_byte_write_uses_low_byte),
		cmocka_unit_test(test_write_through_bus_at_port),
	};
	return cmocka_run_group_tests_name("debug_exit", tests, NULL, NULL);
}
