/* Lab metrics: the experiment table and how raw run output becomes figures. */
#ifndef MSIVM_LAB_LAB_METRICS_H
#define MSIVM_LAB_LAB_METRICS_H

#include "lab/lab.h"

/* The console line the probe prints once its first virtio request is done. */
#define LAB_READY_LINE "probe: ready"
/* The probe's work window (guest cmdline labwin=MS): a line, an idle pause of
 * MS, the workload, a line with the guest's counts, a pause. */
#define LAB_WORK_BEGIN_LINE "probe: work begin"
#define LAB_WORK_END_LINE   "probe: work end"
#define LAB_WINDOW_ARG      "labwin=20"
/* QEMU machine the probe's PCI devices work on (see guest/README.md). */
#define LAB_QEMU_MACHINE "q35"

/* What one run left behind, before interpretation. */
struct lab_raw {
	enum lab_vmm vmm;
	double wall_ns, ready_ns, cpu_ns, tsc_hz;
	double cpu_after_ready_ns; /* process CPU from the ready line to exit (both VMMs) */
	const char *console;      /* guest console output */
	const char *stats_json;   /* msivm --stats-json (NULL under QEMU) */
	const struct lab_cpu_window *work_cpu; /* VMM CPU in the work window, NULL if not seen */
	bool ok;                  /* the guest reported success */
};

/* Fills v[i] for each of exp's metrics (NaN where not measured). */
void lab_compute_metrics(const struct lab_experiment *exp, const struct lab_raw *raw, double *v);

#endif
