/* Lab metrics: experiment definitions; console + stats JSON -> per-run figures. */
#include "lab/lab_metrics.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct lab_metric_def boot_metrics[] = {
	{ "ready_ms", "boot to ready", "ms", false, false },
	{ "wall_ms", "start to exit", "ms", false, false },
	{ "cpu_ms", "host CPU", "ms", false, false },
};

static const struct lab_metric_def rng_metrics[] = {
	{ "mib_s", "rng throughput", "MiB/s", true, false },
	{ "irqs_per_req", "interrupts per request", "", false, false },
	{ "level_irqs", "level-triggered interrupts", "", false, false },
	{ "exits_per_req", "VM exits per request", "", false, true },
	{ "isr_reads_per_req", "ISR reads per request", "", false, true },
	{ "cpu_us_per_req", "host CPU per request", "us", false, false },
};

const struct lab_experiment lab_experiments[] = {
	{ "boot", "Boot to ready (first virtio request done)", "rng=4 lab", "--rng",
	  "virtio-rng-pci,disable-legacy=on%s", boot_metrics, 3 },
	{ "rng", "virtio-rng, 4 KiB requests", "rng=256 lab", "--rng", "virtio-rng-pci,disable-legacy=on%s",
	  rng_metrics, 6 },
};
const unsigned lab_nexperiments = sizeof(lab_experiments) / sizeof(lab_experiments[0]);

double lab_guest_value(const char *console, const char *exp, const char *key)
{
	char prefix[64], k[64];
	snprintf(prefix, sizeof(prefix), "probe: result %s ", exp);
	snprintf(k, sizeof(k), " %s=", key);
	const char *line = console ? strstr(console, prefix) : NULL;
	if (!line)
		return NAN;
	const char *eol = strchr(line, '\n');
	const char *p = strstr(line + strlen(prefix) - 1, k);
	if (!p || (eol && p > eol))
		return NAN;
	return strtod(p + strlen(k), NULL);
}

/* "probe: irq mode=X total=N level=L" */
static double guest_irq_value(const char *console, const char *key)
{
	const char *line = console ? strstr(console, "probe: irq mode=") : NULL;
	char k[32];
	snprintf(k, sizeof(k), " %s=", key);
	const char *p = line ? strstr(line, k) : NULL;
	const char *eol = line ? strchr(line, '\n') : NULL;
	return p && (!eol || p < eol) ? strtod(p + strlen(k), NULL) : NAN;
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
	for (unsigned i = 0; i < exp->nmetrics; i++)
		if (!strcmp(exp->metrics[i].key, key))
			v[i] = val;
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

	double reqs = lab_guest_value(raw->console, exp->name, "requests");
	double bytes = lab_guest_value(raw->console, exp->name, "bytes");
	double cycles = lab_guest_value(raw->console, exp->name, "cycles");
	if (cycles > 0)
		set(exp, v, "mib_s", bytes / (1 << 20) / (cycles / raw->tsc_hz));
	if (reqs > 0) {
		set(exp, v, "irqs_per_req", guest_irq_value(raw->console, "total") / reqs);
		set(exp, v, "cpu_us_per_req", raw->cpu_ns / 1e3 / reqs);
		if (root) {
			set(exp, v, "exits_per_req", json_num(root, "exits", "exits") / reqs);
			set(exp, v, "isr_reads_per_req", device_sum(root, "isr_reads") / reqs);
		}
	}
	set(exp, v, "level_irqs", guest_irq_value(raw->console, "level"));
	json_decref(root);
}

int lab_extra_msivm_args(const struct lab_experiment *exp, char (*store)[512], char **v,
			 unsigned *n, unsigned max)
{
	return 0;
}

int lab_extra_qemu_args(const struct lab_experiment *exp, char (*store)[512], char **v,
			unsigned *n, unsigned max)
{
	return 0;
}
