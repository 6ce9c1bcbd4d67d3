/* Linux lab report.json: the lab's options and host, a summary per cell, and every run raw (NaN as null). */
#include "lab/linux_report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static json_t *num(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A JSON string of captured text (NULL: null); a text that is not UTF-8 has its bytes
 * above 0x7f replaced by '?'. */
static json_t *str(const char *s)
{
	json_t *j;
	char *ascii;
	if (!s)
		return json_null();
	j = json_string(s);
	if (j)
		return j;
	ascii = strdup(s);
	if (!ascii)
		return json_null();
	for (size_t i = 0; ascii[i]; i++)
		ascii[i] = (unsigned char)ascii[i] < 0x80 ? ascii[i] : '?';
	j = json_string(ascii);
	free(ascii);
	return j ? j : json_null();
}

static json_t *irq_rows(const struct lp_irq_table *t)
{
	json_t *a;
	if (!t)
		return json_null();
	a = json_array();
	for (unsigned i = 0; i < t->n && i < LP_IRQ_MAX; i++) {
		const struct lp_irq_row *r = &t->rows[i];
		json_array_append_new(a, json_pack("{s:o,s:o,s:o,s:o,s:o,s:I}", "irq", str(r->irq),
						   "names", str(r->names), "chip", str(r->chip),
						   "type", str(r->type), "hwirq_type", str(r->hwirq_type),
						   "count", (json_int_t)r->total));
	}
	return a;
}

static json_t *cpu(struct ll_cpu c)
{
	return json_pack("{s:o,s:o}", "vcpu_s", num(c.vcpu_s), "other_s", num(c.other_s));
}

static json_t *fio(const struct lp_fio *f)
{
	return json_pack("{s:b,s:b,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:I,s:I}", "has_read",
			 f->has_read, "has_write", f->has_write, "read_iops", num(f->read_iops),
			 "write_iops", num(f->write_iops), "read_mib_s", num(f->read_mib_s),
			 "write_mib_s", num(f->write_mib_s), "read_lat_mean_us",
			 num(f->read_lat_mean_us), "write_lat_mean_us", num(f->write_lat_mean_us),
			 "read_lat_p99_us", num(f->read_lat_p99_us), "write_lat_p99_us",
			 num(f->write_lat_p99_us), "runtime_s", num(f->runtime_s), "read_ios",
			 (json_int_t)f->read_ios, "write_ios", (json_int_t)f->write_ios);
}

static json_t *iperf(const struct lp_iperf *p)
{
	return json_pack("{s:o,s:o,s:o,s:I,s:b}", "sent_mbit_s", num(p->sent_mbit_s),
			 "received_mbit_s", num(p->received_mbit_s), "seconds", num(p->seconds),
			 "retransmits", (json_int_t)p->retransmits, "reverse", p->reverse);
}

static json_t *vsock(const struct lp_vsock *v)
{
	json_t *j = json_object();
	if (v->rr) {
		json_object_set_new(j, "round_trips", num(v->count));
		json_object_set_new(j, "size", num(v->size));
		json_object_set_new(j, "min_us", num(v->min_us));
		json_object_set_new(j, "p50_us", num(v->p50_us));
		json_object_set_new(j, "p99_us", num(v->p99_us));
		json_object_set_new(j, "max_us", num(v->max_us));
		json_object_set_new(j, "mean_us", num(v->mean_us));
	} else {
		json_object_set_new(j, "bytes", num(v->bytes));
		json_object_set_new(j, "secs", num(v->secs));
		json_object_set_new(j, "mib_s", num(v->mib_s));
	}
	return j;
}

static json_t *work(const struct ll_work_result *wr, enum ll_work w)
{
	json_t *j = json_object(), *exits = json_object();
	json_object_set_new(j, "ran", json_boolean(wr->ran));
	json_object_set_new(j, "error", str(wr->error));
	if (ll_work_is_fio(w))
		json_object_set_new(j, "fio", wr->ran && !*wr->error ? fio(&wr->fio) : json_null());
	else if (ll_work_is_vsock(w))
		json_object_set_new(j, "vsock", wr->ran && !*wr->error ? vsock(&wr->vsock) : json_null());
	else
		json_object_set_new(j, "iperf", wr->ran && !*wr->error ? iperf(&wr->iperf)
								       : json_null());
	json_object_set_new(j, "ios", num(wr->ios));
	json_object_set_new(j, "mib", num(wr->mib));
	json_object_set_new(j, "window_s", num(wr->window_s));
	json_object_set_new(j, "cpu", cpu(wr->cpu));
	for (unsigned e = 0; e < LL_NEXIT; e++)
		json_object_set_new(exits, ll_exit_name((enum ll_exit)e), num(wr->exits[e]));
	json_object_set_new(j, "exits", exits);
	json_object_set_new(j, "irqs", irq_rows(wr->irqs));
	return j;
}

/* msivm's --stats-json as JSON when it parses, else as the text it is. */
static json_t *stats(const char *text)
{
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;
	return j ? j : str(text);
}

static json_t *run_json(const struct ll_cell *c, unsigned index)
{
	const struct ll_run *r = &c->runs[index];
	json_t *j = json_object(), *works = json_object();
	json_object_set_new(j, "vmm", json_string(c->vmm == LAB_QEMU ? "qemu" : "msivm"));
	json_object_set_new(j, "config", str(c->cfg ? c->cfg->name : NULL));
	json_object_set_new(j, "index", json_integer(index + 1));
	json_object_set_new(j, "failed", json_boolean(r->failed));
	json_object_set_new(j, "error", str(r->error));
	json_object_set_new(j, "status", json_integer(r->status));
	json_object_set_new(j, "wall_s", num(r->wall_s));
	json_object_set_new(j, "run_init_s", num(r->run_init_s));
	json_object_set_new(j, "ready_s", num(r->ready_s));
	json_object_set_new(j, "cpu_total", cpu(r->cpu_total));
	json_object_set_new(j, "level_with_msi", str(r->level_with_msi));
	json_object_set_new(j, "worked", json_boolean(r->worked));
	json_t *asked = json_array();
	for (unsigned w = 0; w < LL_NWORK; w++)
		if (r->asked & LL_WORK_BIT(w))
			json_array_append_new(asked, json_string(ll_work_name((enum ll_work)w)));
	json_object_set_new(j, "asked", asked);
	json_object_set_new(j, "vsock", json_string(r->vsock == LL_VSOCK_UNIX ? "unix" :
						    r->vsock == LL_VSOCK_VHOST ? "vhost" : "none"));
	for (unsigned w = 0; w < LL_NWORK; w++)
		json_object_set_new(works, ll_work_name((enum ll_work)w),
				    work(&r->work[w], (enum ll_work)w));
	json_object_set_new(j, "work", works);
	json_object_set_new(j, "irq_ready", irq_rows(r->irq_ready));
	json_object_set_new(j, "console", str(r->console));
	json_object_set_new(j, "errout", str(r->errout));
	json_object_set_new(j, "stats", stats(r->stats_json));
	return j;
}

static json_t *cell_json(const struct ll_cell *c)
{
	json_t *j = json_object(), *summary = json_object();
	json_object_set_new(j, "vmm", json_string(c->vmm == LAB_QEMU ? "qemu" : "msivm"));
	json_object_set_new(j, "config", str(c->cfg ? c->cfg->name : NULL));
	json_object_set_new(j, "label", str(c->cfg ? c->cfg->label : NULL));
	json_object_set_new(j, "skipped", json_boolean(c->skipped));
	json_object_set_new(j, "skip_reason", c->skipped ? str(c->skip_reason) : json_null());
	json_object_set_new(j, "runs", json_integer(c->nruns));
	json_object_set_new(j, "runs_ok", json_integer(lr_ok_runs(c)));
	json_object_set_new(j, "runs_with_workloads", json_integer(lr_worked_runs(c)));
	for (unsigned m = 0; m < LR_NMETRIC; m++) {
		struct lr_sum s = lr_metric_sum(c, m);
		if (s.n)
			json_object_set_new(summary, lr_metrics[m].key,
					    json_pack("{s:o,s:o,s:o,s:i}", "mean", num(s.mean), "min",
						      num(s.min), "max", num(s.max), "n", (int)s.n));
	}
	json_object_set_new(j, "summary", summary);
	return j;
}

static json_t *host_json(const struct lab_host *h)
{
	return json_pack("{s:o,s:o,s:i,s:o,s:o,s:o,s:o,s:o,s:b}", "kernel", str(h->kernel), "cpu",
			 str(h->cpu), "cpus", (int)h->cpus, "kvm_modules", str(h->kvm_modules),
			 "kvm_api", h->kvm_api >= 0 ? json_integer(h->kvm_api) : json_null(),
			 "kvm_error", str(h->kvm_error), "kvm_mode", str(h->kvm_mode),
			 "kvm_mode_detail", str(h->kvm_mode_detail),
			 "emulated", strstr(h->cpu, "QEMU") || strstr(h->cpu, "TCG"));
}

static json_t *options_json(const struct ll_options *o)
{
	return json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:o,s:o,s:o,s:o,s:b}", "runs", (int)o->runs,
			 "io_runs", (int)o->io_runs, "fio_s", (int)o->fio_s, "iperf_s",
			 (int)o->iperf_s, "cpus", (int)o->cpus, "mem_mib", (int)o->mem_mib, "kernel",
			 str(o->kernel), "initrd", str(o->initrd), "msivm", str(o->msivm), "qemu",
			 str(o->qemu), "vs_qemu", o->vs_qemu);
}

int lr_write_json(const struct ll_options *o, const struct ll_cell *cells, unsigned ncells,
		  const char *path)
{
	json_t *root = json_object(), *argv = json_array(), *jcells = json_array(),
	       *runs = json_array();
	int ret;
	for (int i = 0; o->argv && i < o->argc; i++)
		json_array_append_new(argv, str(o->argv[i]));
	for (unsigned i = 0; i < ncells; i++) {
		json_array_append_new(jcells, cell_json(&cells[i]));
		for (unsigned r = 0; r < cells[i].nruns && r < LL_MAX_RUNS; r++)
			json_array_append_new(runs, run_json(&cells[i], r));
	}
	json_object_set_new(root, "version", json_string(MSIVM_VERSION));
	json_object_set_new(root, "report", json_string("linux-lab"));
	json_object_set_new(root, "report_version", json_integer(1));
	json_object_set_new(root, "date", str(o->date));
	json_object_set_new(root, "argv", argv);
	json_object_set_new(root, "host", host_json(&o->host));
	json_object_set_new(root, "options", options_json(o));
	json_object_set_new(root, "partial", json_boolean(o->interrupted));
	json_object_set_new(root, "interrupted_by_signal",
			    o->interrupted ? json_integer(o->interrupted) : json_null());
	json_object_set_new(root, "runs_planned", json_integer(o->runs_planned));
	json_object_set_new(root, "runs_done", json_integer(o->runs_done));
	json_object_set_new(root, "runs_failed", json_integer(o->runs_failed));
	json_object_set_new(root, "cells", jcells);
	json_object_set_new(root, "runs", runs);
	ret = json_dump_file(root, path, JSON_INDENT(1)) ? -EIO : 0;
	json_decref(root);
	return ret;
}
