/* Linux lab report: the passthrough experiment's table (pt-*: IOPS, latency, interrupts and VMM CPU per I/O at depth 1 and 32, msivm's relayed interrupts). */
#include "lab/linux_report.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

/* Interrupts msivm relayed itself in a run (the VFIO devices' "relayed" in --stats-json); NAN
 * for QEMU runs, failed runs and runs without the figure. */
static double relayed(const struct ll_run *r, unsigned arg)
{
	(void)arg;
	if (r->failed || !r->stats_json)
		return NAN;
	json_t *j = json_loads(r->stats_json, 0, NULL), *devs = j ? json_object_get(j, "devices") : NULL;
	double sum = NAN;
	size_t i;
	json_t *d;
	json_array_foreach(devs, i, d) {
		json_t *n = json_object_get(d, "relayed");
		const char *type = json_string_value(json_object_get(d, "type"));
		if (type && !strcmp(type, "vfio") && json_is_integer(n))
			sum = (isnan(sum) ? 0 : sum) + (double)json_integer_value(n);
	}
	json_decref(j);
	return sum;
}

bool lr_has_passthrough(const struct ll_cell *cells, unsigned ncells)
{
	for (unsigned i = 0; i < ncells; i++)
		if (cells[i].cfg && cells[i].cfg->works)
			return true;
	return false;
}

void lr_print_passthrough(FILE *out, const struct ll_cell *cells, unsigned ncells)
{
	static const unsigned ms[] = { LR_QD1_IOPS, LR_QD1_LAT, LR_QD1_P99, LR_IRQ_QD1, LR_CPU_QD1,
				       LR_QD32_IOPS, LR_QD32_LAT, LR_QD32_P99, LR_IRQ_QD32, LR_CPU_QD32 };
	char buf[32];
	if (!lr_has_passthrough(cells, ncells))
		return;
	fprintf(out, "\nPassthrough (fio 4 KiB random reads, O_DIRECT, libaio, on the NVMe passed "
		     "through (pt-*) or the VMM's\n  virtio-blk (pt-virtio); mean over the runs with "
		     "workloads; irqs: the device's interrupts in the\n  guest per I/O; VMM CPU: the "
		     "VMM's threads other than the vCPUs, us per I/O (irqfd: ~0); relayed:\n  interrupts "
		     "msivm injected itself over the whole run (--stats-json; irqfd: 0). Nested hosts:\n"
		     "  compare ratios, never absolute figures)\n");
	fprintf(out, "  %-6s %-12s %9s %9s %9s %7s %8s | %9s %9s %9s %7s %8s | %8s %4s\n", "", "",
		"qd1", "mean", "p99", "irqs", "VMM CPU", "qd32", "mean", "p99", "irqs", "VMM CPU",
		"msivm", "");
	fprintf(out, "  %-6s %-12s %9s %9s %9s %7s %8s | %9s %9s %9s %7s %8s | %8s %4s\n", "vmm",
		"config", "IOPS", "us", "us", "per I/O", "us/I/O", "IOPS", "us", "us", "per I/O",
		"us/I/O", "relayed", "runs");
	for (unsigned i = 0; i < ncells; i++) {
		const struct ll_cell *c = &cells[i];
		if (!c->cfg || !c->cfg->works)
			continue;
		fprintf(out, "  %-6s %-12s ", lr_vmm_name(c->vmm), c->cfg->name);
		if (c->skipped || !lr_worked_runs(c)) {
			fprintf(out, "%s\n", c->skipped ? c->skip_reason : "no run with workloads succeeded");
			continue;
		}
		for (unsigned k = 0; k < sizeof(ms) / sizeof(ms[0]); k++) {
			int w = k % 5 == 0 || k % 5 == 1 || k % 5 == 2 ? 9 : k % 5 == 3 ? 7 : 8;
			fprintf(out, "%*s %s", w, lr_fmt(buf, sizeof(buf), lr_metric_sum(c, ms[k]).mean),
				k == 4 ? "| " : "");
		}
		struct lr_sum rs = lr_summarize(c, relayed, 0);
		fprintf(out, "| %8s %4u\n", c->vmm == LAB_QEMU ? "-" : lr_fmt(buf, sizeof(buf), rs.mean),
			lr_worked_runs(c));
	}
	const struct ll_cell *irqfd = lr_cell(cells, ncells, LAB_MSIVM, "pt-msix");
	const struct ll_cell *relay = lr_cell(cells, ncells, LAB_MSIVM, "pt-relay");
	double a = irqfd ? lr_metric_sum(irqfd, LR_QD1_IOPS).mean : NAN;
	double b = relay ? lr_metric_sum(relay, LR_QD1_IOPS).mean : NAN;
	if (isfinite(a) && isfinite(b) && b > 0)
		fprintf(out, "  msivm at depth 1: irqfd / relay IOPS = %.2f\n", a / b);
}
