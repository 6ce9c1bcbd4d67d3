/* Linux bzImage boot: image -> setup header checks -> kernel, command line, initrd, zero page, page tables. */
#include "arch/x86/bzimage.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <string.h>

#include "arch/x86/e820.h"
#include "arch/x86/initrd.h"
#include "arch/x86/layout.h"
#include "arch/x86/longmode.h"

_Static_assert(offsetof(struct bz_boot_params, hdr) == BZ_HDR_OFFSET, "hdr at 0x1f1");
_Static_assert(offsetof(struct bz_boot_params, hdr.header) == 0x202, "HdrS at 0x202");
_Static_assert(offsetof(struct bz_boot_params, hdr.kernel_info_offset) == 0x268, "header end");
_Static_assert(offsetof(struct bz_boot_params, e820_table) == 0x2d0, "e820 at 0x2d0");
_Static_assert(sizeof(struct bz_boot_params) == 4096, "zero page is one page");
_Static_assert(sizeof(struct bz_e820_entry) == 20, "boot e820 entry");
_Static_assert(E820_MAX_ENTRIES <= BZ_E820_MAX, "e820 room in the zero page");

#define SECTOR 512u
#define HDR_MIN_END 0x264u /* a 2.12 header reaches at least init_size */

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Where the kernel decompresses itself and how far it reaches: a
 * relocatable kernel moves to its load address rounded up to
 * kernel_alignment, but never below pref_address (its link address, which
 * is also where a non-relocatable one runs); init_size bytes from there. */
static void place_kernel(struct bzimage_info *bi)
{
	const struct bz_setup_header *h = &bi->hdr;
	uint64_t run = bi->load_addr;
	uint64_t align = h->kernel_alignment;
	if (h->relocatable_kernel && align && (align & (align - 1)) == 0)
		run = (run + align - 1) & ~(align - 1);
	run = max_u64(run, h->pref_address);
	bi->run_start = run;
	bi->kernel_end = max_u64(bi->load_addr + bi->kernel_bytes, run + h->init_size);
	bi->entry = bi->load_addr + BZ_ENTRY64_OFFSET;
}

int bzimage_parse(const uint8_t *image, size_t size, struct bzimage_info *out, struct error *err)
{
	uint32_t magic;
	if (size < 0x206)
		return error_set(err, -ENOEXEC, "not a Linux bzImage: %zu bytes is too short for "
				 "a \"HdrS\" setup header", size);
	memcpy(&magic, image + 0x202, 4);
	if (magic != BZ_HDR_MAGIC)
		return error_set(err, -ENOEXEC, "not a Linux bzImage: no \"HdrS\" setup header at 0x202");

	uint16_t boot_flag, version;
	if (size < 0x208)
		return error_set(err, -ENOEXEC, "truncated setup header (file is %zu bytes)", size);
	memcpy(&boot_flag, image + 0x1fe, 2);
	memcpy(&version, image + 0x206, 2);
	if (boot_flag != BZ_BOOT_FLAG)
		return error_set(err, -ENOEXEC, "bad boot_flag 0x%04x in the setup header (want "
				 "0xAA55)", boot_flag);
	if (version < BZ_MIN_VERSION)
		return error_set(err, -ENOEXEC, "boot protocol %u.%02u is too old: msivm needs 2.12 "
				 "or later (a 64-bit entry point)", version >> 8, version & 0xff);

	struct bzimage_info bi;
	memset(&bi, 0, sizeof(bi));
	bi.hdr_end = 0x202u + image[0x201];
	if (bi.hdr_end < HDR_MIN_END || bi.hdr_end > size)
		return error_set(err, -ENOEXEC, "truncated setup header (ends at 0x%x, file is %zu "
				 "bytes)", bi.hdr_end, size);
	size_t copy = (bi.hdr_end < BZ_HDR_OFFSET + sizeof(bi.hdr) ? bi.hdr_end
				: BZ_HDR_OFFSET + sizeof(bi.hdr)) - BZ_HDR_OFFSET;
	memcpy(&bi.hdr, image + BZ_HDR_OFFSET, copy);
	const struct bz_setup_header *h = &bi.hdr;

	if (!(h->loadflags & BZ_LOADED_HIGH))
		return error_set(err, -ENOEXEC, "a zImage (LOADED_HIGH not set in loadflags): only "
				 "bzImages load at 1 MiB");
	if (!(h->xloadflags & BZ_XLF_KERNEL_64))
		return error_set(err, -ENOEXEC, "the kernel is not 64-bit capable: XLF_KERNEL_64 is "
				 "not set in xloadflags (no 64-bit entry point)");

	bi.setup_bytes = ((h->setup_sects ? h->setup_sects : 4u) + 1) * SECTOR;
	if (bi.setup_bytes < bi.hdr_end || bi.setup_bytes >= size)
		return error_set(err, -ENOEXEC, "truncated: the file (%zu bytes) ends inside the "
				 "real-mode setup (%u bytes)", size, bi.setup_bytes);
	bi.kernel_bytes = size - bi.setup_bytes;
	if ((uint64_t)h->syssize * 16 > bi.kernel_bytes)
		return error_set(err, -ENOEXEC, "truncated: the protected-mode kernel is %" PRIu64
				 " bytes, the header says %" PRIu64 " (syssize)", bi.kernel_bytes,
				 (uint64_t)h->syssize * 16);
	if (bi.kernel_bytes <= BZ_ENTRY64_OFFSET)
		return error_set(err, -ENOEXEC, "truncated: the protected-mode kernel is only %" PRIu64
				 " bytes, no room for the 64-bit entry at +0x200", bi.kernel_bytes);
	bi.load_addr = BZIMAGE_LOAD_ADDR;
	if (bi.hdr.pref_address > UINT64_MAX - bi.hdr.init_size)
		return error_set(err, -ERANGE, "pref_address 0x%" PRIx64 " plus init_size %u wraps "
				 "past 2^64", (uint64_t)bi.hdr.pref_address, bi.hdr.init_size);
	place_kernel(&bi);
	*out = bi;
	return 0;
}

/* Every check bzimage_load makes before it writes: kernel, command line,
 * initrd. Sets *initrd_addr (0 without an initrd). */
static int check_fit(const struct guest_mem *gm, const struct bzimage_info *bi,
		     const struct bzimage_args *a, size_t cmdlen, uint64_t *initrd_addr,
		     struct error *err)
{
	uint64_t top = low_ram_top(gm);
	if (bi->kernel_end > top)
		return error_set(err, -ERANGE, "kernel needs guest RAM up to 0x%" PRIx64 " (%" PRIu64
				 " MiB: init_size %u bytes from 0x%" PRIx64 ") but RAM below the "
				 "MMIO hole ends at 0x%" PRIx64 " (%" PRIu64 " MiB)", bi->kernel_end,
				 (uint64_t)((bi->kernel_end + MiB - 1) >> 20), bi->hdr.init_size, bi->run_start,
				 top, top >> 20);
	uint32_t limit = bi->hdr.cmdline_size < CMDLINE_MAX - 1 ? bi->hdr.cmdline_size
								 : CMDLINE_MAX - 1;
	if (cmdlen > limit)
		return error_set(err, -E2BIG, "command line is %zu bytes; this kernel accepts at most "
				 "%u (cmdline_size %u, msivm's buffer %u)", cmdlen, limit,
				 bi->hdr.cmdline_size, CMDLINE_MAX - 1);
	*initrd_addr = 0;
	if (!a->initrd)
		return 0;
	if (a->initrd_size > UINT32_MAX)
		return error_set(err, -E2BIG, "initrd of %" PRIu64 " bytes is too large (at most "
				 "4 GiB - 1)", a->initrd_size);
	return initrd_place(gm, a->initrd_size, bi->kernel_end,
			    (uint64_t)bi->hdr.initrd_addr_max + 1, initrd_addr, err);
}

static void fill_zero_page(const struct guest_mem *gm, struct bz_boot_params *zp,
			   const uint8_t *image, const struct bzimage_info *bi,
			   const struct bzimage_args *a, uint64_t initrd_addr)
{
	memset(zp, 0, sizeof(*zp));
	/* The header as the image has it, up to its own end (boot.rst, 64-bit protocol). */
	uint32_t end = bi->hdr_end < BZ_PARAMS_HDR_END ? bi->hdr_end : BZ_PARAMS_HDR_END;
	memcpy((uint8_t *)zp + BZ_HDR_OFFSET, image + BZ_HDR_OFFSET, end - BZ_HDR_OFFSET);

	struct bz_setup_header *h = &zp->hdr;
	h->type_of_loader = BZ_LOADER_UNDEFINED;
	h->loadflags |= BZ_CAN_USE_HEAP;
	h->heap_end_ptr = BZ_HEAP_END;
	h->code32_start = (uint32_t)bi->load_addr;
	h->cmd_line_ptr = (uint32_t)CMDLINE_ADDR;
	zp->ext_cmd_line_ptr = (uint32_t)(CMDLINE_ADDR >> 32);
	if (a->initrd) {
		h->ramdisk_image = (uint32_t)initrd_addr;
		zp->ext_ramdisk_image = (uint32_t)(initrd_addr >> 32);
		h->ramdisk_size = (uint32_t)a->initrd_size;
		zp->ext_ramdisk_size = (uint32_t)(a->initrd_size >> 32);
	}
	if (bi->hdr.version >= BZ_RSDP_VERSION)
		zp->acpi_rsdp_addr = a->rsdp;

	struct e820_entry map[E820_MAX_ENTRIES];
	uint32_t n = e820_build(gm, map);
	for (uint32_t i = 0; i < n; i++)
		zp->e820_table[i] = (struct bz_e820_entry){ map[i].addr, map[i].size, map[i].type };
	zp->e820_entries = (uint8_t)n;
}

int bzimage_load(const struct guest_mem *gm, const uint8_t *image, size_t size,
		 const struct bzimage_args *args, struct bzimage_loaded *out, struct error *err)
{
	struct bzimage_info bi;
	int ret = bzimage_parse(image, size, &bi, err);
	if (ret)
		return ret;
	size_t cmdlen = args->cmdline ? strlen(args->cmdline) : 0;
	uint64_t initrd_addr;
	ret = check_fit(gm, &bi, args, cmdlen, &initrd_addr, err);
	if (ret)
		return ret;

	uint8_t *kernel = gm_ptr(gm, bi.load_addr, bi.kernel_bytes);
	char *cl = gm_ptr(gm, CMDLINE_ADDR, CMDLINE_MAX);
	struct bz_boot_params *zp = gm_ptr(gm, ZERO_PAGE, sizeof(*zp));
	uint8_t *rd = args->initrd ? gm_ptr(gm, initrd_addr, args->initrd_size) : NULL;
	if (!kernel || !cl || !zp || (args->initrd && !rd))
		return error_set(err, -ERANGE, "guest RAM too small for the kernel's boot data");
	ret = longmode_write_tables(gm, err);
	if (ret)
		return ret;

	memcpy(kernel, image + bi.setup_bytes, bi.kernel_bytes);
	memset(cl, 0, CMDLINE_MAX);
	if (cmdlen)
		memcpy(cl, args->cmdline, cmdlen);
	if (rd)
		memcpy(rd, args->initrd, args->initrd_size);
	fill_zero_page(gm, zp, image, &bi, args, initrd_addr);
	*out = (struct bzimage_loaded){
		.entry = bi.entry, .zero_page = ZERO_PAGE, .initrd_addr = initrd_addr,
	};
	return 0;
}
