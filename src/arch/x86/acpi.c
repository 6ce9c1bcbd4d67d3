/* ACPI tables: vCPU count and the x86 layout -> RSDP, XSDT, FADT, MADT, MCFG (+ DSDT) in guest RAM. */
#include "arch/x86/acpi.h"

#include <errno.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "devices/acpi_pm.h"

_Static_assert(sizeof(struct acpi_header) == 36, "table header");
_Static_assert(sizeof(struct acpi_rsdp) == 36, "RSDP");
_Static_assert(sizeof(struct acpi_gas) == 12, "GAS");
_Static_assert(sizeof(struct acpi_fadt) == 276, "FADT 6.x");
_Static_assert(offsetof(struct acpi_fadt, iapc_boot_arch) == 109, "FADT IAPC_BOOT_ARCH");
_Static_assert(offsetof(struct acpi_fadt, flags) == 112, "FADT flags");
_Static_assert(offsetof(struct acpi_fadt, minor_revision) == 131, "FADT minor revision");
_Static_assert(offsetof(struct acpi_fadt, x_dsdt) == 140, "FADT X_DSDT");
_Static_assert(offsetof(struct acpi_fadt, hypervisor_vendor) == 268, "FADT vendor");
_Static_assert(sizeof(struct acpi_madt) == 44 && sizeof(struct acpi_madt_lapic) == 8 &&
	       sizeof(struct acpi_madt_ioapic) == 12 && sizeof(struct acpi_madt_iso) == 10 &&
	       sizeof(struct acpi_madt_lapic_nmi) == 6, "MADT structures");
_Static_assert(sizeof(struct acpi_mcfg) == 44 && sizeof(struct acpi_mcfg_entry) == 16, "MCFG");

#define ACPI_ALIGN 16
#define XSDT_ENTRIES 3 /* FADT, MADT, MCFG */
#define MADT_REVISION 5
#define MCFG_REVISION 1
#define XSDT_REVISION 1
/* The tables are laid out one after the other from ACPI_START; `buf` is
 * the host view of [ACPI_START, ACPI_END). */
struct acpi_area {
	uint8_t *buf;
	uint64_t used;
};

static uint64_t area_take(struct acpi_area *a, uint64_t len)
{
	uint64_t at = a->used;
	a->used = (a->used + len + ACPI_ALIGN - 1) & ~(uint64_t)(ACPI_ALIGN - 1);
	return at;
}

static uint64_t madt_bytes(uint32_t ncpus)
{
	return sizeof(struct acpi_madt) + ncpus * sizeof(struct acpi_madt_lapic) +
	       sizeof(struct acpi_madt_ioapic) + sizeof(struct acpi_madt_iso) +
	       sizeof(struct acpi_madt_lapic_nmi);
}

static void write_madt(uint8_t *p, uint32_t ncpus)
{
	uint32_t len = (uint32_t)madt_bytes(ncpus);
	struct acpi_madt m;
	acpi_header_init(&m.h, "APIC", len, MADT_REVISION);
	m.lapic_address = ACPI_LAPIC_ADDR;
	m.flags = ACPI_MADT_PCAT_COMPAT; /* KVM's irqchip includes the 8259 pair */
	memcpy(p, &m, sizeof(m));
	uint64_t off = sizeof(m);
	for (uint32_t i = 0; i < ncpus; i++) {
		struct acpi_madt_lapic l = {
			.type = ACPI_MADT_LAPIC, .length = sizeof(l),
			.processor_uid = (uint8_t)i, .apic_id = (uint8_t)i, .flags = 1,
		};
		memcpy(p + off, &l, sizeof(l));
		off += sizeof(l);
	}
	struct acpi_madt_ioapic io = {
		.type = ACPI_MADT_IOAPIC, .length = sizeof(io), .ioapic_id = ACPI_IOAPIC_ID,
		.address = ACPI_IOAPIC_ADDR, .gsi_base = 0,
	};
	memcpy(p + off, &io, sizeof(io));
	off += sizeof(io);
	struct acpi_madt_iso iso = {
		.type = ACPI_MADT_ISO, .length = sizeof(iso), .bus = 0, .source = 0, .gsi = 2,
	};
	memcpy(p + off, &iso, sizeof(iso));
	off += sizeof(iso);
	struct acpi_madt_lapic_nmi nmi = {
		.type = ACPI_MADT_LAPIC_NMI, .length = sizeof(nmi), .processor_uid = 0xff, .lint = 1,
	};
	memcpy(p + off, &nmi, sizeof(nmi));
	acpi_finish((struct acpi_header *)p);
}

static void write_mcfg(uint8_t *p)
{
	struct acpi_mcfg m;
	acpi_header_init(&m.h, "MCFG", sizeof(m) + sizeof(struct acpi_mcfg_entry), MCFG_REVISION);
	m.reserved = 0;
	struct acpi_mcfg_entry e = {
		.base = PCI_ECAM_BASE, .segment = 0, .start_bus = 0, .end_bus = 0,
	};
	memcpy(p, &m, sizeof(m));
	memcpy(p + sizeof(m), &e, sizeof(e));
	acpi_finish((struct acpi_header *)p);
}

/* A byte-wide register in system I/O space. */
static struct acpi_gas io_byte_reg(uint16_t port)
{
	return (struct acpi_gas){ .space_id = ACPI_GAS_SYSTEM_IO, .bit_width = 8,
				  .access_size = ACPI_GAS_ACCESS_BYTE, .address = port };
}

static void write_fadt(uint8_t *p, uint64_t dsdt, uint16_t pm_timer_port)
{
	struct acpi_fadt f;
	memset(&f, 0, sizeof(f));
	acpi_header_init(&f.h, "FACP", sizeof(f), ACPI_FADT_REVISION);
	f.minor_revision = ACPI_FADT_MINOR_REVISION;
	f.dsdt = (uint32_t)dsdt;
	f.x_dsdt = dsdt;
	/* Hardware-reduced: no SCI, PM blocks, PM timer or GPEs; every such field
	 * is 0. Soft-off and reset go through the ACPI 5+ sleep and reset registers. */
	f.flags = ACPI_FADT_HW_REDUCED | ACPI_FADT_PWR_BUTTON | ACPI_FADT_SLP_BUTTON |
		  ACPI_FADT_RESET_REG_SUP;
	f.reset_reg = io_byte_reg(ACPI_PM_PORT + ACPI_PM_RESET);
	f.reset_value = ACPI_RESET_VALUE;
	f.sleep_control_reg = io_byte_reg(ACPI_PM_PORT + ACPI_PM_SLEEP_CONTROL);
	f.sleep_status_reg = io_byte_reg(ACPI_PM_PORT + ACPI_PM_SLEEP_STATUS);
	f.iapc_boot_arch = ACPI_BOOT_ARCH_NO_VGA | ACPI_BOOT_ARCH_NO_CMOS;
	if (pm_timer_port) {
		/* --testdev's PM timer (24 bits): an OS honours HW_REDUCED and ignores it, but
		 * kvm-unit-tests' vmexit inl_from_pmtimer reads PM_TMR_BLK as it is. */
		f.pm_tmr_blk = pm_timer_port;
		f.pm_tmr_len = 4;
		f.x_pm_tmr_blk = (struct acpi_gas){ .space_id = ACPI_GAS_SYSTEM_IO, .bit_width = 32,
						    .access_size = ACPI_GAS_ACCESS_DWORD,
						    .address = pm_timer_port };
	}
	memcpy(f.hypervisor_vendor, "MSIVM\0\0\0", 8);
	memcpy(p, &f, sizeof(f));
	acpi_finish((struct acpi_header *)p);
}

static void write_xsdt(uint8_t *p, const uint64_t *tables)
{
	struct acpi_header h;
	acpi_header_init(&h, "XSDT", sizeof(h) + XSDT_ENTRIES * 8, XSDT_REVISION);
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), tables, XSDT_ENTRIES * 8);
	acpi_finish((struct acpi_header *)p);
}

static void write_rsdp(uint8_t *p, uint64_t xsdt)
{
	struct acpi_rsdp r;
	memset(&r, 0, sizeof(r));
	memcpy(r.signature, "RSD PTR ", 8);
	memcpy(r.oem_id, ACPI_OEM_ID, 6);
	r.revision = 2;
	r.length = sizeof(r);
	r.xsdt_address = xsdt;
	r.checksum = (uint8_t)(0x100 - acpi_sum(&r, 20));
	r.extended_checksum = (uint8_t)(0x100 - acpi_sum(&r, sizeof(r)));
	memcpy(p, &r, sizeof(r));
}

int acpi_build(const struct guest_mem *gm, uint32_t ncpus, uint16_t pm_timer_port,
	       struct error *err)
{
	if (ncpus == 0 || ncpus > ACPI_MAX_CPUS)
		return error_set(err, -EINVAL, "ACPI: %u vCPUs; the MADT describes 1 to %u",
				 ncpus, ACPI_MAX_CPUS);
	uint64_t size = ACPI_END - ACPI_START;
	struct acpi_area a = { .buf = gm_ptr(gm, ACPI_START, size), .used = 0 };
	if (!a.buf)
		return error_set(err, -ERANGE, "guest RAM does not cover the ACPI area 0x%llx-0x%llx",
				 ACPI_START, ACPI_END);

	uint64_t rsdp = area_take(&a, sizeof(struct acpi_rsdp));
	uint64_t xsdt = area_take(&a, sizeof(struct acpi_header) + XSDT_ENTRIES * 8);
	uint64_t fadt = area_take(&a, sizeof(struct acpi_fadt));
	uint64_t madt = area_take(&a, madt_bytes(ncpus));
	uint64_t mcfg = area_take(&a, sizeof(struct acpi_mcfg) + sizeof(struct acpi_mcfg_entry));
	if (a.used >= size)
		return error_set(err, -E2BIG, "ACPI tables do not fit in 0x%llx-0x%llx", ACPI_START,
				 ACPI_END);
	uint64_t dsdt = a.used;
	size_t dsdt_len = acpi_dsdt_write(a.buf + dsdt, size - dsdt);
	if (!dsdt_len)
		return error_set(err, -E2BIG, "ACPI DSDT does not fit in 0x%llx-0x%llx", ACPI_START,
				 ACPI_END);

	write_madt(a.buf + madt, ncpus);
	write_mcfg(a.buf + mcfg);
	write_fadt(a.buf + fadt, ACPI_START + dsdt, pm_timer_port);
	uint64_t tables[XSDT_ENTRIES] = { ACPI_START + fadt, ACPI_START + madt, ACPI_START + mcfg };
	write_xsdt(a.buf + xsdt, tables);
	write_rsdp(a.buf + rsdp, ACPI_START + xsdt);
	return (int)(ACPI_START + rsdp);
}
