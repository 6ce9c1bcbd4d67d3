/* Unit tests for the Linux lab's passthrough experiment: its plan, the guest command lines and VMM arguments' parts, a recorded console's NVMe interrupts, the report's table and page. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lab/linux_lab.h"
#include "lab/linux_report.h"

#define DATA "tests/unit/data/linux/"

static const struct ll_config *cfg(const char *name)
{
	for (unsigned i = 0; i < ll_nconfigs; i++)
		if (!strcmp(ll_configs[i].name, name))
			return &ll_configs[i];
	fail_msg("no configuration %s", name);
	return NULL;
}

static unsigned mask_of(const char *const *names, unsigned n)
{
	unsigned m = 0;
	for (unsigned k = 0; k < n; k++)
		m |= 1u << (unsigned)(cfg(names[k]) - ll_configs);
	return m;
}

static const char *const pt_names[] = { "pt-msix", "pt-relay", "pt-intx", "pt-dedicated",
					"pt-virtio" };

/* The configurations: passthrough ones need the device and count its rows; only qd1 and qd32. */
static void test_configs(void **state)
{
	(void)state;
	uint32_t works = LL_WORK_BIT(LL_FIO_QD1) | LL_WORK_BIT(LL_FIO_QD32);
	for (unsigned k = 0; k < 5; k++) {
		const struct ll_config *c = cfg(pt_names[k]);
		assert_int_equal(c->works, works);
		bool pt = strcmp(c->name, "pt-virtio") != 0;
		assert_int_equal(ll_config_needs_vfio(c), pt);
		assert_string_equal(ll_config_irq_rows(c), pt ? "nvme" : "virtio");
	}
	assert_string_equal(cfg("pt-relay")->vfio_extra, ",relay=on");
	assert_string_equal(cfg("pt-relay")->qemu_vfio_extra, ",x-no-kvm-msix=on");
	assert_string_equal(cfg("pt-intx")->guest_extra, "pci=nomsi");
	assert_true(cfg("pt-dedicated")->dedicated);
	/* none of the older configurations changed: virtio rows, every workload */
	assert_int_equal(cfg("msix")->works, 0);
	assert_false(ll_config_needs_vfio(cfg("msix")));
	assert_string_equal(ll_config_irq_rows(cfg("nomsi")), "virtio");
}

/* The plan beside QEMU: every pt-* cell runs under both VMMs but pt-dedicated (msivm only). */
static void test_plan(void **state)
{
	(void)state;
	struct ll_options o = { .runs = 2, .vs_qemu = true };
	struct ll_cell cells[2 * 16];
	memset(cells, 0, sizeof(cells));
	unsigned n = ll_plan(&o, mask_of(pt_names, 5), cells);
	assert_int_equal(n, 10);
	unsigned skipped = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!cells[i].skipped)
			continue;
		skipped++;
		assert_int_equal(cells[i].vmm, LAB_QEMU);
		assert_string_equal(cells[i].cfg->name, "pt-dedicated");
		assert_non_null(strstr(cells[i].skip_reason, "--dedicated"));
	}
	assert_int_equal(skipped, 1);
	assert_int_equal(o.runs_planned, 9 * 2);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	assert_non_null(f);
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *s = strdup(buf);
	assert_non_null(s);
	return s;
}

/* Appends "lab| " + each line of text. */
static void block(FILE *f, const char *name, const char *text)
{
	fprintf(f, "lab: begin %s\n", name);
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		fprintf(f, "lab| %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	fprintf(f, "lab: end %s\n", name);
}

static const char irq_fmt[] =
	"           CPU0       \n"
	" 25:        312   IO-APIC   4-edge      ttyS0\n"
	" 29:       %4u   PCI-MSI 16385-edge      virtio0-req.0\n"
	" 40:       %4u   IR-PCI-MSIX-0000:00:04.0    1-edge      nvme0q1\n"
	"LOC:       9999   Local timer interrupts\n";

/* A console as lab-init prints it for a passthrough run: qd1 and qd32 only, on the NVMe. */
static char *pt_console(unsigned nvme_before, unsigned nvme_after)
{
	char *con = NULL, irq[512];
	size_t len = 0;
	FILE *f = open_memstream(&con, &len);
	char *fio = slurp(DATA "fio-randread.json");
	fprintf(f, "lab: ready uptime=3.21\n");
	block(f, "dmesg", "[    1.875000] Run /lab-init as init process");
	snprintf(irq, sizeof(irq), irq_fmt, 10u, nvme_before);
	block(f, "irq-ready", irq);
	static const char *const works[] = { "fio-qd1", "fio-qd32" };
	for (unsigned w = 0; w < 2; w++) {
		char name[64];
		fprintf(f, "lab: mark begin %s\nlab: mark end %s\n", works[w], works[w]);
		snprintf(name, sizeof(name), "irq-before-%s", works[w]);
		snprintf(irq, sizeof(irq), irq_fmt, 10u, nvme_before);
		block(f, name, irq);
		block(f, works[w], fio);
		snprintf(name, sizeof(name), "irq-after-%s", works[w]);
		/* virtio's line moved too (the NIC): not the device measured */
		snprintf(irq, sizeof(irq), irq_fmt, 500u, nvme_after);
		block(f, name, irq);
	}
	fprintf(f, "lab: poweroff\n");
	fclose(f);
	free(fio);
	return con;
}

/* The NVMe's rows are counted, the virtio ones are not; only qd1 and qd32 were asked. */
static void test_console_counts_the_nvme(void **state)
{
	(void)state;
	char *con = pt_console(100, 1100);
	struct ll_run r = { .run_init_s = NAN, .ready_s = NAN, .worked = true,
			    .asked = cfg("pt-msix")->works };
	ll_parse_console(con, cfg("pt-msix"), true, &r);
	assert_false(r.failed);
	assert_true(r.work[LL_FIO_QD1].ran);
	assert_true(r.work[LL_FIO_QD32].ran);
	assert_false(r.work[LL_FIO_RW].ran); /* not asked: not a failure either */
	const struct lp_irq_table *t = r.work[LL_FIO_QD1].irqs;
	assert_non_null(t);
	assert_int_equal(t->n, 1);
	assert_string_equal(t->rows[0].names, "nvme0q1");
	assert_int_equal(t->rows[0].total, 1000);
	double ios = r.work[LL_FIO_QD1].ios;
	assert_true(ios > 0);
	assert_true(fabs(lr_value(&r, LR_IRQ_QD1) - 1000 / ios) < 1e-9);
	/* The same console read as the virtio comparison counts virtio's rows. */
	struct ll_run v = { .run_init_s = NAN, .ready_s = NAN, .worked = true,
			    .asked = cfg("pt-virtio")->works };
	ll_parse_console(con, cfg("pt-virtio"), true, &v);
	assert_int_equal(v.work[LL_FIO_QD32].irqs->rows[0].total, 490);
	ll_run_free(&r);
	ll_run_free(&v);
	free(con);
	/* A passthrough run whose guest printed no qd32 block failed. */
	con = pt_console(100, 1100);
	char *cut = strstr(con, "lab: mark begin fio-qd32");
	assert_non_null(cut);
	strcpy(cut, "lab: poweroff\n");
	struct ll_run c = { .worked = true, .asked = cfg("pt-msix")->works };
	ll_parse_console(con, cfg("pt-msix"), true, &c);
	assert_true(c.failed);
	assert_non_null(strstr(c.error, "fio-qd32"));
	ll_run_free(&c);
	free(con);
}

/* One run of a cell with the figures, msivm's --stats-json saying how many it relayed. */
static void fill(struct ll_cell *c, const char *name, enum lab_vmm vmm, double relayed_n,
		 double vmm_cpu_s)
{
	c->cfg = cfg(name);
	c->vmm = vmm;
	c->nruns = 1;
	struct ll_run *r = &c->runs[0];
	char *con = pt_console(0, 2000);
	r->worked = true;
	r->asked = c->cfg->works;
	ll_parse_console(con, c->cfg, true, r);
	free(con);
	for (unsigned w = LL_FIO_QD1; w <= LL_FIO_QD32; w++)
		r->work[w].cpu = (struct ll_cpu){ 1.0, vmm_cpu_s };
	if (vmm == LAB_MSIVM && !isnan(relayed_n)) {
		char j[256];
		snprintf(j, sizeof(j), "{\"devices\": [{\"type\": \"blk\"}, {\"type\": \"vfio\", "
			 "\"relayed\": %.0f}]}", relayed_n);
		r->stats_json = strdup(j);
	}
}

static void test_report_table_and_page(void **state)
{
	(void)state;
	char dir[] = "/tmp/msivm-lab-pt-XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct ll_options o = { .out_dir = dir, .runs = 1, .io_runs = 1, .fio_s = 10, .cpus = 1,
				.mem_mib = 256, .vs_qemu = true, .runs_planned = 4, .runs_done = 4 };
	snprintf(o.date, sizeof(o.date), "2026-12-07T05:00:00Z");
	struct ll_cell cells[5];
	memset(cells, 0, sizeof(cells));
	fill(&cells[0], "pt-msix", LAB_MSIVM, 0, 0.0);
	fill(&cells[1], "pt-relay", LAB_MSIVM, 123456, 2.0);
	fill(&cells[2], "pt-msix", LAB_QEMU, NAN, 0.0);
	cells[3] = (struct ll_cell){ .cfg = cfg("pt-dedicated"), .vmm = LAB_QEMU, .skipped = true };
	snprintf(cells[3].skip_reason, sizeof(cells[3].skip_reason), "msivm only (--dedicated)");
	fill(&cells[4], "pt-virtio", LAB_MSIVM, NAN, 0.5);
	assert_true(lr_has_passthrough(cells, 5));
	assert_false(lr_has_passthrough(cells, 0));
	char *txt = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&txt, &len);
	lr_print_passthrough(f, cells, 5);
	fclose(f);
	assert_non_null(strstr(txt, "Passthrough ("));
	assert_non_null(strstr(txt, "compare ratios"));
	/* msivm relay: its relayed count; irqfd: 0; QEMU: "-"; the skipped cell says why */
	const char *relay = strstr(txt, "msivm  pt-relay");
	assert_non_null(relay);
	assert_non_null(strstr(relay, "|   123456 "));
	assert_non_null(strstr(strstr(txt, "msivm  pt-msix"), "|    0.000 "));
	const char *q = strstr(txt, "QEMU   pt-msix");
	assert_non_null(q);
	assert_non_null(strstr(q, " - "));
	assert_non_null(strstr(txt, "QEMU   pt-dedicated msivm only (--dedicated)"));
	assert_non_null(strstr(txt, "irqfd / relay IOPS = 1.00"));
	free(txt);
	/* a figure of a workload the configuration does not run says so */
	char why[200];
	lr_why_missing(&cells[0], LAB_MSIVM, "pt-msix", LR_RW_READ, why, sizeof(why));
	assert_string_equal(why, "msivm pt-msix does not run fio-rw");
	/* The whole report: report.txt with the table, report.html with the text (and the chart
	 * where gnuplot is installed) */
	struct error err = { "" };
	assert_int_equal(ll_report(&o, cells, 5, &err), 0);
	char path[256];
	snprintf(path, sizeof(path), "%s/report.html", dir);
	char *html = slurp(path);
	assert_non_null(strstr(html, "<pre>"));
	assert_non_null(strstr(html, "Passthrough ("));
	if (!system("command -v gnuplot >/dev/null 2>&1")) {
		assert_non_null(strstr(html, "linux-passthrough.svg"));
		assert_non_null(strstr(html, "<svg"));
	}
	free(html);
	for (unsigned i = 0; i < 5; i++)
		for (unsigned r = 0; r < cells[i].nruns; r++)
			ll_run_free(&cells[i].runs[r]);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_configs),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_console_counts_the_nvme),
		cmocka_unit_test(test_report_table_and_page),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
