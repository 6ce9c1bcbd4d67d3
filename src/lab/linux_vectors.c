/* Linux lab report: interrupts per virtio vector during each workload, and the level-with-MSI-X warnings. */
#include "lab/linux_report.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The virtio lines seen in any workload of a run, with their count in each (NAN: not seen). */
struct vec_table {
	unsigned n;
	const struct lp_irq_row *row[LP_IRQ_MAX];
	double count[LP_IRQ_MAX][LL_NWORK];
};

static unsigned vec_index(struct vec_table *t, const struct lp_irq_row *r)
{
	unsigned i;
	for (i = 0; i < t->n; i++)
		if (!strcmp(t->row[i]->irq, r->irq))
			return i;
	if (t->n == LP_IRQ_MAX)
		return LP_IRQ_MAX;
	t->row[t->n] = r;
	for (unsigned w = 0; w < LL_NWORK; w++)
		t->count[t->n][w] = NAN;
	return t->n++;
}

static void vec_collect(struct vec_table *t, const struct ll_run *run)
{
	t->n = 0;
	for (unsigned w = 0; w < LL_NWORK; w++) {
		const struct lp_irq_table *irqs = run->work[w].ran ? run->work[w].irqs : NULL;
		for (unsigned j = 0; irqs && j < irqs->n && j < LP_IRQ_MAX; j++) {
			unsigned i = vec_index(t, &irqs->rows[j]);
			if (i < LP_IRQ_MAX)
				t->count[i][w] = (double)irqs->rows[j].total;
		}
	}
}

/* The run whose vectors are shown: the first with workloads that did not fail, else the first
 * with workloads, else (ready table only) the first with a ready table. */
static const struct ll_run *shown_run(const struct ll_cell *c, bool *work)
{
	for (int pass = 0; pass < 3; pass++)
		for (unsigned r = 0; r < c->nruns && r < LL_MAX_RUNS; r++) {
			const struct ll_run *run = &c->runs[r];
			bool ok = pass == 0 ? run->worked && !run->failed
				: pass == 1 ? run->worked : run->irq_ready != NULL;
			if (ok) {
				*work = pass < 2;
				return run;
			}
		}
	return NULL;
}

static void print_work_vectors(FILE *out, struct vec_table *t, const struct ll_run *run)
{
	vec_collect(t, run);
	if (!t->n) {
		fprintf(out, "    no virtio interrupt table from the workloads\n");
		return;
	}
	fprintf(out, "    %-6s %-24s %-9s", "irq", "chip", "type");
	for (unsigned w = 0; w < LL_NWORK; w++)
		fprintf(out, " %10s", ll_work_name((enum ll_work)w));
	fprintf(out, "  names\n");
	for (unsigned i = 0; i < t->n; i++) {
		const struct lp_irq_row *r = t->row[i];
		fprintf(out, "    %-6s %-24s %-9s", r->irq, r->chip, r->type);
		for (unsigned w = 0; w < LL_NWORK; w++)
			if (isnan(t->count[i][w]))
				fprintf(out, " %10s", "-");
			else
				fprintf(out, " %10.0f", t->count[i][w]);
		fprintf(out, "  %s\n", r->names);
	}
}

static void print_ready_vectors(FILE *out, const struct lp_irq_table *t)
{
	fprintf(out, "    %-6s %-24s %-9s %9s  names\n", "irq", "chip", "type", "at ready");
	for (unsigned i = 0; i < t->n && i < LP_IRQ_MAX; i++)
		fprintf(out, "    %-6s %-24s %-9s %9" PRIu64 "  %s\n", t->rows[i].irq, t->rows[i].chip,
			t->rows[i].type, t->rows[i].total, t->rows[i].names);
}

static void print_cell_vectors(FILE *out, const struct ll_cell *c, struct vec_table *t)
{
	const char *name = c->cfg ? c->cfg->name : "?";
	const struct ll_run *run;
	bool work = false;
	fprintf(out, "  %s %s (%s)", lr_vmm_name(c->vmm), name,
		c->cfg && c->cfg->label ? c->cfg->label : "");
	if (c->skipped) {
		fprintf(out, ": skipped: %s\n", c->skip_reason);
		return;
	}
	run = shown_run(c, &work);
	if (!run) {
		fprintf(out, ": %s\n", c->nruns ? "no interrupt table (no run got to ready)" : "not run");
		return;
	}
	fprintf(out, ", run %u%s%s:\n", (unsigned)(run - c->runs) + 1,
		work ? ", during each workload" : ", at ready (no run ran the workloads)",
		run->failed ? " (this run failed)" : "");
	if (work)
		print_work_vectors(out, t, run);
	else
		print_ready_vectors(out, run->irq_ready);
}

void lr_print_interrupts(FILE *out, const struct ll_cell *cells, unsigned ncells)
{
	struct vec_table t;
	unsigned warnings = 0;
	fprintf(out, "\nInterrupts per vector (the virtio lines of the guest's /proc/interrupts, "
		     "summed over its CPUs;\n  -: the line did not show in that workload's table)\n");
	for (unsigned i = 0; i < ncells; i++)
		print_cell_vectors(out, &cells[i], &t);
	for (unsigned i = 0; i < ncells; i++)
		for (unsigned r = 0; r < cells[i].nruns && r < LL_MAX_RUNS; r++) {
			const struct ll_run *run = &cells[i].runs[r];
			if (!*run->level_with_msi)
				continue;
			if (!warnings++)
				fprintf(out, "\n");
			fprintf(out, "WARNING: %s %s run %u: a virtio device has a level-triggered IO-APIC "
				     "line while MSI-X is on: %s\n", lr_vmm_name(cells[i].vmm),
				cells[i].cfg ? cells[i].cfg->name : "?", r + 1, run->level_with_msi);
		}
	if (warnings)
		fprintf(out, "WARNING: the seed says this must never happen: with MSI-X on, every virtio "
			     "interrupt is message signalled.\n");
}
