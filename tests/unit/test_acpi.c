/* Unit tests for the ACPI tables (acpi_build) and the AML encoder: checksums, pointers, MADT/MCFG
 * contents, _PRT routing; with iasl installed, every table is disassembled by `iasl -d` too. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch/x86/acpi.h"
#include "arch/x86/aml.h"
#include "arch/x86/layout.h"
#include "devices/acpi_pm.h"
#include "devices/power_button.h"
#include "pci/pci_host.h"
#include "core/guest_mem.h"

#define RAM_SIZE (16 * MiB)
#define RAM_FILL 0x5a

struct fixture {
	struct guest_mem gm;
	uint8_t *ram;
	struct error err;
	char tmpdir[64];   /* the iasl test's files, removed at teardown */
};

static int group_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->ram = malloc(RAM_SIZE);
	if (!f->ram || guest_mem_init(&f->gm, f->ram, RAM_SIZE, MMIO_HOLE_START, MMIO_HOLE_END))
		return -1;
	*state = f;
	return 0;
}

static int group_teardown(void **state)
{
	struct fixture *f = *state;
	if (f->tmpdir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->tmpdir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", f->tmpdir);
	}
	free(f->ram);
	free(f);
	return 0;
}

static int setup(void **state)
{
	struct fixture *f = *state;
	memset(f->ram, RAM_FILL, RAM_SIZE);
	memset(&f->err, 0, sizeof(f->err));
	return 0;
}

/* ---- Table access ---------------------------------------------------------- */

static const uint8_t *at(const struct fixture *f, uint64_t gpa, uint64_t len)
{
	assert_true(gpa >= ACPI_START && gpa + len <= ACPI_END);
	const uint8_t *p = gm_ptr(&f->gm, gpa, len);
	assert_non_null(p);
	return p;
}

/* The table at `gpa`: signature `sig`, inside the ACPI area, bytes summing to 0. */
static const struct acpi_header *table(const struct fixture *f, uint64_t gpa, const char *sig)
{
	const struct acpi_header *h = (const struct acpi_header *)at(f, gpa, sizeof(*h));
	if (memcmp(h->signature, sig, 4))
		fail_msg("table at 0x%llx is '%.4s', want '%s'", (unsigned long long)gpa,
			 h->signature, sig);
	at(f, gpa, h->length);
	assert_int_equal(acpi_sum(h, h->length), 0);
	assert_memory_equal(h->oem_id, ACPI_OEM_ID, 6);
	return h;
}

struct tables {
	const struct acpi_rsdp *rsdp;
	const struct acpi_header *xsdt, *fadt, *madt, *mcfg, *dsdt;
	uint64_t xsdt_entries[3];
};

static void build_pmt(struct fixture *f, uint32_t ncpus, uint16_t pm_timer, struct tables *t)
{
	int rsdp = acpi_build(&f->gm, ncpus, pm_timer, &f->err);
	if (rsdp < 0)
		fail_msg("acpi_build(%u) = %d: %s", ncpus, rsdp, f->err.msg);
	assert_int_equal(rsdp, ACPI_START);
	t->rsdp = (const struct acpi_rsdp *)at(f, (uint64_t)rsdp, sizeof(*t->rsdp));
	t->xsdt = table(f, t->rsdp->xsdt_address, "XSDT");
	assert_int_equal(t->xsdt->length, sizeof(struct acpi_header) + 3 * 8);
	memcpy(t->xsdt_entries, t->xsdt + 1, sizeof(t->xsdt_entries));
	t->fadt = table(f, t->xsdt_entries[0], "FACP");
	t->madt = table(f, t->xsdt_entries[1], "APIC");
	t->mcfg = table(f, t->xsdt_entries[2], "MCFG");
	const struct acpi_fadt *fadt = (const struct acpi_fadt *)t->fadt;
	t->dsdt = table(f, fadt->x_dsdt, "DSDT");
}

static void build(struct fixture *f, uint32_t ncpus, struct tables *t)
{
	build_pmt(f, ncpus, 0, t);
}

/* ---- RSDP, XSDT, FADT ------------------------------------------------------- */

static void test_rsdp_fields_and_both_checksums(void **state)
{
	struct fixture *f = *state;
	struct tables t;
	build(f, 1, &t);
	assert_memory_equal(t.rsdp->signature, "RSD PTR ", 8);
	assert_int_equal(t.rsdp->revision, 2);
	assert_int_equal(t.rsdp->length, 36);
	assert_int_equal(t.rsdp->rsdt_address, 0);
	assert_int_equal(acpi_sum(t.rsdp, 20), 0);
	assert_int_equal(acpi_sum(t.rsdp, 36), 0);
	assert_int_equal(ACPI_START % 16, 0); /* where a scanning OS looks */
}

static void test_xsdt_points_at_fadt_madt_mcfg(void **state)
{
	struct fixture *f = *state;
	struct tables t;
	build(f, 2, &t);
	assert_int_equal(t.xsdt->revision, 1);
	/* build() already checked the signatures and checksums behind each entry. */
	for (int i = 0; i < 3; i++)
		assert_int_equal(t.xsdt_entries[i] % 8, 0);
}

static void test_fadt_hw_reduced_with_dsdt(void **state)
{
	struct fixture *f = *state;
	struct tables t;
	build(f, 1, &t);
	const struct acpi_fadt *fadt = (const struct acpi_fadt *)t.fadt;
	assert_int_equal(fadt->h.length, 276);
	assert_int_equal(fadt->h.revision, 6);
	assert_int_equal(fadt->minor_revision, ACPI_FADT_MINOR_REVISION);
	assert_int_equal(fadt->dsdt, fadt->x_dsdt);
	assert_true(fadt->flags & ACPI_FADT_HW_REDUCED);
	assert_int_equal(fadt->sci_int, 0);
	assert_int_equal(fadt->smi_cmd, 0);
	assert_int_equal(fadt->pm_tmr_blk, 0);
	assert_int_equal(fadt->iapc_boot_arch & 2, 0); /* no 8042 */
	assert_int_equal(t.dsdt->revision, 2);
}

static void assert_io_byte_reg(const struct acpi_gas *g, uint64_t port)
{
	assert_int_equal(g->space_id, ACPI_GAS_SYSTEM_IO);
	assert_int_equal(g->bit_width, 8);
	assert_int_equal(g->bit_offset, 0);
	assert_int_equal(g->access_size, ACPI_GAS_ACCESS_BYTE);
	assert_int_equal(g->address, port);
}

/* Linux offers power-off on a hardware-reduced platform only with both sleep
 * registers set, and reboots through RESET_REG only with the flag set. */
static void test_fadt_sleep_and_reset_registers(void **state)
{
	struct fixture *f = *state;
	struct tables t;
	build(f, 1, &t);
	const struct acpi_fadt *fadt = (const struct acpi_fadt *)t.fadt;
	assert_true(fadt->flags & ACPI_FADT_RESET_REG_SUP);
	assert_io_byte_reg(&fadt->reset_reg, ACPI_PM_PORT + ACPI_PM_RESET);
	assert_int_equal(fadt->reset_value, ACPI_RESET_VALUE);
	assert_io_byte_reg(&fadt->sleep_control_reg, ACPI_PM_PORT + ACPI_PM_SLEEP_CONTROL);
	assert_io_byte_reg(&fadt->sleep_status_reg, ACPI_PM_PORT + ACPI_PM_SLEEP_STATUS);
	/* No legacy PM1 blocks beside them. */
	assert_int_equal(fadt->pm1a_cnt_blk, 0);
	assert_int_equal(fadt->x_pm1a_cnt_blk.address, 0);
}

static void test_tables_do_not_overlap(void **state)
{
	struct fixture *f = *state;
	struct tables t;
	build(f, 255, &t);
	uint64_t start[6] = { ACPI_START, t.rsdp->xsdt_address, t.xsdt_entries[0],
			      t.xsdt_entries[1], t.xsdt_entries[2],
			      ((const struct acpi_fadt *)t.fadt)->x_dsdt };
	uint64_t len[6] = { 36, t.xsdt->length, t.fadt->length, t.madt->length, t.mcfg->length,
			    t.dsdt->length };
	for (int i = 0; i < 6; i++) {
		assert_true(start[i] + len[i] <= ACPI_END);
		for (int j = 0; j < 6; j++)
			if (i != j)
				assert_true(start[i] + len[i] <= start[j] ||
					    start[j] + len[j] <= start[i]);
	}
}

/* ---- MADT ---------------------------------------------------------------------- */

struct madt_counts {
	uint32_t lapics, ioapics, isos, nmis;
};

static struct madt_counts walk_madt(const struct acpi_header *h, uint32_t ncpus)
{
	struct madt_counts c = { 0 };
	const uint8_t *p = (const uint8_t *)h;
	uint32_t off = sizeof(struct acpi_madt);
	while (off < h->length) {
		assert_true(off + 2 <= h->length);
		uint8_t type = p[off], len = p[off + 1];
		assert_true(len >= 2 && off + len <= h->length);
		if (type == ACPI_MADT_LAPIC) {
			struct acpi_madt_lapic l;
			assert_int_equal(len, sizeof(l));
			memcpy(&l, p + off, sizeof(l));
			assert_int_equal(l.apic_id, c.lapics); /* APIC ID = vCPU index, in order */
			assert_int_equal(l.processor_uid, c.lapics);
			assert_int_equal(l.flags, 1);
			c.lapics++;
		} else if (type == ACPI_MADT_IOAPIC) {
			struct acpi_madt_ioapic io;
			assert_int_equal(len, sizeof(io));
			memcpy(&io, p + off, sizeof(io));
			assert_int_equal(io.address, 0xfec00000u);
			assert_int_equal(io.gsi_base, 0);
			c.ioapics++;
		} else if (type == ACPI_MADT_ISO) {
			struct acpi_madt_iso iso;
			assert_int_equal(len, sizeof(iso));
			memcpy(&iso, p + off, sizeof(iso));
			assert_int_equal(iso.bus, 0);
			assert_int_equal(iso.source, 0);
			assert_int_equal(iso.gsi, 2);
			c.isos++;
		} else if (type == ACPI_MADT_LAPIC_NMI) {
			c.nmis++;
		} else {
			fail_msg("unexpected MADT entry type %u", type);
		}
		off += len;
	}
	assert_int_equal(off, h->length);
	(void)ncpus;
	return c;
}

static void check_madt(struct fixture *f, uint32_t ncpus)
{
	struct tables t;
	setup((void **)&f);
	build(f, ncpus, &t);
	const struct acpi_madt *m = (const struct acpi_madt *)t.madt;
	assert_int_equal(m->lapic_address, 0xfee00000u);
	struct madt_counts c = walk_madt(t.madt, ncpus);
	assert_int_equal(c.lapics, ncpus);
	assert_int_equal(c.ioapics, 1);
	assert_int_equal(c.isos, 1);
	assert_int_equal(c.nmis, 1);
}

static void test_madt_one_lapic_per_vcpu(void **state)
{
	struct fixture *f = *state;
	check_madt(f, 1);
	check_madt(f, 2);
	check_madt(f, 8);
	check_madt(f, ACPI_MAX_CPUS);
}

/* --testdev's PM timer: PM_TMR_BLK and X_PM_TMR_BLK name its port, 4 bytes, dword access. */
static void test_fadt_pm_timer_only_when_asked(void **state)
{
	struct fixture *f = *state;
	struct tables t;
	build_pmt(f, 1, 0x608, &t);
	const struct acpi_fadt *fadt = (const struct acpi_fadt *)t.fadt;
	assert_int_equal(fadt->pm_tmr_blk, 0x608);
	assert_int_equal(fadt->pm_tmr_len, 4);
	assert_int_equal(fadt->x_pm_tmr_blk.space_id, ACPI_GAS_SYSTEM_IO);
	assert_int_equal(fadt->x_pm_tmr_blk.bit_width, 32);
	assert_int_equal(fadt->x_pm_tmr_blk.access_size, ACPI_GAS_ACCESS_DWORD);
	assert_int_equal(fadt->x_pm_tmr_blk.address, 0x608);
	assert_true(fadt->flags & ACPI_FADT_HW_REDUCED);
	build(f, 1, &t);
	fadt = (const struct acpi_fadt *)t.fadt;
	assert_int_equal(fadt->pm_tmr_blk, 0);
	assert_int_equal(fadt->pm_tmr_len, 0);
	assert_int_equal(fadt->x_pm_tmr_blk.address, 0);
}

static void test_bad_cpu_counts_rejected(void **state)
{
	struct fixture *f = *state;
	assert_int_equal(acpi_build(&f->gm, 0, 0, &f->err), -EINVAL);
	assert_non_null(strstr(f->err.msg, "vCPUs"));
	assert_int_equal(acpi_build(&f->gm, ACPI_MAX_CPUS + 1, 0, &f->err), -EINVAL);
	assert_int_equal(f->ram[ACPI_START], RAM_FILL);
}

static void test_no_ram_under_acpi_area_rejected(void **state)
{
	struct fixture *f = *state;
	struct guest_mem tiny;
	assert_int_equal(guest_mem_init(&tiny, f->ram, 512 * KiB, MMIO_HOLE_START, MMIO_HOLE_END), 0);
	assert_int_equal(acpi_build(&tiny, 1, 0, &f->err), -ERANGE);
	assert_non_null(strstr(f->err.msg, "ACPI area"));
}

/* ---- MCFG ----------------------------------------------------------------------- */

static void test_mcfg_ecam_bus0(void **state)
{
	struct fixture *f = *state;
	struct tables t;
	build(f, 1, &t);
	assert_int_equal(t.mcfg->length, 60);
	struct acpi_mcfg_entry e;
	memcpy(&e, (const uint8_t *)t.mcfg + sizeof(struct acpi_mcfg), sizeof(e));
	assert_int_equal(e.base, PCI_ECAM_BASE);
	assert_int_equal(e.segment, 0);
	assert_int_equal(e.start_bus, 0);
	assert_int_equal(e.end_bus, 0);
}

/* ---- DSDT and AML ------------------------------------------------------------------ */

static void test_intx_gsi_matches_pci_host(void **state)
{
	for (uint8_t slot = 0; slot < 32; slot++) {
		assert_int_equal(acpi_pci_intx_gsi(slot, 0), pci_host_intx_gsi(slot));
		for (uint8_t pin = 0; pin < 4; pin++) {
			uint32_t g = acpi_pci_intx_gsi(slot, pin);
			assert_int_equal(g, 16 + (slot + pin) % 8);
		}
	}
}

static void test_eisa_ids(void **state)
{
	assert_int_equal(aml_eisa_id("PNP0A08"), 0x080ad041u);
	assert_int_equal(aml_eisa_id("PNP0A03"), 0x030ad041u);
	assert_int_equal(aml_eisa_id("PNP0C02"), 0x020cd041u);
	assert_int_equal(aml_eisa_id("PNP0501"), 0x0105d041u);
}

/* A package whose body is `body` bytes: PkgLength takes 1, 2 or 3 bytes and counts itself. */
static void check_pkglength(size_t body, const uint8_t *want, size_t want_len)
{
	static uint8_t buf[1 << 17], fill[1 << 17];
	struct aml a;
	aml_init(&a, buf, sizeof(buf));
	size_t m = aml_open(&a, false, AML_PACKAGE_OP);
	aml_bytes(&a, fill, body);
	aml_close(&a, m);
	assert_false(a.overflow);
	assert_int_equal(a.len, 1 + want_len + body);
	assert_memory_equal(buf + 1, want, want_len);
}

static void test_pkglength_encodings(void **state)
{
	check_pkglength(0, (const uint8_t[]){ 0x01 }, 1);
	check_pkglength(62, (const uint8_t[]){ 0x3f }, 1);
	/* 63 + 2 = 65 = 0x41: two bytes, low nibble 1, then 0x04. */
	check_pkglength(63, (const uint8_t[]){ 0x41, 0x04 }, 2);
	check_pkglength(4093, (const uint8_t[]){ 0x4f, 0xff }, 2);
	/* 4094 + 3 = 0x1001: three bytes. */
	check_pkglength(4094, (const uint8_t[]){ 0x81, 0x00, 0x01 }, 3);
}

static void test_aml_overflow_is_reported(void **state)
{
	uint8_t buf[12];
	struct aml a;
	aml_init(&a, buf, sizeof(buf));
	aml_name_int(&a, "_UID", 0x12345678); /* 10 bytes */
	assert_false(a.overflow);
	aml_name_int(&a, "_UID", 1);
	assert_true(a.overflow);
	assert_int_equal(acpi_dsdt_write(buf, sizeof(buf)), 0);
	static uint8_t small[200];
	assert_int_equal(acpi_dsdt_write(small, sizeof(small)), 0);
}

static int contains(const uint8_t *p, size_t n, const void *needle, size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (!memcmp(p + i, needle, m))
			return 1;
	return 0;
}

static void test_dsdt_names_and_prt_entries(void **state)
{
	struct fixture *f = *state;
	struct tables t;
	build(f, 1, &t);
	const uint8_t *d = (const uint8_t *)t.dsdt;
	size_t n = t.dsdt->length;
	assert_true(contains(d, n, "\\_SB_", 5));
	assert_true(contains(d, n, "PCI0", 4));
	assert_true(contains(d, n, "_PRT", 4));
	assert_true(contains(d, n, "_CRS", 4));
	assert_true(contains(d, n, "ECAM", 4));
	assert_true(contains(d, n, "COM1", 4));
	/* Name(\_S5_, Package(2){5, Zero}) at the root. */
	static const uint8_t s5[] = { 0x08, '\\', '_', 'S', '5', '_', 0x12, 0x05, 0x02, 0x0a,
				      ACPI_SLP_TYP_S5, 0x00 };
	assert_true(contains(d, n, s5, sizeof(s5)));
	/* The GED: Name(_HID, "ACPI0013"), its one edge interrupt on ACPI_GED_GSI, and
	 * Method(_EVT, 1) { Notify(PWRB, 0x80) }; the button it notifies is a PNP0C0C. */
	assert_true(contains(d, n, "GED0", 4));
	static const uint8_t ged_hid[] = { 0x08, '_', 'H', 'I', 'D', 0x0d, 'A', 'C', 'P', 'I',
					   '0', '0', '1', '3', 0x00 };
	assert_true(contains(d, n, ged_hid, sizeof(ged_hid)));
	static const uint8_t ged_irq[] = { 0x89, 0x06, 0x00, 0x03, 0x01, ACPI_GED_GSI, 0, 0, 0 };
	assert_true(contains(d, n, ged_irq, sizeof(ged_irq)));
	static const uint8_t evt[] = { '_', 'E', 'V', 'T', 0x01, 0x86, 'P', 'W', 'R', 'B', 0x0a,
				       ACPI_NOTIFY_BUTTON_PRESSED };
	assert_true(contains(d, n, evt, sizeof(evt)));
	uint32_t pnp0c0c = aml_eisa_id("PNP0C0C");
	static uint8_t pwrb_hid[] = { 0x08, '_', 'H', 'I', 'D', 0x0c, 0, 0, 0, 0 };
	memcpy(pwrb_hid + 6, &pnp0c0c, 4);
	assert_true(contains(d, n, "PWRB", 4));
	assert_true(contains(d, n, pwrb_hid, sizeof(pwrb_hid)));
	/* Slot 3 pin D: Package(4){0x0003FFFF, 3, Zero, 22}. */
	static const uint8_t slot3_pind[] = { 0x12, 0x0c, 0x04, 0x0c, 0xff, 0xff, 0x03, 0x00,
					      0x0a, 0x03, 0x00, 0x0a, 0x16 };
	assert_true(contains(d, n, slot3_pind, sizeof(slot3_pind)));
	/* Slot 0 pin A: Package(4){0xFFFF, Zero, Zero, 16}. */
	static const uint8_t slot0_pina[] = { 0x12, 0x09, 0x04, 0x0b, 0xff, 0xff, 0x00, 0x00,
					      0x0a, 0x10 };
	assert_true(contains(d, n, slot0_pina, sizeof(slot0_pina)));
	/* The MMIO window in _CRS: DWordMemory min/max. */
	uint8_t win[8];
	uint32_t lo = (uint32_t)PCI_MMIO_START, hi = (uint32_t)(PCI_MMIO_END - 1);
	memcpy(win, &lo, 4);
	memcpy(win + 4, &hi, 4);
	assert_true(contains(d, n, win, sizeof(win)));
}

/* ---- iasl -------------------------------------------------------------------- */

static int have_iasl(void)
{
	return system("command -v iasl >/dev/null 2>&1") == 0;
}

static void dump(const char *dir, const char *name, const void *p, size_t len)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s.dat", dir, name);
	FILE *fp = fopen(path, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(p, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

/* Runs `iasl -d NAME.dat` in `dir`; fails with iasl's output unless it exits 0 and wrote NAME.dsl. */
static void disassemble(const char *dir, const char *name)
{
	char cmd[512], dsl[256];
	snprintf(cmd, sizeof(cmd), "cd '%s' && iasl -d %s.dat >%s.log 2>&1", dir, name, name);
	int st = system(cmd);
	snprintf(dsl, sizeof(dsl), "%s/%s.dsl", dir, name);
	if (st != 0 || access(dsl, R_OK) != 0) {
		snprintf(cmd, sizeof(cmd), "cat '%s/%s.log' >&2", dir, name);
		if (system(cmd)) {}
		fail_msg("iasl -d %s.dat failed (status %d)", name, st);
	}
}

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = 0;
	return buf;
}

static void assert_has(const char *text, const char *what)
{
	if (!strstr(text, what))
		fail_msg("disassembly lacks '%s'", what);
}

static void test_iasl_disassembles_every_sdt(void **state)
{
	struct fixture *f = *state;
	if (!have_iasl()) {
		print_message("iasl not installed (apt-get install acpica-tools): skipping the iasl check\n");
		skip();
	}
	struct tables t;
	build(f, 4, &t);
	char *dir = f->tmpdir;
	snprintf(dir, sizeof(f->tmpdir), "/tmp/msivm-acpi-XXXXXX");
	assert_non_null(mkdtemp(dir));
	dump(dir, "xsdt", t.xsdt, t.xsdt->length);
	dump(dir, "facp", t.fadt, t.fadt->length);
	dump(dir, "apic", t.madt, t.madt->length);
	dump(dir, "mcfg", t.mcfg, t.mcfg->length);
	dump(dir, "dsdt", t.dsdt, t.dsdt->length);
	/* iasl -d takes tables with a standard header only: not the RSDP (checked above). */
	static const char *names[] = { "xsdt", "facp", "apic", "mcfg", "dsdt" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		disassemble(dir, names[i]);

	char path[256];
	snprintf(path, sizeof(path), "%s/dsdt.dsl", dir);
	const char *dsl = slurp(path);
	assert_has(dsl, "Device (PCI0)");
	assert_has(dsl, "EisaId (\"PNP0A08\")");
	assert_has(dsl, "EisaId (\"PNP0A03\")");
	assert_has(dsl, "Name (_PRT, Package (0x80)");
	assert_has(dsl, "0x0003FFFF");
	assert_has(dsl, "0x001FFFFF");
	assert_has(dsl, "WordBusNumber (ResourceProducer");
	assert_has(dsl, "0xC0000000");
	assert_has(dsl, "0xDFFFFFFF");
	assert_has(dsl, "0x0CF8");
	assert_has(dsl, "Device (ECAM)");
	assert_has(dsl, "Memory32Fixed (ReadWrite");
	assert_has(dsl, "Device (COM1)");
	assert_has(dsl, "IRQNoFlags ()");
	assert_has(dsl, "Name (\\_S5, Package (0x02)");
	assert_has(dsl, "Device (PWRB)");
	assert_has(dsl, "EisaId (\"PNP0C0C\") /* Power Button Device */");
	assert_has(dsl, "Device (GED0)");
	assert_has(dsl, "Name (_HID, \"ACPI0013\"");
	assert_has(dsl, "Interrupt (ResourceConsumer, Edge, ActiveHigh, Exclusive, ,, )");
	assert_has(dsl, "Method (_EVT, 1, NotSerialized)");
	assert_has(dsl, "Notify (PWRB, 0x80)");
	assert_has(dsl, "0x00000005,");
	snprintf(path, sizeof(path), "%s/apic.dsl", dir);
	const char *apic = slurp(path);
	assert_has(apic, "Local Apic Address : FEE00000");
	assert_has(apic, "Address : FEC00000");
	snprintf(path, sizeof(path), "%s/facp.dsl", dir);
	const char *facp = slurp(path);
	assert_has(facp, "Reset Register Supported (V2) : 1");
	assert_has(facp, "Address : 0000000000000602");
	assert_has(facp, "Address : 0000000000000600");
	assert_has(facp, "Address : 0000000000000601");
	snprintf(path, sizeof(path), "%s/mcfg.dsl", dir);
	assert_has(slurp(path), "Base Address : 00000000E0000000");

	/* The disassembly compiles back without errors. */
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "cd '%s' && iasl dsdt.dsl >dsdt-compile.log 2>&1 || "
		 "{ cat dsdt-compile.log >&2; false; }", dir);
	if (system(cmd) != 0)
		fail_msg("iasl could not compile the disassembled DSDT back");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup(fn, setup)
		T(test_fadt_pm_timer_only_when_asked), T(test_rsdp_fields_and_both_checksums),
		T(test_xsdt_points_at_fadt_madt_mcfg),
		T(test_fadt_hw_reduced_with_dsdt),
		T(test_fadt_sleep_and_reset_registers),
		T(test_tables_do_not_overlap),
		T(test_madt_one_lapic_per_vcpu),
		T(test_bad_cpu_counts_rejected),
		T(test_no_ram_under_acpi_area_rejected),
		T(test_mcfg_ecam_bus0),
		T(test_intx_gsi_matches_pci_host),
		T(test_eisa_ids),
		T(test_pkglength_encodings),
		T(test_aml_overflow_is_reported),
		T(test_dsdt_names_and_prt_entries),
		T(test_iasl_disassembles_every_sdt),
#undef T
	};
	return cmocka_run_group_tests_name("acpi", tests, group_setup, group_teardown);
}
