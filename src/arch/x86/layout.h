/* Guest physical layout on x86: where RAM, boot data and the MMIO hole sit. */
#ifndef MSIVM_ARCH_X86_LAYOUT_H
#define MSIVM_ARCH_X86_LAYOUT_H

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

/* RAM fills [0, MMIO_HOLE_START) and continues at 4 GiB. */
#define MMIO_HOLE_START  0xC0000000ULL
#define MMIO_HOLE_END    0x100000000ULL

/* PCI: BARs are placed in [PCI_MMIO_START, PCI_MMIO_END); the ECAM window
 * for bus 0 follows. */
#define PCI_MMIO_START   0xC0000000ULL
#define PCI_MMIO_END     0xE0000000ULL
#define PCI_ECAM_BASE    0xE0000000ULL
/* I/O BARs (pci-testdev's) are placed from this port up, as SeaBIOS does. */
#define PCI_IO_START     0xC000

/* Legacy area: RAM below 640 KiB, then VGA/BIOS space up to 1 MiB. */
#define LOW_RAM_END      0xA0000ULL
#define HIGH_MEM_START   0x100000ULL

/* msivm's own boot data lives in [BOOT_DATA_START, BOOT_DATA_END); a kernel
 * segment may not overlap it. */
#define BOOT_DATA_START  0x1000ULL
#define BOOT_DATA_END    0x80000ULL
#define BOOT_GDT         0x1000ULL   /* 64-bit entry: flat GDT (null, -, code 0x10, data 0x18, TSS 0x20) */
#define PVH_START_INFO   0x6000ULL   /* struct hvm_start_info */
#define PVH_MODLIST      0x6080ULL   /* hvm_modlist_entry: the initrd as module 0 */
#define PVH_MEMMAP       0x6100ULL   /* hvm_memmap_table_entry[] */
#define PVH_MEMMAP_MAX   64
#define ZERO_PAGE        0x7000ULL   /* Linux struct boot_params, 4 KiB */
#define BOOT_PML4        0x9000ULL   /* 64-bit entry: identity-mapping page tables */
#define BOOT_PDPT        0xA000ULL
#define BOOT_PD          0xB000ULL   /* BOOT_PD_COUNT page directories of 2 MiB pages */
#define BOOT_PD_COUNT    4           /* maps [0, 4 GiB) */
#define CMDLINE_ADDR     0x20000ULL
#define CMDLINE_MAX      4096        /* bytes, including the NUL */

/* ACPI tables (RSDP first) in the reserved legacy BIOS area, where a kernel
 * that is given no RSDP address finds them by scanning. */
#define ACPI_START       0xE0000ULL
#define ACPI_END         0xFF000ULL

/* The real-mode reset vector F000:FFF0 (a BIOS's entry): msivm's stub there
 * asks for a reset through the ACPI reset register, so a guest that
 * "restarts through the BIOS" (Linux's fallback on a hardware-reduced
 * platform without EFI) reboots instead of running into empty memory. */
#define RESET_STUB_ADDR  0xFFFF0ULL

/* Linux bzImage: the protected-mode kernel is loaded at 1 MiB; its 64-bit
 * entry point is 0x200 bytes in. */
#define BZIMAGE_LOAD_ADDR HIGH_MEM_START

/* Smallest and largest guest RAM msivm accepts. */
#define GUEST_MEM_MIN    (2 * MiB)
#define GUEST_MEM_MAX    (1024 * GiB)

#endif
