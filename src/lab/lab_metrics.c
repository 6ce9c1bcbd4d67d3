/* Lab metrics: console + stats JSON -> per-run figures (the experiments they belong to: lab_experiments.c). */
#include "lab/lab_metrics.h"
#include "virtio/virtio_pci.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int lab_metric_index(const struct lab_experiment *exp, const char *key)
{
	for (unsigned i = 0; i < exp->nmetrics; i++)
		if (!strcmp(exp->metrics[i].key, key))
			return (int)i;
	return -1;
}

/* The value of " key=" on the first console line that starts with `prefix`, or NaN. */
static double line_value(const char *console, const char *prefix, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), " %s=", key);
	const char *line = console ? strstr(console, prefix) : NULL;
	while (line && line != console && line[-1] != '\n')
		line = strstr(line + 1, prefix);
	if (!line)
		return NAN;
	const char *eol = strchr(line, '\n');
	const char *p = strstr(line + strlen(prefix) - 1, k);
	if (!p || (eol && p > eol))
		return NAN;
	return strtod(p + strlen(k), NULL);
}

double lab_guest_value(const char *console, const char *exp, const char *key)
{
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "probe: result %s ", exp);
	return line_value(console, prefix, key);
}

static double json_num(json_t *root, const char *path1, const char *path2)
{
	json_t *o = json_object_get(root, path1);
	json_t *v = o ? json_object_get(o, path2) : NULL;
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static double device_sum(json_t *root, const char *key)
{
	json_t *devs = json_object_get(root, "devices"), *d;
	size_t i;
	double sum = 0;
	bool any = false;
	json_array_foreach(devs, i, d) {
		json_t *v = json_object_get(d, key);
		if (json_is_number(v)) {
			sum += json_number_value(v);
			any = true;
		}
	}
	return any ? sum : NAN;
}

static void set(const struct lab_experiment *exp, double *v, const char *key, double val)
{
	int i = lab_metric_index(exp, key);
	if (i >= 0)
		v[i] = val;
}

/* Figures of the work window: the VMM's CPU sampled at the probe's lines and
 * the guest's counts on its end line (the last window's). */
static void window_metrics(const struct lab_experiment *exp, const struct lab_raw *raw, double reqs,
			   double *v)
{
	if (raw->work_cpu) {
		set(exp, v, LAB_VMM_CPU_KEY, raw->work_cpu->vmm_ns / 1e3 / reqs);
		set(exp, v, "vcpu_cpu_us_per_req", raw->work_cpu->vcpu_ns / 1e3 / reqs);
	}
	const char *end = NULL;
	for (const char *p = raw->console; p && (p = strstr(p, LAB_WORK_END_LINE " ")); p++)
		end = p;
	set(exp, v, "irqs_per_req", line_value(end, LAB_WORK_END_LINE " ", "irqs") / reqs);
	set(exp, v, "kicks_per_req", line_value(end, LAB_WORK_END_LINE " ", "kicks") / reqs);
	set(exp, v, "halts_per_req", line_value(end, LAB_WORK_END_LINE " ", "halts") / reqs);
}

void lab_compute_metrics(const struct lab_experiment *exp, const struct lab_raw *raw, double *v)
{
	for (unsigned i = 0; i < LAB_MAX_METRICS; i++)
		v[i] = NAN;
	if (!raw->ok)
		return;
	json_t *root = raw->stats_json ? json_loads(raw->stats_json, 0, NULL) : NULL;
	set(exp, v, "ready_ms", raw->ready_ns / 1e6);
	set(exp, v, "wall_ms", raw->wall_ns / 1e6);
	set(exp, v, "cpu_ms", raw->cpu_ns / 1e6);

	const char *res = exp->result;
	double reqs = lab_guest_value(raw->console, res, "requests");
	double bytes = lab_guest_value(raw->console, res, "bytes");
	double cycles = lab_guest_value(raw->console, res, "cycles");
	double us_per_cycle = 1e6 / raw->tsc_hz;
	if (cycles > 0) {
		set(exp, v, "mib_s", bytes / (1 << 20) / (cycles / raw->tsc_hz));
		set(exp, v, "iops", reqs / (cycles / raw->tsc_hz));
	}
	static const char *const lat_keys[][2] = {
		{ "lat_min", "lat_min_us" }, { "lat_avg", "lat_avg_us" },
		{ "lat_p99", "lat_p99_us" }, { "lat_max", "lat_max_us" },
	};
	for (unsigned i = 0; i < 4; i++)
		set(exp, v, lat_keys[i][1], lab_guest_value(raw->console, res, lat_keys[i][0]) * us_per_cycle);
	if (reqs > 0) {
		window_metrics(exp, raw, reqs, v);
		set(exp, v, "cpu_us_per_req", raw->cpu_ns / 1e3 / reqs);
		/* Prefer the counters msivm took between the probe's workload
		 * markers; fall back to whole-run totals. */
		double ex = json_num(root, "workload", "exits"), isr = json_num(root, "workload", "isr_reads");
		if (root && isnan(ex)) {
			ex = json_num(root, "exits", "exits");
			isr = device_sum(root, "isr_reads");
		}
		set(exp, v, "exits_per_req", ex / reqs);
		set(exp, v, "uexits_per_req", (json_num(root, "workload", "msivm_io") +
					       json_num(root, "workload", "msivm_mmio")) / reqs);
		set(exp, v, "work_cpu_us_per_req", json_num(root, "workload", "cpu_ns") / 1e3 / reqs);
		set(exp, v, "iops_per_cpu_s", reqs / (raw->cpu_ns / 1e9));
		set(exp, v, "iops_per_cpu_s_ready", reqs / (raw->cpu_after_ready_ns / 1e9));
		set(exp, v, "isr_reads_per_req", isr / reqs);
	}
	set(exp, v, "level_irqs", line_value(raw->console, "probe: irq mode=", "level"));
	json_decref(root);
}


