/* Reset-vector stub: the 16 bytes at F000:FFF0 a guest reaches when it restarts "through the BIOS". */
#ifndef MSIVM_ARCH_X86_RESET_STUB_H
#define MSIVM_ARCH_X86_RESET_STUB_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "core/guest_mem.h"

/* The stub's real-mode code: out RESET_VALUE to the ACPI reset register,
 * then halt in a loop. */
extern const uint8_t x86_reset_stub[16];

/* Writes x86_reset_stub at RESET_STUB_ADDR. Returns 0, or -ERANGE with a
 * message when guest RAM does not cover it. */
int x86_write_reset_stub(const struct guest_mem *gm, struct error *err);

#endif
