/* Fuzz target: initrd placement (initrd_place) for any RAM size, initrd size, floor and limit, against its contract. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "arch/x86/initrd.h"
#include "arch/x86/layout.h"
#include "fuzz_common.h"

#define RAM_RESERVE (8 * GiB) /* address space only: initrd_place writes nothing */

static uint8_t *ram; /* the fixture: inaccessible, so a stray access faults */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	void *p = mmap(NULL, RAM_RESERVE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	ram = p;
	return 0;
}

/* Input: u64 RAM size (% 8 GiB, at least 2 MiB), u64 initrd size, u64 floor, u64 limit. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint64_t ram_size = fz_u64(&in) % RAM_RESERVE;
	if (ram_size < GUEST_MEM_MIN)
		ram_size = GUEST_MEM_MIN;
	uint64_t isize = fz_u64(&in), floor = fz_u64(&in), limit = fz_u64(&in);
	struct guest_mem gm;
	if (guest_mem_init(&gm, ram, ram_size, MMIO_HOLE_START, MMIO_HOLE_END))
		return 0;
	uint64_t top = low_ram_top(&gm), addr;
	FZ_CHECK(top <= MMIO_HOLE_START && top <= ram_size);
	struct error err;
	if (initrd_place(&gm, isize, floor, limit, &addr, &err))
		return 0;
	FZ_CHECK(addr % 4096 == 0);
	FZ_CHECK(addr >= floor && addr >= HIGH_MEM_START);
	FZ_CHECK(isize <= top && addr <= top - isize);
	FZ_CHECK(isize <= limit && addr <= limit - isize);
	FZ_CHECK(gm_contains(&gm, addr, isize) || isize == 0);
	return 0;
}
