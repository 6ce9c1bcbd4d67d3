/* Reset-vector stub: F000:FFF0 -> out to the ACPI reset register -> msivm reboots the VM. */
#include "arch/x86/reset_stub.h"

#include <errno.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "devices/acpi_pm.h"

#define RESET_PORT (ACPI_PM_PORT + ACPI_PM_RESET)

_Static_assert(RESET_PORT <= 0xffff && ACPI_RESET_VALUE <= 0xff, "one-byte out to a 16-bit port");

const uint8_t x86_reset_stub[16] = {
	0xba, RESET_PORT & 0xff, RESET_PORT >> 8, /* mov dx, RESET_PORT */
	0xb0, ACPI_RESET_VALUE,                   /* mov al, RESET_VALUE */
	0xee,                                     /* out dx, al */
	0xf4,                                     /* hlt (if the write did nothing) */
	0xeb, 0xfd,                               /* jmp back to hlt */
	0xf4, 0xf4, 0xf4, 0xf4, 0xf4, 0xf4, 0xf4,
};

int x86_write_reset_stub(const struct guest_mem *gm, struct error *err)
{
	uint8_t *p = gm_ptr(gm, RESET_STUB_ADDR, sizeof(x86_reset_stub));
	if (!p)
		return error_set(err, -ERANGE, "guest RAM does not cover the reset vector 0x%llx",
				 RESET_STUB_ADDR);
	memcpy(p, x86_reset_stub, sizeof(x86_reset_stub));
	return 0;
}
