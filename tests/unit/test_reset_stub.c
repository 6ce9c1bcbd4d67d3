/* Unit tests for the reset-vector stub: where it lands, and what an independent disassembler reads in it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86/layout.h"
#include "arch/x86/reset_stub.h"
#include "core/guest_mem.h"

#define RAM (2 * MiB)

static void test_written_at_f000_fff0(void **state)
{
	uint8_t *ram = calloc(1, RAM);
	struct guest_mem gm;
	struct error err;
	assert_int_equal(guest_mem_init(&gm, ram, RAM, MMIO_HOLE_START, MMIO_HOLE_END), 0);
	assert_int_equal(x86_write_reset_stub(&gm, &err), 0);
	assert_int_equal(0xf000 * 16 + 0xfff0, RESET_STUB_ADDR);
	assert_memory_equal(ram + RESET_STUB_ADDR, x86_reset_stub, 16);
	assert_true(ACPI_END <= RESET_STUB_ADDR); /* the tables end before it */
	free(ram);
}

static void test_no_ram_there_refused(void **state)
{
	uint8_t *ram = calloc(1, 512 * KiB);
	struct guest_mem gm;
	struct error err;
	assert_int_equal(guest_mem_init(&gm, ram, 512 * KiB, MMIO_HOLE_START, MMIO_HOLE_END), 0);
	assert_int_not_equal(x86_write_reset_stub(&gm, &err), 0);
	assert_non_null(strstr(err.msg, "reset vector"));
	free(ram);
}

/* objdump (binutils) decodes the 16-bit code: mov $0x602,%dx; mov $0x1,%al; out %al,(%dx). */
static void test_objdump_reads_out_to_the_reset_register(void **state)
{
	if (system("command -v objdump >/dev/null 2>&1")) {
		print_message("objdump not installed: skipping\n");
		skip();
	}
	char path[] = "/tmp/msivm-stub-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, x86_reset_stub, 16), 16);
	close(fd);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "objdump -D -b binary -mi8086 %s", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	static char out[8192];
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	pclose(p);
	unlink(path);
	if (!strstr(out, "mov    $0x602,%dx") || !strstr(out, "mov    $0x1,%al") ||
	    !strstr(out, "out    %al,(%dx)") || !strstr(out, "hlt"))
		fail_msg("unexpected disassembly:\n%s", out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_written_at_f000_fff0),
		cmocka_unit_test(test_no_ram_there_refused),
		cmocka_unit_test(test_objdump_reads_out_to_the_reset_register),
	};
	return cmocka_run_group_tests_name("reset_stub", tests, NULL, NULL);
}
