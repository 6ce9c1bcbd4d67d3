/* Linux lab report figures: per-run values of the compared metrics, summaries per cell, why a figure is missing. */
#include "lab/linux_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const struct lr_metric_def lr_metrics[LR_NMETRIC] = {
	[LR_RUN_INIT] = { "run_init_s", "Run /init", "s", LR_TIME, -1, 0.21 },
	[LR_READY] = { "ready_s", "init ready", "s", LR_TIME, -1, NAN },
	[LR_WALL] = { "wall_s", "VMM start to exit", "s", LR_TIME, -1, NAN },
	[LR_RW_READ] = { "fio_rw_read_mib_s", "fio-rw read", "MiB/s", LR_RATE, LL_FIO_RW, 0.045 },
	[LR_RW_WRITE] = { "fio_rw_write_mib_s", "fio-rw write", "MiB/s", LR_RATE, LL_FIO_RW, 0.045 },
	[LR_QD1_IOPS] = { "fio_qd1_iops", "fio-qd1", "IOPS", LR_RATE, LL_FIO_QD1, NAN },
	[LR_QD1_LAT] = { "fio_qd1_lat_mean_us", "fio-qd1 mean latency", "us", LR_TIME, LL_FIO_QD1,
			 NAN },
	[LR_QD4_IOPS] = { "fio_qd4_iops", "fio-qd4", "IOPS", LR_RATE, LL_FIO_QD4, NAN },
	[LR_QD32_IOPS] = { "fio_qd32_iops", "fio-qd32", "IOPS", LR_RATE, LL_FIO_QD32, NAN },
	[LR_QD128_IOPS] = { "fio_qd128_iops", "fio-qd128", "IOPS", LR_RATE, LL_FIO_QD128, NAN },
	[LR_QD32_P99] = { "fio_qd32_lat_p99_us", "fio-qd32 p99 latency", "us", LR_TIME, LL_FIO_QD32,
			  NAN },
	[LR_TX] = { "iperf_tx_mbit_s", "iperf guest->host", "Mbit/s", LR_RATE, LL_IPERF_TX, 0.08 },
	[LR_RX] = { "iperf_rx_mbit_s", "iperf host->guest", "Mbit/s", LR_RATE, LL_IPERF_RX, NAN },
	[LR_VSOCK_P50] = { "vsock_rr_p50_us", "vsock round trip p50", "us", LR_TIME, LL_VSOCK_RR, NAN },
	[LR_VSOCK_P99] = { "vsock_rr_p99_us", "vsock round trip p99", "us", LR_TIME, LL_VSOCK_RR, NAN },
	[LR_VSOCK_BULK] = { "vsock_bulk_mib_s", "vsock guest->host", "MiB/s", LR_RATE, LL_VSOCK_BULK,
			    NAN },
	[LR_IRQ_RW] = { "irqs_per_io_fio_rw", "virtio interrupts per I/O, fio-rw", "per I/O", LR_COUNT,
			LL_FIO_RW, NAN },
	[LR_IRQ_TX] = { "irqs_per_mib_iperf_tx", "virtio interrupts per MiB, iperf-tx", "per MiB",
			LR_COUNT, LL_IPERF_TX, NAN },
	[LR_QD1_P99] = { "fio_qd1_lat_p99_us", "fio-qd1 p99 latency", "us", LR_TIME, LL_FIO_QD1, NAN },
	[LR_QD32_LAT] = { "fio_qd32_lat_mean_us", "fio-qd32 mean latency", "us", LR_TIME, LL_FIO_QD32,
			  NAN },
	[LR_IRQ_QD1] = { "irqs_per_io_fio_qd1", "device interrupts per I/O, fio-qd1", "per I/O",
			 LR_COUNT, LL_FIO_QD1, NAN },
	[LR_IRQ_QD32] = { "irqs_per_io_fio_qd32", "device interrupts per I/O, fio-qd32", "per I/O",
			  LR_COUNT, LL_FIO_QD32, NAN },
	[LR_CPU_QD1] = { "vmm_cpu_us_per_io_fio_qd1", "VMM threads' CPU per I/O, fio-qd1", "us",
			 LR_COUNT, LL_FIO_QD1, NAN },
	[LR_CPU_QD32] = { "vmm_cpu_us_per_io_fio_qd32", "VMM threads' CPU per I/O, fio-qd32", "us",
			  LR_COUNT, LL_FIO_QD32, NAN },
};

/* The workload's result if r ran it (the run did not fail and the guest printed it). */
static const struct ll_work_result *work_of(const struct ll_run *r, int w)
{
	if (r->failed || !r->worked || w < 0 || w >= LL_NWORK || !r->work[w].ran)
		return NULL;
	return &r->work[w];
}

/* Interrupts in the table's rows (they are the virtio lines' deltas); NAN without a table. */
static double irq_sum(const struct lp_irq_table *t)
{
	double sum = 0;
	if (!t)
		return NAN;
	for (unsigned i = 0; i < t->n; i++)
		sum += (double)t->rows[i].total;
	return sum;
}

/* x / unit, NAN unless the unit is a positive number. */
static double per(double x, double unit)
{
	return isfinite(unit) && unit > 0 ? x / unit : NAN;
}

static double fio_value(const struct lp_fio *f, unsigned m)
{
	switch (m) {
	case LR_RW_READ: return f->has_read ? f->read_mib_s : NAN;
	case LR_RW_WRITE: return f->has_write ? f->write_mib_s : NAN;
	case LR_QD1_IOPS:
	case LR_QD4_IOPS:
	case LR_QD32_IOPS:
	case LR_QD128_IOPS:
		return f->has_read || f->has_write ? f->read_iops + f->write_iops : NAN;
	case LR_QD1_LAT:
	case LR_QD32_LAT: return f->has_read ? f->read_lat_mean_us
				 : f->has_write ? f->write_lat_mean_us : NAN;
	default: return f->has_read ? f->read_lat_p99_us : f->has_write ? f->write_lat_p99_us : NAN;
	}
}

double lr_value(const struct ll_run *r, unsigned m)
{
	const struct ll_work_result *wr;
	if (r->failed || m >= LR_NMETRIC)
		return NAN;
	switch (m) {
	case LR_RUN_INIT: return r->run_init_s;
	case LR_READY: return r->ready_s;
	case LR_WALL: return r->wall_s;
	default: break;
	}
	wr = work_of(r, lr_metrics[m].work);
	if (!wr)
		return NAN;
	if (m == LR_IRQ_RW || m == LR_IRQ_QD1 || m == LR_IRQ_QD32)
		return per(irq_sum(wr->irqs), wr->ios);
	if (m == LR_CPU_QD1 || m == LR_CPU_QD32)
		return per(wr->cpu.other_s * 1e6, wr->ios);
	if (m == LR_IRQ_TX)
		return per(irq_sum(wr->irqs), wr->mib);
	if (*wr->error)
		return NAN;
	if (m == LR_TX || m == LR_RX)
		return wr->iperf.received_mbit_s;
	if (m == LR_VSOCK_P50)
		return wr->vsock.p50_us;
	if (m == LR_VSOCK_P99)
		return wr->vsock.p99_us;
	if (m == LR_VSOCK_BULK)
		return wr->vsock.mib_s;
	return fio_value(&wr->fio, m);
}

static bool is_fio(enum ll_work w)
{
	return ll_work_is_fio(w);
}

/* Workloads whose unit is a count (I/Os, round trips) rather than MiB. */
static bool counts_ops(enum ll_work w)
{
	return is_fio(w) || w == LL_VSOCK_RR;
}

const char *lr_unit_name(enum ll_work w)
{
	return is_fio(w) ? "I/O" : w == LL_VSOCK_RR ? "round trip" : "MiB";
}

double lr_per_unit(const struct ll_run *r, unsigned arg)
{
	enum ll_work w = (enum ll_work)(arg / LR_PER_N);
	unsigned what = arg % LR_PER_N;
	const struct ll_work_result *wr = work_of(r, (int)w);
	double unit;
	if (!wr)
		return NAN;
	unit = counts_ops(w) ? wr->ios : wr->mib;
	switch (what) {
	case LR_PER_OTHER: return per(wr->cpu.other_s * 1e6, unit);
	case LR_PER_VCPU: return per(wr->cpu.vcpu_s * 1e6, unit);
	case LR_PER_IRQ: return per(irq_sum(wr->irqs), unit);
	default: return what < LL_NEXIT ? per(wr->exits[what], unit) : NAN;
	}
}

struct lr_sum lr_summarize(const struct ll_cell *c, lr_get_fn get, unsigned arg)
{
	struct lr_sum s = { 0, NAN, NAN, NAN };
	double sum = 0;
	for (unsigned r = 0; r < c->nruns && r < LL_MAX_RUNS; r++) {
		double v = get(&c->runs[r], arg);
		if (isnan(v))
			continue;
		if (!s.n++) {
			s.min = s.max = v;
		} else {
			s.min = v < s.min ? v : s.min;
			s.max = v > s.max ? v : s.max;
		}
		sum += v;
	}
	if (s.n)
		s.mean = sum / s.n;
	return s;
}

struct lr_sum lr_metric_sum(const struct ll_cell *c, unsigned m)
{
	return lr_summarize(c, lr_value, m);
}

unsigned lr_ok_runs(const struct ll_cell *c)
{
	unsigned n = 0;
	for (unsigned r = 0; r < c->nruns && r < LL_MAX_RUNS; r++)
		n += !c->runs[r].failed;
	return n;
}

unsigned lr_worked_runs(const struct ll_cell *c)
{
	unsigned n = 0;
	for (unsigned r = 0; r < c->nruns && r < LL_MAX_RUNS; r++)
		n += !c->runs[r].failed && c->runs[r].worked;
	return n;
}

const char *lr_vmm_name(enum lab_vmm vmm)
{
	return vmm == LAB_QEMU ? "QEMU" : "msivm";
}

const struct ll_cell *lr_cell(const struct ll_cell *cells, unsigned ncells, enum lab_vmm vmm,
			      const char *cfg)
{
	for (unsigned i = 0; i < ncells; i++)
		if (cells[i].vmm == vmm && cells[i].cfg && !strcmp(cells[i].cfg->name, cfg))
			return &cells[i];
	return NULL;
}

bool lr_without_msi(const char *cfg)
{
	return !strcmp(cfg, "intx") || !strcmp(cfg, "nomsi");
}

/* Why the cell's runs that did not fail have no figure from workload w. */
static void why_work(const struct ll_cell *c, const char *who, int w, unsigned m, char *buf,
		     size_t len)
{
	unsigned worked_all = 0;
	for (unsigned r = 0; r < c->nruns && r < LL_MAX_RUNS; r++)
		worked_all += c->runs[r].worked;
	if (!lr_worked_runs(c)) {
		snprintf(buf, len, worked_all ? "every %s run with workloads failed"
					      : "no %s run ran the workloads", who);
		return;
	}
	for (unsigned r = 0; r < c->nruns && r < LL_MAX_RUNS; r++) {
		const struct ll_run *run = &c->runs[r];
		if (run->failed || !run->worked)
			continue;
		if (!run->work[w].ran) {
			snprintf(buf, len, "%s run %u: the guest printed no %s output", who, r + 1,
				 ll_work_name((enum ll_work)w));
			return;
		}
		if (*run->work[w].error) {
			snprintf(buf, len, "%s run %u: %s: %s", who, r + 1, ll_work_name((enum ll_work)w),
				 run->work[w].error);
			return;
		}
	}
	snprintf(buf, len, "no %s run has %s figures", who, lr_metrics[m].label);
}

void lr_why_missing(const struct ll_cell *c, enum lab_vmm vmm, const char *cfg, unsigned m,
		    char *buf, size_t len)
{
	char who[64];
	snprintf(who, sizeof(who), "%s %s", lr_vmm_name(vmm), cfg);
	if (!c)
		snprintf(buf, len, "no %s configuration in this lab", who);
	else if (c->skipped)
		snprintf(buf, len, "%s skipped: %s", who, c->skip_reason);
	else if (!c->nruns)
		snprintf(buf, len, "%s not run", who);
	else if (!lr_ok_runs(c))
		snprintf(buf, len, "every %s run failed", who);
	else if (lr_metrics[m].work < 0)
		snprintf(buf, len, "no %s run reported %s", who, lr_metrics[m].label);
	else if (c->cfg && c->cfg->works && !(c->cfg->works & LL_WORK_BIT(lr_metrics[m].work)))
		snprintf(buf, len, "%s does not run %s", who, ll_work_name((enum ll_work)lr_metrics[m].work));
	else
		why_work(c, who, lr_metrics[m].work, m, buf, len);
}

double lr_gain(unsigned m, double ours, double other)
{
	double g;
	if (isnan(ours) || isnan(other))
		return NAN;
	switch (lr_metrics[m].kind) {
	case LR_TIME: g = other / ours - 1; break;
	case LR_RATE: g = ours / other - 1; break;
	default: g = 1 - ours / other; break;
	}
	return isfinite(g) ? g : NAN;
}

const char *lr_better_word(unsigned m)
{
	switch (lr_metrics[m].kind) {
	case LR_TIME: return "faster";
	case LR_RATE: return "more";
	default: return "fewer";
	}
}

const char *lr_fmt(char *buf, size_t len, double v)
{
	double a = fabs(v);
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else if (a >= 1000)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 10)
		snprintf(buf, len, "%.2f", v);
	else if (a >= 0.1 || a == 0)
		snprintf(buf, len, "%.3f", v);
	else
		snprintf(buf, len, "%.2g", v);
	return buf;
}
