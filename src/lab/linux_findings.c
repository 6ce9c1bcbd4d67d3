/* Linux lab report: MSI-X against the configurations without MSI, msivm against QEMU, and the seed's findings. */
#include "lab/linux_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The figures compared in the ratios. */
static const unsigned ratio_metrics[] = { LR_RUN_INIT, LR_RW_READ, LR_RW_WRITE, LR_QD1_IOPS,
					  LR_QD32_IOPS, LR_TX, LR_RX, LR_IRQ_RW, LR_IRQ_TX };
#define NRATIO (sizeof(ratio_metrics) / sizeof(ratio_metrics[0]))

/* The seed's figure for metric m: "~21% faster", "fewer" or "-". */
static const char *seed_text(unsigned m, char *buf, size_t len)
{
	if (!isnan(lr_metrics[m].seed_gain))
		snprintf(buf, len, "~%.3g%% %s", lr_metrics[m].seed_gain * 100, lr_better_word(m));
	else if (m == LR_IRQ_RW)
		snprintf(buf, len, "fewer");
	else
		snprintf(buf, len, "-");
	return buf;
}

static bool has_vmm(const struct ll_cell *cells, unsigned ncells, enum lab_vmm vmm)
{
	for (unsigned i = 0; i < ncells; i++)
		if (cells[i].vmm == vmm)
			return true;
	return false;
}

/* "<label>: A 21.0% faster than B (1.000 vs 1.210 s)", the winner and its figure first. */
static void advantage(char *buf, size_t len, unsigned m, const char *a_name, struct lr_sum a,
		     const char *b_name, struct lr_sum b)
{
	const struct lr_metric_def *md = &lr_metrics[m];
	double g = lr_gain(m, a.mean, b.mean);
	char x[32], y[32];
	bool a_wins = g > 0;
	lr_fmt(x, sizeof(x), a_wins ? a.mean : b.mean);
	lr_fmt(y, sizeof(y), a_wins ? b.mean : a.mean);
	if (isnan(g) || g == 0) {
		snprintf(buf, len, "%s: %s and %s alike (%s vs %s %s)", md->label, a_name, b_name, x, y,
			 md->unit);
		return;
	}
	if (!a_wins)
		g = lr_gain(m, b.mean, a.mean);
	snprintf(buf, len, "%s: %s %.1f%% %s than %s (%s vs %s %s%s)", md->label,
		 a_wins ? a_name : b_name, g * 100, lr_better_word(m), a_wins ? b_name : a_name, x, y,
		 md->unit,
		 a.n > 1 && b.n > 1 && a.max >= b.min && b.max >= a.min ? "; the runs' ranges overlap"
									  : "");
}

/* One ratio row: MSI-X (mx) against configuration `other` (cell c) for metric m. */
static void ratio_row(FILE *out, enum lab_vmm vmm, const struct ll_cell *mx,
		      const struct ll_cell *c, unsigned m)
{
	const struct lr_metric_def *md = &lr_metrics[m];
	struct lr_sum a = lr_metric_sum(mx, m), b = lr_metric_sum(c, m);
	char label[64], x[32], y[32], why[256], seed[32];
	double g = lr_gain(m, a.mean, b.mean);
	snprintf(label, sizeof(label), "%s (%s)", md->label, md->unit);
	fprintf(out, "  %-6s %-8s %-46s ", lr_vmm_name(vmm), c->cfg->name, label);
	if (!a.n || !b.n) {
		lr_why_missing(a.n ? c : mx, vmm, a.n ? c->cfg->name : "msix", m, why, sizeof(why));
		fprintf(out, "not measured: %s\n", why);
		return;
	}
	fprintf(out, "%9s %9s %10.2f ", lr_fmt(x, sizeof(x), a.mean), lr_fmt(y, sizeof(y), b.mean),
		a.mean / b.mean);
	if (isnan(g))
		fprintf(out, "%8s", "n/a");
	else
		fprintf(out, "%+7.1f%%", g * 100);
	fprintf(out, "  %s\n", seed_text(m, seed, sizeof(seed)));
}

/* MSI-X against each configuration without MSI of the same VMM. */
static void ratios_vmm(FILE *out, const struct ll_cell *cells, unsigned ncells, enum lab_vmm vmm)
{
	const struct ll_cell *mx = lr_cell(cells, ncells, vmm, "msix");
	bool any = false;
	for (unsigned i = 0; i < ncells; i++) {
		const struct ll_cell *c = &cells[i];
		if (c->vmm != vmm || !c->cfg || !lr_without_msi(c->cfg->name))
			continue;
		any = true;
		if (!mx) {
			fprintf(out, "  %-6s %-8s no msix configuration in this lab\n", lr_vmm_name(vmm),
				c->cfg->name);
			break;
		}
		for (unsigned k = 0; k < NRATIO; k++)
			ratio_row(out, vmm, mx, c, ratio_metrics[k]);
	}
	if (!any)
		fprintf(out, "  %-6s no configuration without MSI (intx, nomsi) in this lab\n",
			lr_vmm_name(vmm));
}

/* msivm against QEMU in every configuration both ran. */
static void ratios_qemu(FILE *out, const struct ll_cell *cells, unsigned ncells)
{
	char label[64], x[32], y[32], why[256];
	fprintf(out, "\nmsivm/QEMU, same configuration (ratio of the means; for times and interrupts "
		     "lower is better)\n");
	if (!has_vmm(cells, ncells, LAB_QEMU)) {
		fprintf(out, "  QEMU not in this lab\n");
		return;
	}
	fprintf(out, "  %-12s %-46s %9s %9s %10s\n", "config", "metric", "msivm", "QEMU", "msivm/QEMU");
	for (unsigned i = 0; i < ncells; i++) {
		const struct ll_cell *c = &cells[i], *q;
		if (c->vmm != LAB_MSIVM || !c->cfg)
			continue;
		q = lr_cell(cells, ncells, LAB_QEMU, c->cfg->name);
		if (!q)
			continue;
		for (unsigned k = 0; k < NRATIO; k++) {
			unsigned m = ratio_metrics[k];
			struct lr_sum a = lr_metric_sum(c, m), b = lr_metric_sum(q, m);
			snprintf(label, sizeof(label), "%s (%s)", lr_metrics[m].label, lr_metrics[m].unit);
			fprintf(out, "  %-12s %-46s ", c->cfg->name, label);
			if (!a.n || !b.n) {
				lr_why_missing(a.n ? q : c, a.n ? LAB_QEMU : LAB_MSIVM, c->cfg->name, m, why,
					       sizeof(why));
				fprintf(out, "not measured: %s\n", why);
			} else {
				fprintf(out, "%9s %9s %10.2f\n", lr_fmt(x, sizeof(x), a.mean),
					lr_fmt(y, sizeof(y), b.mean), a.mean / b.mean);
			}
		}
	}
}

void lr_print_ratios(FILE *out, const struct ll_cell *cells, unsigned ncells)
{
	fprintf(out, "\nRatios: MSI-X against the configurations without MSI (ratio of the means;\n"
		     "  gain = MSI-X's advantage, + when MSI-X is better: for times the other's time / "
		     "MSI-X's - 1\n  (\"21%% faster\" as the seed says it), for rates MSI-X's / the "
		     "other's - 1, for interrupts 1 - MSI-X's / the other's)\n");
	fprintf(out, "  %-6s %-8s %-46s %9s %9s %10s %8s  %s\n", "vmm", "vs", "metric", "msix", "other",
		"msix/other", "gain", "seed");
	ratios_vmm(out, cells, ncells, LAB_MSIVM);
	if (has_vmm(cells, ncells, LAB_QEMU))
		ratios_vmm(out, cells, ncells, LAB_QEMU);
	ratios_qemu(out, cells, ncells);
}

struct finding {
	const char *claim;        /* the seed's finding */
	unsigned metrics[2];
	unsigned n;
};

/* Appends to buf at *k (clamped to len). */
#define APPEND(buf, len, k, ...)                                                          \
	do {                                                                              \
		if (*(k) < (len))                                                         \
			*(k) += (size_t)snprintf((buf) + *(k), (len) - *(k), __VA_ARGS__); \
	} while (0)

/* One sentence: the finding under `vmm`, MSI-X against each configuration without MSI. */
static void finding_vmm(FILE *out, const struct ll_cell *cells, unsigned ncells, enum lab_vmm vmm,
			const struct finding *f)
{
	const struct ll_cell *mx = lr_cell(cells, ncells, vmm, "msix");
	char said[1024] = "", missing[1024] = "", phrase[256], why[256], seed[32];
	size_t ks = 0, km = 0;
	unsigned measured = 0, better = 0, others = 0;
	for (unsigned i = 0; i < ncells; i++) {
		const struct ll_cell *c = &cells[i];
		if (c->vmm != vmm || !c->cfg || !lr_without_msi(c->cfg->name))
			continue;
		others++;
		for (unsigned j = 0; j < f->n; j++) {
			unsigned m = f->metrics[j];
			struct lr_sum a = mx ? lr_metric_sum(mx, m) : (struct lr_sum){ 0 };
			struct lr_sum b = lr_metric_sum(c, m);
			if (!a.n || !b.n) {
				lr_why_missing(a.n ? c : mx, vmm, a.n ? c->cfg->name : "msix", m, why,
					       sizeof(why));
				APPEND(missing, sizeof(missing), &km, "%s%s against %s: %s", km ? "; " : "",
				       lr_metrics[m].label, c->cfg->name, why);
				continue;
			}
			measured++;
			better += lr_gain(m, a.mean, b.mean) > 0;
			advantage(phrase, sizeof(phrase), m, "MSI-X", a, c->cfg->name, b);
			APPEND(said, sizeof(said), &ks, "%s%s, the seed: %s with MSI-X", ks ? "; " : "", phrase,
			       seed_text(m, seed, sizeof(seed)));
		}
	}
	fprintf(out, "     %s: ", lr_vmm_name(vmm));
	if (!others)
		fprintf(out, "not measured (no %s configuration without MSI, intx or nomsi, in this "
			     "lab)\n", lr_vmm_name(vmm));
	else if (!measured)
		fprintf(out, "not measured (%s)\n", missing);
	else
		fprintf(out, "%s: %s%s%s\n", better == measured ? "reproduced"
					     : better ? "partly reproduced" : "not reproduced",
			said, km ? "; not measured: " : "", missing);
}

/* How msivm compares with QEMU on the finding's figures, per configuration both ran. */
static void finding_qemu(FILE *out, const struct ll_cell *cells, unsigned ncells,
			 const struct finding *f)
{
	char said[1024] = "", phrase[256], why[256] = "";
	size_t k = 0;
	if (!has_vmm(cells, ncells, LAB_QEMU)) {
		fprintf(out, "     msivm vs QEMU: QEMU not in this lab\n");
		return;
	}
	for (unsigned i = 0; i < ncells; i++) {
		const struct ll_cell *c = &cells[i], *q;
		if (c->vmm != LAB_MSIVM || !c->cfg)
			continue;
		q = lr_cell(cells, ncells, LAB_QEMU, c->cfg->name);
		for (unsigned j = 0; q && j < f->n; j++) {
			unsigned m = f->metrics[j];
			struct lr_sum a = lr_metric_sum(c, m), b = lr_metric_sum(q, m);
			if (!a.n || !b.n) {
				if (!*why)
					lr_why_missing(a.n ? q : c, a.n ? LAB_QEMU : LAB_MSIVM, c->cfg->name, m,
						       why, sizeof(why));
				continue;
			}
			advantage(phrase, sizeof(phrase), m, "msivm", a, "QEMU", b);
			APPEND(said, sizeof(said), &k, "%s%s %s", k ? "; " : "", c->cfg->name, phrase);
		}
	}
	if (k)
		fprintf(out, "     msivm vs QEMU: %s\n", said);
	else
		fprintf(out, "     msivm vs QEMU: not measured (%s)\n",
			*why ? why : "no configuration ran under both");
}

void lr_print_findings(FILE *out, const struct ll_cell *cells, unsigned ncells)
{
	static const struct finding findings[] = {
		{ "Boot is faster with MSI (the seed: Run /init ~21% faster)", { LR_RUN_INIT }, 1 },
		{ "fio is faster with MSI-X (the seed: rw read and write ~4.5% more MiB/s)",
		  { LR_RW_READ, LR_RW_WRITE }, 2 },
		{ "iperf is faster with MSI-X (the seed: guest->host ~8% more Mbit/s)", { LR_TX }, 1 },
		{ "MSI-X takes fewer interrupts per I/O (the seed: fewer, no size given)", { LR_IRQ_RW },
		  1 },
	};
	fprintf(out, "\nFindings: the seed's, per VMM (reproduced = MSI-X better in the mean than "
		     "every configuration without MSI;\n  \"the runs' ranges overlap\": the min-max "
		     "ranges of the two overlap, so the difference is within the run-to-run spread)\n");
	for (unsigned i = 0; i < sizeof(findings) / sizeof(findings[0]); i++) {
		fprintf(out, "  %u. %s\n", i + 1, findings[i].claim);
		finding_vmm(out, cells, ncells, LAB_MSIVM, &findings[i]);
		if (has_vmm(cells, ncells, LAB_QEMU))
			finding_vmm(out, cells, ncells, LAB_QEMU, &findings[i]);
		finding_qemu(out, cells, ncells, &findings[i]);
	}
}
