/* ACPI DSDT: PCI host bridge (bus, windows, _PRT), ECAM reservation, COM1 and the power button -> AML bytes. */
#include "arch/x86/acpi.h"

#include <string.h>

#include "arch/x86/aml.h"
#include "devices/power_button.h"
#include "devices/pvpanic.h"
#include "arch/x86/layout.h"
#include "devices/acpi_pm.h"
#include "pci/pci_host.h"

#define DSDT_REVISION 2   /* 64-bit AML integers */
#define PCI_SLOTS     32
#define PCI_PINS      4
#define COM1_PORT     0x3f8
#define COM1_IRQ      4

/* Resource descriptors (ACPI 6.3, 6.4). Large items: tag, 16-bit length. */
#define RES_IO            0x47  /* small: I/O port, length 7 */
#define RES_IRQ_NOFLAGS   0x22  /* small: IRQ mask, length 2 (edge, active high) */
#define RES_END           0x79  /* small: end tag, length 1 */
#define RES_EXT_IRQ       0x89  /* large: extended interrupt */
#define EXT_IRQ_CONSUMER_EDGE_HIGH 0x03 /* consumer, edge-triggered, active high, exclusive */
#define RES_MEM32_FIXED   0x86
#define RES_DWORD_ADDR    0x87
#define RES_WORD_ADDR     0x88
#define ADDR_SPACE_MEM    0
#define ADDR_SPACE_BUS    2
#define ADDR_FLAGS_PRODUCER_FIXED 0x0c /* _MAF | _MIF, positive decode, producer */
#define MEM_FLAGS_RW_UNCACHED     0x01

uint32_t acpi_pci_intx_gsi(uint8_t slot, uint8_t pin)
{
	uint32_t a = pci_host_intx_gsi(slot) - 16;
	return 16 + (a + pin) % 8;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }

/* I/O port range [base, base+len) with 16-bit decode. Returns bytes written (8). */
static size_t res_io(uint8_t *p, uint16_t base, uint8_t len)
{
	p[0] = RES_IO;
	p[1] = 1;
	put16(p + 2, base);
	put16(p + 4, base);
	p[6] = 1;
	p[7] = len;
	return 8;
}

static size_t res_end(uint8_t *p)
{
	p[0] = RES_END;
	p[1] = 0; /* checksum 0: treated as valid */
	return 2;
}

/* WordBusNumber(ResourceProducer, MinFixed, MaxFixed, PosDecode, 0, first, last, 0, count). */
static size_t res_bus(uint8_t *p, uint16_t first, uint16_t last)
{
	p[0] = RES_WORD_ADDR;
	put16(p + 1, 13);
	p[3] = ADDR_SPACE_BUS;
	p[4] = ADDR_FLAGS_PRODUCER_FIXED;
	p[5] = 0;
	put16(p + 6, 0);
	put16(p + 8, first);
	put16(p + 10, last);
	put16(p + 12, 0);
	put16(p + 14, (uint16_t)(last - first + 1));
	return 16;
}

/* DWordMemory(ResourceProducer, PosDecode, MinFixed, MaxFixed, NonCacheable,
 * ReadWrite, 0, start, end - 1, 0, end - start). */
static size_t res_mem32(uint8_t *p, uint32_t start, uint32_t end)
{
	p[0] = RES_DWORD_ADDR;
	put16(p + 1, 23);
	p[3] = ADDR_SPACE_MEM;
	p[4] = ADDR_FLAGS_PRODUCER_FIXED;
	p[5] = MEM_FLAGS_RW_UNCACHED;
	put32(p + 6, 0);
	put32(p + 10, start);
	put32(p + 14, end - 1);
	put32(p + 18, 0);
	put32(p + 22, end - start);
	return 26;
}

/* Memory32Fixed(ReadWrite, base, len). */
static size_t res_mem32_fixed(uint8_t *p, uint32_t base, uint32_t len)
{
	p[0] = RES_MEM32_FIXED;
	put16(p + 1, 9);
	p[3] = 1;
	put32(p + 4, base);
	put32(p + 8, len);
	return 12;
}

static void pci0_prt(struct aml *a)
{
	aml_byte(a, AML_NAME_OP);
	aml_name(a, "_PRT");
	size_t pkg = aml_open(a, false, AML_PACKAGE_OP);
	aml_byte(a, PCI_SLOTS * PCI_PINS);
	for (uint8_t slot = 0; slot < PCI_SLOTS; slot++) {
		for (uint8_t pin = 0; pin < PCI_PINS; pin++) {
			size_t e = aml_open(a, false, AML_PACKAGE_OP);
			aml_byte(a, 4);
			aml_int(a, ((uint64_t)slot << 16) | 0xffff); /* any function of the slot */
			aml_int(a, pin);
			aml_int(a, 0); /* no link device: the next field is a GSI */
			aml_int(a, acpi_pci_intx_gsi(slot, pin));
			aml_close(a, e);
		}
	}
	aml_close(a, pkg);
}

static void pci0(struct aml *a)
{
	size_t dev = aml_open(a, true, AML_DEVICE_OP);
	aml_name(a, "PCI0");
	aml_name_int(a, "_HID", aml_eisa_id("PNP0A08"));
	aml_name_int(a, "_CID", aml_eisa_id("PNP0A03"));
	aml_name_int(a, "_SEG", 0);
	aml_name_int(a, "_BBN", 0);
	aml_name_int(a, "_UID", 0);
	uint8_t crs[64];
	size_t n = 0;
	n += res_bus(crs + n, 0, 0);
	n += res_io(crs + n, PCI_CONFIG_ADDR_PORT, 8);
	n += res_mem32(crs + n, (uint32_t)PCI_MMIO_START, (uint32_t)PCI_MMIO_END);
	n += res_end(crs + n);
	aml_name_buffer(a, "_CRS", crs, n);
	pci0_prt(a);
	aml_close(a, dev);
}

/* Motherboard resources: Linux uses the MCFG's ECAM window only when it is
 * reserved here (or in e820). */
static void ecam(struct aml *a)
{
	size_t dev = aml_open(a, true, AML_DEVICE_OP);
	aml_name(a, "ECAM");
	aml_name_int(a, "_HID", aml_eisa_id("PNP0C02"));
	aml_name_int(a, "_UID", 0);
	uint8_t crs[16];
	size_t n = res_mem32_fixed(crs, (uint32_t)PCI_ECAM_BASE, 1 << 20);
	n += res_end(crs + n);
	aml_name_buffer(a, "_CRS", crs, n);
	aml_close(a, dev);
}

static void com1(struct aml *a)
{
	size_t dev = aml_open(a, true, AML_DEVICE_OP);
	aml_name(a, "COM1");
	aml_name_int(a, "_HID", aml_eisa_id("PNP0501"));
	aml_name_int(a, "_UID", 1);
	uint8_t crs[16];
	size_t n = res_io(crs, COM1_PORT, 8);
	crs[n++] = RES_IRQ_NOFLAGS;
	put16(crs + n, 1u << COM1_IRQ);
	n += 2;
	n += res_end(crs + n);
	aml_name_buffer(a, "_CRS", crs, n);
	aml_close(a, dev);
}

/* Device(PEVT): pvpanic (QEMU0001, one I/O port), which Linux's pvpanic-mmio driver binds: on
 * a panic the guest writes 1 there and msivm stops it as crashed (and dumps it when asked). */
static void pvpanic(struct aml *a)
{
	size_t dev = aml_open(a, true, AML_DEVICE_OP);
	aml_name(a, "PEVT");
	aml_name_string(a, "_HID", "QEMU0001");
	aml_name_int(a, "_UID", 0);
	uint8_t crs[16];
	size_t n = res_io(crs, PVPANIC_PORT, PVPANIC_SIZE);
	n += res_end(crs + n);
	aml_name_buffer(a, "_CRS", crs, n);
	aml_close(a, dev);
}

/* Device(PWRB): the power button (PNP0C0C), a control-method button whose
 * presses the GED announces with Notify(PWRB, 0x80). */
static void power_button(struct aml *a)
{
	size_t dev = aml_open(a, true, AML_DEVICE_OP);
	aml_name(a, "PWRB");
	aml_name_int(a, "_HID", aml_eisa_id("PNP0C0C"));
	aml_name_int(a, "_UID", 0);
	aml_close(a, dev);
}

/* Device(GED0): the hardware-reduced platform's Generic Event Device
 * (ACPI 6.3, 5.6.9). Its one interrupt, ACPI_GED_GSI, means "power button
 * pressed": Method(_EVT, 1) { Notify(PWRB, 0x80) }. */
static void ged(struct aml *a)
{
	size_t dev = aml_open(a, true, AML_DEVICE_OP);
	aml_name(a, "GED0");
	aml_name_string(a, "_HID", "ACPI0013");
	aml_name_int(a, "_UID", 0);
	uint8_t crs[16];
	size_t n = 0;
	crs[n++] = RES_EXT_IRQ;
	put16(crs + n, 6); /* flags, count, one 32-bit GSI */
	n += 2;
	crs[n++] = EXT_IRQ_CONSUMER_EDGE_HIGH;
	crs[n++] = 1;
	put32(crs + n, ACPI_GED_GSI);
	n += 4;
	n += res_end(crs + n);
	aml_name_buffer(a, "_CRS", crs, n);
	size_t m = aml_open(a, false, AML_METHOD_OP);
	aml_name(a, "_EVT");
	aml_byte(a, 1); /* one argument (the GSI), not serialized */
	aml_byte(a, AML_NOTIFY_OP);
	aml_name(a, "PWRB");
	aml_int(a, ACPI_NOTIFY_BUTTON_PRESSED);
	aml_close(a, m);
	aml_close(a, dev);
}

/* Name(\_S5, Package() { SLP_TYPa, SLP_TYPb }): Linux offers power-off
 * only when \_S5 exists (and, hardware-reduced, the FADT has the sleep
 * registers); it writes SLP_TYPa to the sleep control register. */
static void s5(struct aml *a)
{
	aml_byte(a, AML_NAME_OP);
	aml_name(a, "\\_S5_");
	size_t pkg = aml_open(a, false, AML_PACKAGE_OP);
	aml_byte(a, 2);
	aml_int(a, ACPI_SLP_TYP_S5);
	aml_int(a, 0);
	aml_close(a, pkg);
}

size_t acpi_dsdt_write(uint8_t *buf, size_t cap)
{
	struct acpi_header h;
	if (cap < sizeof(h))
		return 0;
	struct aml a;
	aml_init(&a, buf + sizeof(h), cap - sizeof(h));
	s5(&a);
	size_t sb = aml_open(&a, false, AML_SCOPE_OP);
	aml_name(&a, "\\_SB_");
	pci0(&a);
	ecam(&a);
	com1(&a);
	power_button(&a);
	ged(&a);
	pvpanic(&a);
	aml_close(&a, sb);
	if (a.overflow)
		return 0;

	uint32_t len = (uint32_t)(sizeof(h) + a.len);
	acpi_header_init(&h, "DSDT", len, DSDT_REVISION);
	memcpy(buf, &h, sizeof(h));
	acpi_finish((struct acpi_header *)buf);
	return len;
}
