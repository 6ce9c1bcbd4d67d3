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

/* Legacy area: RAM below 640 KiB, then VGA/BIOS space up to 1 MiB. */
#define LOW_RAM_END      0xA0000ULL
#define HIGH_MEM_START   0x100000ULL

/* msivm's own boot data lives in [BOOT_DATA_START, BOOT_DATA_END); a kernel
 * segment may not overlap it. */
#define BOOT_DATA_START  0x1000ULL
#define BOOT_DATA_END    0x80000ULL
#define PVH_START_INFO   0x6000ULL   /* struct hvm_start_info */
#define PVH_MEMMAP       0x6100ULL   /* hvm_memmap_table_entry[] */
#define PVH_MEMMAP_MAX   64
#define CMDLINE_ADDR     0x20000ULL
#define CMDLINE_MAX      4096        /* bytes, including the NUL */

/* Smallest and largest guest RAM msivm accepts. */
#define GUEST_MEM_MIN    (2 * MiB)
#define GUEST_MEM_MAX    (1024 * GiB)

#endif
