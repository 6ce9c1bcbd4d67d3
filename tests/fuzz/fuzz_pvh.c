/* Fuzz target: the PVH loader (ELF checks, PVH note, segments, hvm_start_info, initrd module) on a hostile kernel file. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "arch/x86/pvh.h"
#include "fuzz_common.h"

#define RAM_SIZE (8 * MiB)

static uint8_t *ram; /* the fixture: guest RAM (the loader writes only after its checks) */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(RAM_SIZE);
	return ram ? 0 : -1;
}

/* Input: 16 bytes of arguments (u8 RAM size in MiB (% 9, at least 2), u8
 * command-line length, u16 pad, u32 initrd address, u32 initrd size, u32
 * RSDP), then the ELF image (16-byte aligned, as a mapped file is page
 * aligned). The command line is that many 'x'. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint64_t ram_size = (fz_u8(&in) % 9u) * MiB;
	if (ram_size < GUEST_MEM_MIN)
		ram_size = GUEST_MEM_MIN;
	unsigned cmdlen = fz_u8(&in);
	(void)fz_u16(&in);
	uint32_t initrd_addr = fz_u32(&in), initrd_size = fz_u32(&in), rsdp = fz_u32(&in);
	if (size < 16)
		return 0;
	struct guest_mem gm;
	if (guest_mem_init(&gm, ram, ram_size, MMIO_HOLE_START, MMIO_HOLE_END))
		abort();
	struct pvh_image img;
	struct error err;
	if (pvh_load_elf(&gm, data + 16, size - 16, &img, &err))
		return 0;
	/* Segments may sit below the boot data (0-0x1000) or between it and the
	 * legacy area; pvh.c checks each against those holes. Here: inside RAM. */
	FZ_CHECK(img.load_start <= img.load_end && img.load_end <= ram_size);
	char cmdline[256];
	memset(cmdline, 'x', cmdlen);
	cmdline[cmdlen < sizeof(cmdline) ? cmdlen : sizeof(cmdline) - 1] = '\0';
	if (pvh_write_start_info(&gm, cmdline, &err) == 0)
		(void)pvh_set_boot_extras(&gm, rsdp, initrd_addr, initrd_size, &err);
	return 0;
}
