/* Lab headline: VMM CPU per request of msivm and QEMU (own threads, then vCPU threads) per experiment and mode. */
#include "lab/lab.h"

#include <stdio.h>
#include <string.h>

#include "virtio/virtio_pci.h"

/* Three significant digits, without exponents: 1234, 123, 12.3, 1.23, 0.12. */
static int digits(double v)
{
	return v >= 100 ? 0 : v >= 10 ? 1 : 2;
}

/* "12.3 [11.9-13.0]" (prefix before each number), or "-" without figures. */
static void fmt_range(char *buf, size_t len, const char *prefix, struct lab_summary s)
{
	if (s.n)
		snprintf(buf, len, "%s%.*f [%.*f-%.*f]", prefix, digits(s.median), s.median,
			 digits(s.min), s.min, digits(s.max), s.max);
	else
		snprintf(buf, len, "-");
}

/* The QEMU column of one row: its figures, or why there are none. */
static void qemu_column(char *buf, size_t len, const struct lab_options *o,
			const struct lab_experiment *x, const struct lab_cell *q, unsigned mode,
			int k, const char **why)
{
	*why = NULL;
	if (!o->vs_qemu)
		snprintf(buf, len, "-");
	else if (!lab_cell_wanted(o, x, LAB_QEMU, mode, why) || q->skipped)
		snprintf(buf, len, "-");
	else if (!q->nruns)
		snprintf(buf, len, "not run");
	else
		fmt_range(buf, len, "", lab_summarize(q, (unsigned)k));
}

/* The width of the experiment column: its longest name (names outgrew a fixed width). */
static int name_width(const struct lab_options *o)
{
	size_t w = strlen("experiment");
	for (unsigned e = 0; e < o->nexps; e++)
		if (strlen(o->exps[e]->name) > w)
			w = strlen(o->exps[e]->name);
	return (int)w;
}

/* One table: a row per (experiment, mode) whose experiment has metric `key`; the QEMU columns
 * only when QEMU ran. */
static void print_vmm_table(FILE *out, const struct lab_options *o,
			    struct lab_cell (*cells)[2][LAB_MAX_MODES], const char *key)
{
	int w = name_width(o);
	if (o->vs_qemu)
		fprintf(out, "  %-*s %-12s %-24s %-24s %s\n", w, "experiment", "mode", "msivm", "QEMU",
			"msivm/QEMU");
	else
		fprintf(out, "  %-*s %-12s %s\n", w, "experiment", "mode", "msivm");
	for (unsigned e = 0; e < o->nexps; e++) {
		const struct lab_experiment *x = o->exps[e];
		int k = lab_metric_index(x, key);
		if (k < 0)
			continue;
		for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
			const char *why, *qwhy;
			if (!lab_cell_wanted(o, x, LAB_MSIVM, m, &why))
				continue;
			const struct lab_cell *c = &cells[e][LAB_MSIVM][m], *q = &cells[e][LAB_QEMU][m];
			const char *mode = irq_mode_name((enum irq_mode)m);
			if (c->skipped) {
				fprintf(out, "  %-*s %-12s skipped: %s\n", w, x->name, mode, c->skip_reason);
				continue;
			}
			char mv[48], qv[48], ratio[48] = "-", note[120] = "";
			if (c->nruns)
				fmt_range(mv, sizeof(mv), "", lab_summarize(c, (unsigned)k));
			else
				snprintf(mv, sizeof(mv), "not run");
			if (!o->vs_qemu) {
				fprintf(out, "  %-*s %-12s %s\n", w, x->name, mode, mv);
				continue;
			}
			qemu_column(qv, sizeof(qv), o, x, q, m, k, &qwhy);
			if (!qwhy && !q->skipped)
				fmt_range(ratio, sizeof(ratio), "x", lab_paired_ratio(c, q, (unsigned)k));
			if (qwhy)
				snprintf(note, sizeof(note), "  (QEMU: %s)", qwhy);
			fprintf(out, "  %-*s %-12s %-24s %-24s %s%s\n", w, x->name, mode, mv, qv, ratio, note);
		}
	}
}

/* What /proc said about the vCPU threads' guest time over every window. */
static void print_vcpu_note(FILE *out, const struct lab_options *o,
			    struct lab_cell (*cells)[2][LAB_MAX_MODES])
{
	double on_cpu = 0, user = 0, sys = 0, guest = 0;
	unsigned windows = 0;
	for (unsigned e = 0; e < o->nexps; e++)
		for (unsigned vmm = 0; vmm < 2; vmm++)
			for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
				const struct lab_cell *c = &cells[e][vmm][m];
				for (unsigned r = 0; r < c->nruns; r++) {
					const struct lab_run *run = &c->runs[r];
					if (run->failed || !run->have_work_cpu || run->window_failed)
						continue;
					windows++;
					on_cpu += run->work_cpu.vcpu_ns;
					user += run->work_cpu.vcpu_utime_ns;
					sys += run->work_cpu.vcpu_stime_ns;
					guest += run->work_cpu.vcpu_guest_ns;
				}
			}
	if (!windows)
		return;
	fprintf(out, "  vCPU threads over all %u windows: %.0f ms on a CPU (schedstat); stat's clock\n"
		     "  ticks: user %.0f ms, system %.0f ms, guest (field 43) %.0f ms.\n  ",
		windows, on_cpu / 1e6, user / 1e6, sys / 1e6, guest / 1e6);
	if (guest == 0 && on_cpu > 0)
		fprintf(out, "No guest time was accounted: this KVM (PVM) counts the guest's execution\n"
			     "  as the vCPU threads' system time, so their time outside the guest cannot be\n"
			     "  told apart, and the headline leaves the vCPU threads out.\n");
	else
		fprintf(out, "Guest time was accounted (hardware KVM: utime includes guest_time), but at\n"
			     "  clock ticks, too coarse for these windows: the headline leaves the vCPU\n"
			     "  threads out.\n");
}

void lab_print_headline(FILE *out, const struct lab_options *o,
			struct lab_cell (*cells)[2][LAB_MAX_MODES])
{
	fprintf(out, "\nVMM CPU µs per request, %s\n", o->vs_qemu ? "msivm/QEMU" : "msivm");
	if (!o->vs_qemu)
		fprintf(out, "  QEMU was not run: add --vs qemu to measure the same guest and devices "
			     "under QEMU\n  beside msivm (QEMU columns and msivm/QEMU ratios).\n");
	fprintf(out, ""
		     "  The VMM's own threads: all of its process but the vCPU threads and KVM's\n"
		     "  kvm-nx-lpage-re (msivm-io, msivm-ctl, iou-wrk-*; QEMU's main loop, call_rcu,\n"
		     "  workers), their /proc/PID/task/*/schedstat sampled at the probe's \"work begin\"\n"
		     "  and \"work end\" lines (each followed by an idle pause). Median [min-max] over\n"
		     "  %u %s%s\n",
		o->runs, o->vs_qemu ? "interleaved batches (msivm, QEMU, msivm, QEMU, ...)"
				    : o->runs == 1 ? "run" : "runs",
		o->vs_qemu ? ";\n  msivm/QEMU: median [min-max] of the per-batch ratios." : ".");
	print_vmm_table(out, o, cells, LAB_VMM_CPU_KEY);
	fprintf(out, "\nvCPU threads' CPU µs per request, %s (apart: the guest's own code, its\n"
		     "exits and their handling in these threads)\n", o->vs_qemu ? "msivm/QEMU" : "msivm");
	print_vmm_table(out, o, cells, "vcpu_cpu_us_per_req");
	print_vcpu_note(out, o, cells);
}
