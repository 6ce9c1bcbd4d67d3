/* Fuzz target: the bzImage loader (setup header checks, kernel, command line, initrd placement, zero page) on a hostile kernel file. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/bzimage.h"
#include "arch/x86/layout.h"
#include "fuzz_common.h"

#define RAM_MAX    (64 * MiB)
#define INITRD_MAX (4 * MiB)

/* The fixture: guest RAM and the bytes of an initrd (zeros). */
static uint8_t *ram;
static uint8_t *initrd;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	ram = malloc(RAM_MAX);
	initrd = calloc(1, INITRD_MAX);
	return ram && initrd ? 0 : -1;
}

/* Input: 16 bytes of arguments (u8 RAM size in MiB (% 65, at least 2), u8
 * flags (bit0 initrd, bit1 RSDP), u16 command-line length (% 4097), u32
 * initrd size (% 4 MiB + 1), u32 RSDP, u32 pad), then the image. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint64_t ram_size = (fz_u8(&in) % 65u) * MiB;
	if (ram_size < GUEST_MEM_MIN)
		ram_size = GUEST_MEM_MIN;
	uint8_t flags = fz_u8(&in);
	unsigned cmdlen = fz_u16(&in) % (CMDLINE_MAX + 1u);
	uint32_t initrd_size = fz_u32(&in) % (INITRD_MAX + 1u);
	uint32_t rsdp = fz_u32(&in);
	if (size < 16)
		return 0;
	const uint8_t *image = data + 16;
	size_t image_size = size - 16;

	struct bzimage_info info;
	struct error err;
	int parsed = bzimage_parse(image, image_size, &info, &err);
	if (parsed == 0) {
		FZ_CHECK(info.setup_bytes + info.kernel_bytes <= image_size);
		FZ_CHECK(info.entry == info.load_addr + BZ_ENTRY64_OFFSET);
	}

	struct guest_mem gm;
	if (guest_mem_init(&gm, ram, ram_size, MMIO_HOLE_START, MMIO_HOLE_END))
		abort();
	char *cmdline = malloc(cmdlen + 1u);
	if (!cmdline)
		abort();
	memset(cmdline, 'c', cmdlen);
	cmdline[cmdlen] = '\0';
	struct bzimage_args args = {
		.cmdline = cmdline,
		.initrd = flags & 1 ? initrd : NULL,
		.initrd_size = flags & 1 ? initrd_size : 0,
		.rsdp = flags & 2 ? rsdp : 0,
	};
	struct bzimage_loaded out;
	int ret = bzimage_load(&gm, image, image_size, &args, &out, &err);
	FZ_CHECK(parsed == 0 || ret != 0);
	if (ret == 0) {
		FZ_CHECK(out.entry == BZIMAGE_LOAD_ADDR + BZ_ENTRY64_OFFSET && out.zero_page == ZERO_PAGE);
		if (args.initrd_size) {
			FZ_CHECK(out.initrd_addr % 4096 == 0 && out.initrd_addr >= HIGH_MEM_START);
			FZ_CHECK(out.initrd_addr + args.initrd_size <= ram_size);
			FZ_CHECK(out.initrd_addr >= info.kernel_end);
		}
	}
	free(cmdline);
	return 0;
}
