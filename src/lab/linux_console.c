/* Linux lab console -> figures: boot times, workload results, interrupts per vector, level lines under MSI-X. */
#include "lab/linux_lab.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text after "lab: KEY" on its first line, or NULL. */
static const char *lab_line(const char *console, const char *key, char *out, size_t len)
{
	const char *cur = console, *line;
	size_t n, k = strlen(key);
	while (lp_next_line(&cur, &line, &n)) {
		const char *p = memmem(line, n, key, k);
		if (p) {
			p += k;
			snprintf(out, len, "%.*s", (int)(n - (size_t)(p - line)), p);
			return out;
		}
	}
	return NULL;
}

/* Parses block NAME as /proc/interrupts into a malloc'd table; NULL (with err) on failure. */
static struct lp_irq_table *irq_block(const char *console, const char *name, struct error *err)
{
	char *text = NULL;
	if (lp_block(console, name, &text, err))
		return NULL;
	struct lp_irq_table *t = malloc(sizeof(*t));
	if (!t) {
		free(text);
		error_set(err, -ENOMEM, "out of memory");
		return NULL;
	}
	int ret = lp_proc_interrupts(text, t, err);
	free(text);
	if (ret) {
		free(t);
		return NULL;
	}
	return t;
}

/* The rows of `t` named `rows` ("virtio", "nvme": counts since boot), malloc'd. */
static struct lp_irq_table *device_rows(const struct lp_irq_table *t, const char *rows,
					struct error *err)
{
	struct lp_irq_table *zero = calloc(1, sizeof(*zero)), *out = malloc(sizeof(*out));
	if (!zero || !out || lp_irq_delta(zero, t, rows, out, err)) {
		free(out);
		out = NULL;
	}
	free(zero);
	return out;
}

/* Appends the virtio rows of `t` that interrupted on a level-triggered (IO-APIC) line. */
static void note_level(const struct lp_irq_table *t, const char *when, char *buf, size_t len)
{
	for (unsigned i = 0; t && i < t->n; i++) {
		const struct lp_irq_row *r = &t->rows[i];
		if (!lp_irq_is_level(r) && lp_irq_is_msi(r))
			continue;
		if (strstr(buf, r->names))
			continue; /* named already */
		size_t k = strlen(buf);
		snprintf(buf + k, len - k, "%s%s (%s %s, %s)", k ? "; " : "", r->names, r->chip,
			 r->hwirq_type, when);
	}
}

static void parse_work(const char *console, enum ll_work w, const char *rows,
		       struct ll_work_result *r)
{
	struct error err = { "" };
	char name[64], *text = NULL;
	const char *n = ll_work_name(w);
	snprintf(name, sizeof(name), "%s", n);
	int ret = lp_block(console, name, &text, &err);
	if (ret == -ENOENT) {
		snprintf(r->error, sizeof(r->error), "no output from %s", n);
		return;
	}
	r->ran = true;
	if (!ret && ll_work_is_fio(w)) {
		ret = lp_fio_json(text, &r->fio, &err);
		if (!ret) {
			r->ios = (double)(r->fio.read_ios + r->fio.write_ios);
			r->mib = (r->fio.read_mib_s + r->fio.write_mib_s) * r->fio.runtime_s;
		}
	} else if (!ret && ll_work_is_vsock(w)) {
		ret = lp_vsock_line(text, &r->vsock, &err);
		if (!ret && r->vsock.rr != (w == LL_VSOCK_RR))
			ret = error_set(&err, -EINVAL, "a %s line in the %s block",
					r->vsock.rr ? "round-trip" : "bulk", n);
		if (!ret) {
			r->ios = r->vsock.count;
			r->mib = r->vsock.rr ? 2 * r->vsock.count * r->vsock.size / 1048576.0
					     : r->vsock.bytes / 1048576.0;
		}
	} else if (!ret) {
		ret = lp_iperf3_json(text, &r->iperf, &err);
		if (!ret)
			r->mib = r->iperf.received_mbit_s * 1e6 / 8 * r->iperf.seconds / 1048576.0;
	}
	free(text);
	if (ret) {
		snprintf(r->error, sizeof(r->error), "%s: %s", n, err.msg);
		return;
	}
	struct lp_irq_table *before, *after;
	snprintf(name, sizeof(name), "irq-before-%s", n);
	before = irq_block(console, name, &err);
	snprintf(name, sizeof(name), "irq-after-%s", n);
	after = before ? irq_block(console, name, &err) : NULL;
	r->irqs = after ? malloc(sizeof(*r->irqs)) : NULL;
	if (r->irqs && lp_irq_delta(before, after, rows, r->irqs, &err)) {
		free(r->irqs);
		r->irqs = NULL;
	}
	if (!r->irqs)
		snprintf(r->error, sizeof(r->error), "%s interrupts: %s", n, err.msg);
	free(before);
	free(after);
}

void ll_parse_console(const char *console, const struct ll_config *cfg, bool work,
		      struct ll_run *run)
{
	char buf[256];
	struct error err = { "" };
	if (!console)
		console = "";
	if (lab_line(console, "lab: ready uptime=", buf, sizeof(buf)))
		run->ready_s = strtod(buf, NULL);
	char *dm = NULL;
	if (!lp_block(console, "dmesg", &dm, &err))
		lp_dmesg_time(dm, " as init process", &run->run_init_s, &err); /* "Run /lab-init as ..." */
	free(dm);
	struct lp_irq_table *t = irq_block(console, "irq-ready", &err);
	run->irq_ready = t ? device_rows(t, ll_config_irq_rows(cfg), &err) : NULL;
	free(t);
	if (cfg->msi_expected)
		note_level(run->irq_ready, "at boot", run->level_with_msi, sizeof(run->level_with_msi));
	uint32_t asked = run->asked ? run->asked : ll_works_default(run->vsock);
	for (unsigned k = 0; work && k < LL_NWORK; k++) {
		if (!(asked & LL_WORK_BIT(k)))
			continue;
		parse_work(console, (enum ll_work)k, ll_config_irq_rows(cfg), &run->work[k]);
		if (cfg->msi_expected)
			note_level(run->work[k].irqs, ll_work_name((enum ll_work)k), run->level_with_msi,
				   sizeof(run->level_with_msi));
	}
	if (lab_line(console, "lab: error ", buf, sizeof(buf))) {
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "the guest reported: %.200s", buf);
	} else if (!strstr(console, "lab: poweroff")) {
		/* The last line the guest printed says where it stopped. */
		const char *cur = console, *line, *last = "";
		size_t n, lastn = 0;
		while (lp_next_line(&cur, &line, &n))
			if (n)
				last = line, lastn = n;
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "the guest did not reach its poweroff; its console ends: %.*s",
			 (int)(lastn > 160 ? 160 : lastn), last);
	}
	/* A run that was to work counts only with every workload's block, whatever its status. */
	for (unsigned k = 0; work && !run->failed && k < LL_NWORK; k++) {
		if (run->work[k].ran || !(asked & LL_WORK_BIT(k)))
			continue;
		run->failed = true;
		snprintf(run->error, sizeof(run->error), "the guest powered off without its %s workload (%s)",
			 ll_work_name((enum ll_work)k), run->work[k].error);
	}
}
