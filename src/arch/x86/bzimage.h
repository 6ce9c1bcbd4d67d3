/* Linux bzImage boot: setup header checks, protected-mode kernel, zero page (struct boot_params). */
#ifndef MSIVM_ARCH_X86_BZIMAGE_H
#define MSIVM_ARCH_X86_BZIMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "core/guest_mem.h"

/* Written from Documentation/arch/x86/boot.rst and zero-page.rst. */
#define BZ_HDR_OFFSET      0x1f1
#define BZ_HDR_MAGIC       0x53726448u /* "HdrS" at 0x202 */
#define BZ_BOOT_FLAG       0xaa55
#define BZ_MIN_VERSION     0x020c      /* 2.12: xloadflags, 64-bit entry */
#define BZ_RSDP_VERSION    0x020e      /* 2.14: acpi_rsdp_addr */
#define BZ_LOADED_HIGH     0x01        /* loadflags */
#define BZ_CAN_USE_HEAP    0x80
#define BZ_XLF_KERNEL_64   0x0001      /* xloadflags: 64-bit entry at load address + 0x200 */
#define BZ_ENTRY64_OFFSET  0x200
#define BZ_LOADER_UNDEFINED 0xff       /* type_of_loader */
#define BZ_HEAP_END        0xfe00      /* heap_end_ptr: end of setup heap/stack - 0x200 */
#define BZ_E820_MAX        128
#define BZ_PARAMS_HDR_END  0x290       /* room for the header inside boot_params */

/* The setup header: at 0x1f1 in the image and in boot_params. */
struct bz_setup_header {
	uint8_t  setup_sects;          /* 0x1f1: 0 means 4 */
	uint16_t root_flags;
	uint32_t syssize;              /* 0x1f4: protected-mode size in 16-byte units */
	uint16_t ram_size;
	uint16_t vid_mode;
	uint16_t root_dev;
	uint16_t boot_flag;            /* 0x1fe: 0xaa55 */
	uint16_t jump;                 /* 0x200: its high byte gives the header's end */
	uint32_t header;               /* 0x202: "HdrS" */
	uint16_t version;              /* 0x206 */
	uint32_t realmode_swtch;
	uint16_t start_sys_seg;
	uint16_t kernel_version;
	uint8_t  type_of_loader;       /* 0x210 */
	uint8_t  loadflags;            /* 0x211 */
	uint16_t setup_move_size;
	uint32_t code32_start;         /* 0x214 */
	uint32_t ramdisk_image;        /* 0x218 */
	uint32_t ramdisk_size;         /* 0x21c */
	uint32_t bootsect_kludge;
	uint16_t heap_end_ptr;         /* 0x224 */
	uint8_t  ext_loader_ver;
	uint8_t  ext_loader_type;
	uint32_t cmd_line_ptr;         /* 0x228 */
	uint32_t initrd_addr_max;      /* 0x22c: highest byte an initrd may occupy */
	uint32_t kernel_alignment;     /* 0x230 */
	uint8_t  relocatable_kernel;   /* 0x234 */
	uint8_t  min_alignment;
	uint16_t xloadflags;           /* 0x236 */
	uint32_t cmdline_size;         /* 0x238: longest command line, without the NUL */
	uint32_t hardware_subarch;
	uint64_t hardware_subarch_data;
	uint32_t payload_offset;
	uint32_t payload_length;
	uint64_t setup_data;           /* 0x250 */
	uint64_t pref_address;         /* 0x258 */
	uint32_t init_size;            /* 0x260: memory the kernel needs from its run address */
	uint32_t handover_offset;
	uint32_t kernel_info_offset;   /* 0x268 */
} __attribute__((packed));

struct bz_e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
} __attribute__((packed));

/* struct boot_params ("zero page"), only the fields msivm fills named. */
struct bz_boot_params {
	uint8_t  pad0[0x070];
	uint64_t acpi_rsdp_addr;       /* 0x070 */
	uint8_t  pad1[0x0c0 - 0x078];
	uint32_t ext_ramdisk_image;    /* 0x0c0 */
	uint32_t ext_ramdisk_size;     /* 0x0c4 */
	uint32_t ext_cmd_line_ptr;     /* 0x0c8 */
	uint8_t  pad2[0x1e8 - 0x0cc];
	uint8_t  e820_entries;         /* 0x1e8 */
	uint8_t  pad3[BZ_HDR_OFFSET - 0x1e9];
	struct bz_setup_header hdr;    /* 0x1f1 */
	uint8_t  pad4[0x2d0 - BZ_HDR_OFFSET - sizeof(struct bz_setup_header)];
	struct bz_e820_entry e820_table[BZ_E820_MAX]; /* 0x2d0 */
	uint8_t  pad5[0x1000 - 0x2d0 - BZ_E820_MAX * sizeof(struct bz_e820_entry)];
} __attribute__((packed));

/* What bzimage_parse found in a setup header. */
struct bzimage_info {
	struct bz_setup_header hdr;    /* as in the file (fields past its end are 0) */
	uint32_t hdr_end;              /* one past the header: 0x202 + byte at 0x201 */
	uint32_t setup_bytes;          /* real-mode part: (setup_sects + 1) * 512 */
	uint64_t kernel_bytes;         /* protected-mode part: the rest of the file */
	uint64_t load_addr;            /* BZIMAGE_LOAD_ADDR */
	uint64_t entry;                /* 64-bit entry: load_addr + 0x200 */
	uint64_t run_start;            /* where the kernel decompresses itself */
	uint64_t kernel_end;           /* one past the last byte the kernel needs while booting */
};

/* Checks that `image` is a Linux bzImage msivm can boot: "HdrS" header,
 * boot_flag, protocol >= 2.12, loaded high, a 64-bit entry point
 * (XLF_KERNEL_64), a protected-mode part as long as syssize says. Fills *out.
 * Returns 0, or -ENOEXEC with a message. Touches no guest memory. */
int bzimage_parse(const uint8_t *image, size_t size, struct bzimage_info *out, struct error *err);

/* What the kernel is given besides its image. */
struct bzimage_args {
	const char *cmdline;           /* NULL: empty */
	const uint8_t *initrd;         /* NULL: no initrd */
	uint64_t initrd_size;
	uint64_t rsdp;                 /* ACPI RSDP address; 0: none */
};

/* Where bzimage_load put things. */
struct bzimage_loaded {
	uint64_t entry;                /* 64-bit entry point */
	uint64_t zero_page;            /* ZERO_PAGE: %rsi at entry */
	uint64_t initrd_addr;          /* 0 without an initrd */
};

/* Parses `image`, checks that the kernel (init_size from its run address),
 * the command line (cmdline_size) and the initrd (below initrd_addr_max and
 * the top of low RAM, above the kernel) fit, and only then writes guest RAM:
 * the protected-mode kernel at BZIMAGE_LOAD_ADDR, the command line at
 * CMDLINE_ADDR, the initrd page-aligned as high as it fits, the zero page at
 * ZERO_PAGE (setup header copied from the image, type_of_loader, loadflags,
 * heap, command line, e820 map, initrd, RSDP) and the long-mode page tables
 * and GDT (longmode_write_tables). Returns 0 and fills *out, or -ENOEXEC,
 * -ERANGE, -E2BIG or -ENOSPC with a message; on error RAM is untouched. */
int bzimage_load(const struct guest_mem *gm, const uint8_t *image, size_t size,
		 const struct bzimage_args *args, struct bzimage_loaded *out, struct error *err);

#endif
