/* Fuzz target: the multiboot v1 loader (header search, flags, ELF32 checks, segments, module, multiboot_info) on a hostile kernel file. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "arch/x86/multiboot.h"
#include "fuzz_common.h"

#define RAM_SIZE (16 * MiB) /* filled with 0x5a between runs */

static uint8_t *ram;    /* the fixture: guest RAM (the loader writes only after its checks) */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(RAM_SIZE);
	if (!ram)
		return -1;
	memset(ram, 0x5a, RAM_SIZE);
	return 0;
}

/* Input: 8 bytes of arguments (u8 RAM size in MiB (% 17, at least 2), u8 command-line length,
 * u16 module size (0: none), u32 pad), then the kernel image. The command line is that many
 * 'x', the module that many 'e'. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint64_t ram_size = (fz_u8(&in) % 17u) * MiB;
	if (ram_size < GUEST_MEM_MIN)
		ram_size = GUEST_MEM_MIN;
	unsigned cmdlen = fz_u8(&in);
	unsigned modlen = fz_u16(&in);
	(void)fz_u32(&in);
	if (size < 8)
		return 0;
	struct guest_mem gm;
	if (guest_mem_init(&gm, ram, ram_size, MMIO_HOLE_START, MMIO_HOLE_END))
		abort();
	char cmdline[256];
	memset(cmdline, 'x', cmdlen);
	cmdline[cmdlen < sizeof(cmdline) ? cmdlen : sizeof(cmdline) - 1] = '\0';
	uint8_t *mod = modlen ? malloc(modlen) : NULL;
	if (mod)
		memset(mod, 'e', modlen);
	/* The image in an exact-size buffer, so that ASan sees any read past its end. */
	size_t isize = size - 8;
	uint8_t *image = malloc(isize ? isize : 1);
	if (!image)
		abort();
	memcpy(image, data + 8, isize);
	struct multiboot_args args = { .name = "fuzz.flat", .cmdline = cmdline, .module = mod,
				       .module_size = modlen };
	struct multiboot_loaded out;
	struct error err;
	if (multiboot_load(&gm, image, isize, &args, &out, &err) == 0) {
		FZ_CHECK(out.load_start < out.load_end && out.load_end <= ram_size);
		FZ_CHECK(out.entry >= out.load_start && out.entry < out.load_end);
		FZ_CHECK(!mod || (out.module_addr >= out.load_end && out.module_addr % 4096 == 0 &&
				  out.module_addr + modlen <= ram_size &&
				  memcmp(ram + out.module_addr, mod, modlen) == 0));
		struct multiboot_info mbi;
		memcpy(&mbi, ram + MB_INFO_ADDR, sizeof(mbi));
		FZ_CHECK(mbi.mem_upper == (ram_size - HIGH_MEM_START) / KiB);
		FZ_CHECK(mbi.mods_count == (mod ? 1u : 0u));
		FZ_CHECK(strlen((char *)ram + MB_CMDLINE_ADDR) == strlen("fuzz.flat ") + strlen(cmdline));
		/* Back to the fill where the loader wrote. */
		memset(ram + MB_DATA_START, 0x5a, MB_DATA_END - MB_DATA_START);
		memset(ram + out.load_start, 0x5a, out.load_end - out.load_start);
		if (mod)
			memset(ram + out.module_addr, 0x5a, modlen);
	} else {
		/* A refusal writes nothing: the boot data and a typical load address keep the fill. */
		for (uint64_t a = MB_DATA_START; a < MB_DATA_END; a += 64)
			FZ_CHECK(ram[a] == 0x5a);
		for (uint64_t a = 4 * MiB; a < 4 * MiB + 64 * KiB && a < ram_size; a += 64)
			FZ_CHECK(ram[a] == 0x5a);
	}
	free(image);
	free(mod);
	return 0;
}
