/* ACPI tables: how a guest OS learns msivm's platform (CPUs, IOAPIC, PCI host bridge, ECAM, COM1). */
#ifndef MSIVM_ARCH_X86_ACPI_H
#define MSIVM_ARCH_X86_ACPI_H

#include <stddef.h>
#include <stdint.h>

#include "util/error.h"
#include "core/guest_mem.h"

/* Written from the ACPI 6.3 specification, chapter 5.2. */
#define ACPI_OEM_ID        "MSIVM "   /* 6 bytes */
#define ACPI_OEM_TABLE_ID  "MSIVM   " /* 8 bytes */
#define ACPI_CREATOR_ID    "MSIV"
#define ACPI_LAPIC_ADDR    0xfee00000u
#define ACPI_IOAPIC_ADDR   0xfec00000u
#define ACPI_IOAPIC_ID     0
#define ACPI_MAX_CPUS      255        /* xAPIC IDs 0..254 */
#define ACPI_NOTIFY_BUTTON_PRESSED 0x80

#define ACPI_FADT_REVISION       6
#define ACPI_FADT_MINOR_REVISION 3
#define ACPI_FADT_PWR_BUTTON     (1u << 4)   /* no fixed-hardware power button */
#define ACPI_FADT_SLP_BUTTON     (1u << 5)
#define ACPI_FADT_RESET_REG_SUP  (1u << 10)  /* RESET_REG/RESET_VALUE are valid */
#define ACPI_FADT_HW_REDUCED     (1u << 20)
#define ACPI_GAS_SYSTEM_IO       1
#define ACPI_GAS_ACCESS_BYTE     1
#define ACPI_GAS_ACCESS_DWORD    3
#define ACPI_BOOT_ARCH_NO_VGA    (1u << 2)   /* IAPC_BOOT_ARCH; 8042 bit left clear: none */
#define ACPI_BOOT_ARCH_NO_CMOS   (1u << 5)

#define ACPI_MADT_PCAT_COMPAT    1u
#define ACPI_MADT_LAPIC          0
#define ACPI_MADT_IOAPIC         1
#define ACPI_MADT_ISO            2
#define ACPI_MADT_LAPIC_NMI      4

struct acpi_header {
	char     signature[4];
	uint32_t length;
	uint8_t  revision;
	uint8_t  checksum;
	char     oem_id[6];
	char     oem_table_id[8];
	uint32_t oem_revision;
	char     creator_id[4];
	uint32_t creator_revision;
} __attribute__((packed));

struct acpi_rsdp {
	char     signature[8];            /* "RSD PTR " */
	uint8_t  checksum;                /* first 20 bytes */
	char     oem_id[6];
	uint8_t  revision;                /* 2: ACPI 2.0+ with XSDT */
	uint32_t rsdt_address;            /* 0: msivm has only an XSDT */
	uint32_t length;                  /* 36 */
	uint64_t xsdt_address;
	uint8_t  extended_checksum;       /* all 36 bytes */
	uint8_t  reserved[3];
} __attribute__((packed));

struct acpi_gas {                         /* Generic Address Structure */
	uint8_t  space_id;
	uint8_t  bit_width;
	uint8_t  bit_offset;
	uint8_t  access_size;
	uint64_t address;
} __attribute__((packed));

struct acpi_fadt {
	struct acpi_header h;             /* "FACP" */
	uint32_t firmware_ctrl;           /* 36 */
	uint32_t dsdt;                    /* 40 */
	uint8_t  reserved0;
	uint8_t  preferred_pm_profile;
	uint16_t sci_int;
	uint32_t smi_cmd;                 /* 48 */
	uint8_t  acpi_enable, acpi_disable, s4bios_req, pstate_cnt;
	uint32_t pm1a_evt_blk, pm1b_evt_blk, pm1a_cnt_blk, pm1b_cnt_blk;
	uint32_t pm2_cnt_blk, pm_tmr_blk, gpe0_blk, gpe1_blk;
	uint8_t  pm1_evt_len, pm1_cnt_len, pm2_cnt_len, pm_tmr_len;
	uint8_t  gpe0_blk_len, gpe1_blk_len, gpe1_base, cst_cnt;
	uint16_t p_lvl2_lat, p_lvl3_lat, flush_size, flush_stride;
	uint8_t  duty_offset, duty_width, day_alrm, mon_alrm, century;
	uint16_t iapc_boot_arch;          /* 109 */
	uint8_t  reserved1;
	uint32_t flags;                   /* 112 */
	struct acpi_gas reset_reg;        /* 116 */
	uint8_t  reset_value;
	uint16_t arm_boot_arch;
	uint8_t  minor_revision;          /* 131 */
	uint64_t x_firmware_ctrl;
	uint64_t x_dsdt;                  /* 140 */
	struct acpi_gas x_pm1a_evt_blk, x_pm1b_evt_blk, x_pm1a_cnt_blk, x_pm1b_cnt_blk;
	struct acpi_gas x_pm2_cnt_blk, x_pm_tmr_blk, x_gpe0_blk, x_gpe1_blk;
	struct acpi_gas sleep_control_reg, sleep_status_reg;
	char     hypervisor_vendor[8];    /* 268 */
} __attribute__((packed));

struct acpi_madt {
	struct acpi_header h;             /* "APIC" */
	uint32_t lapic_address;
	uint32_t flags;
} __attribute__((packed));

struct acpi_madt_lapic {
	uint8_t  type, length;            /* 0, 8 */
	uint8_t  processor_uid;
	uint8_t  apic_id;
	uint32_t flags;                   /* 1: enabled */
} __attribute__((packed));

struct acpi_madt_ioapic {
	uint8_t  type, length;            /* 1, 12 */
	uint8_t  ioapic_id;
	uint8_t  reserved;
	uint32_t address;
	uint32_t gsi_base;
} __attribute__((packed));

struct acpi_madt_iso {
	uint8_t  type, length;            /* 2, 10 */
	uint8_t  bus;                     /* 0: ISA */
	uint8_t  source;                  /* ISA IRQ */
	uint32_t gsi;
	uint16_t flags;                   /* 0: conforms to the bus */
} __attribute__((packed));

struct acpi_madt_lapic_nmi {
	uint8_t  type, length;            /* 4, 6 */
	uint8_t  processor_uid;           /* 0xff: every processor */
	uint16_t flags;
	uint8_t  lint;
} __attribute__((packed));

struct acpi_mcfg {
	struct acpi_header h;             /* "MCFG" */
	uint64_t reserved;
} __attribute__((packed));

struct acpi_mcfg_entry {
	uint64_t base;
	uint16_t segment;
	uint8_t  start_bus;
	uint8_t  end_bus;
	uint32_t reserved;
} __attribute__((packed));

/* The sum of `len` bytes modulo 256 (0 for a table with a right checksum). */
uint8_t acpi_sum(const void *p, size_t len);

/* The GSI that INTx pin `pin` (0 = INTA .. 3 = INTD) of slot `slot` on bus 0
 * raises: pin A as pci_host_intx_gsi(), the other pins swizzled over the
 * same eight IOAPIC inputs. */
uint32_t acpi_pci_intx_gsi(uint8_t slot, uint8_t pin);

/* Writes the DSDT (header and AML) into `buf` (`cap` bytes): \_SB.PCI0
 * (PNP0A08/PNP0A03: bus 0, ports 0xCF8-0xCFF, the MMIO window, _PRT for
 * every slot and pin), \_SB.ECAM (PNP0C02 reserving the ECAM window) and
 * \_SB.COM1 (PNP0501, 0x3F8, IRQ 4), and \_S5 (the SLP_TYP of soft-off
 * for the FADT's sleep control register). Returns its length, or 0 if it
 * does not fit. */
size_t acpi_dsdt_write(uint8_t *buf, size_t cap);

/* Fills `h` as a table header (checksum 0 until acpi_finish). */
void acpi_header_init(struct acpi_header *h, const char sig[4], uint32_t length, uint8_t revision);

/* Sets the checksum of the complete table at `h` (h->length bytes) so that
 * its bytes sum to 0. */
void acpi_finish(struct acpi_header *h);

/* Writes RSDP, XSDT, FADT (hardware-reduced, pointing at the DSDT, with the
 * sleep control/status and reset registers of devices/acpi_pm.h), DSDT,
 * MADT (one enabled local APIC per vCPU with APIC ID = index, the IOAPIC at
 * GSI 0, ISA IRQ0 -> GSI 2, LINT1 NMI) and MCFG (ECAM for bus 0) into the
 * reserved BIOS area [ACPI_START, ACPI_END). A non-zero `pm_timer_port` puts
 * that port in the FADT's PM_TMR_BLK (--testdev's PM timer). Returns the
 * RSDP's address, or -EINVAL/-E2BIG/-ERANGE with a message. */
int acpi_build(const struct guest_mem *gm, uint32_t ncpus, uint16_t pm_timer_port,
	       struct error *err);

#endif
