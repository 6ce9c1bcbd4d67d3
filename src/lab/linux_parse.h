/* Parsers of a Linux lab guest console: lab blocks, dmesg times, fio, iperf3, vsk (vsock), /proc/interrupts. */
#ifndef MSIVM_LAB_LINUX_PARSE_H
#define MSIVM_LAB_LINUX_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Steps *cursor over one line of text: *line and *len are the line without its "\n" and
 * trailing "\r"s. Returns false (and leaves the outputs alone) at the end of the text. */
bool lp_next_line(const char **cursor, const char **line, size_t *len);

/* Extracts the first block NAME of a console: the lines starting with "lab| " between
 * "lab: begin NAME" and "lab: end NAME", prefixes removed, joined with "\n" ("\r" line ends
 * and any other line inside the block, such as kernel messages, are dropped). Returns 0 and
 * a malloc'd *out (the caller frees it), or -ENOENT (no such block), -EPROTO (no end marker,
 * or another block begins first: the output was truncated), -ENODATA (no output in it),
 * -ENOMEM; *out is NULL on error. */
int lp_block(const char *console, const char *name, char **out, struct error *err);

/* Finds the first line "[ SECONDS] ...NEEDLE..." (dmesg format; text such as "lab| " may
 * precede the '[') and returns SECONDS. Returns 0, -ENOENT (no such line) or -EINVAL (the
 * first line with NEEDLE after a '[' has a malformed timestamp). */
int lp_dmesg_time(const char *text, const char *needle, double *secs, struct error *err);

/* One fio run (fio --output-format=json --group_reporting): jobs[0]. Bandwidth in MiB/s,
 * latencies in us (mean: lat_ns; p99: clat_ns, or lat_ns with --lat_percentiles), runtime_s
 * the longer of the two directions' runtimes. A direction with no I/O has has_x false and
 * its figures 0. */
struct lp_fio {
	bool has_read, has_write;
	double read_iops, write_iops, read_mib_s, write_mib_s;
	double read_lat_mean_us, write_lat_mean_us, read_lat_p99_us, write_lat_p99_us;
	double runtime_s;
	uint64_t read_ios, write_ios;
};

/* Parses fio's JSON output; text before the first line starting with '{' (fio's warnings) and
 * after the JSON object is skipped. Returns 0, or -EINVAL (no or invalid JSON, a missing
 * field or one of the wrong type, a failed job, no I/O at all) with the message naming it. */
int lp_fio_json(const char *text, struct lp_fio *out, struct error *err);

/* One iperf3 run (iperf3 -J): end.sum_sent / end.sum_received in Mbit/s (10^6 bit/s);
 * seconds and retransmits (0 when absent: UDP) from sum_sent; reverse from -R. */
struct lp_iperf {
	double sent_mbit_s, received_mbit_s, seconds;
	uint64_t retransmits;
	bool reverse;
};

/* Parses iperf3's JSON output (text before the first line starting with '{' is skipped).
 * Returns 0, or -EINVAL for invalid JSON, a missing or mistyped field, or a report of a
 * failed run (its "error" text is in the message). */
int lp_iperf3_json(const char *text, struct lp_iperf *out, struct error *err);

/* One result line of the guest's vsock workloads (tests/linux/vsk.c): "rr count=N size=S
 * min_us=A p50_us=B p99_us=C max_us=D mean_us=E" (round trips) or "bulk bytes=N secs=S
 * mib_s=R" (one stream to a sink, timed until the sink closed). */
struct lp_vsock {
	bool rr;                   /* a round-trip line (else bulk) */
	double count, size;        /* rr: round trips, bytes each way */
	double min_us, p50_us, p99_us, max_us, mean_us;
	double bytes, secs, mib_s; /* bulk */
};

/* Parses the first "rr " or "bulk " line of text. Returns 0, or -EINVAL (no such line, a
 * missing or malformed key, a count or size of 0, latencies out of order) naming it. */
int lp_vsock_line(const char *text, struct lp_vsock *out, struct error *err);

#define LP_IRQ_MAX 128

/* One /proc/interrupts row. Numbered rows ("25:") have chip ("PCI-MSI", "IO-APIC",
 * "PCI-MSIX-0000:00:03.0"), hwirq_type ("16385-edge") and type (after its last '-': "edge",
 * "fasteoi", "level"); named rows ("LOC:") have them empty and names = the description.
 * total is the sum over CPUs. Longer strings are cut to fit. */
struct lp_irq_row {
	char irq[16];
	uint64_t total;
	char chip[40];
	char hwirq_type[32];
	char type[16];
	char names[96];
};

struct lp_irq_table {
	unsigned ncpus, n;
	struct lp_irq_row rows[LP_IRQ_MAX];
};

/* Parses /proc/interrupts: the first non-blank line is the "CPU0 CPU1 ..." header, then
 * one row per line (ERR and MIS may have a single count). Returns 0, or -EINVAL (no header,
 * a row with fewer counts than CPUs or a numbered one without chip: truncated; a count that
 * is not a number, a line that is no row) or -E2BIG (more than LP_IRQ_MAX rows), naming the
 * line. */
int lp_proc_interrupts(const char *text, struct lp_irq_table *t, struct error *err);

/* Level-triggered: type "fasteoi" or "level". */
bool lp_irq_is_level(const struct lp_irq_row *r);

/* Message signalled: the chip name contains "MSI" (PCI-MSI, PCI-MSIX-..., IR-PCI-MSI). */
bool lp_irq_is_msi(const struct lp_irq_row *r);

/* The rows of `after` whose names contain name_prefix (NULL: every row), each with total =
 * after - before for the row of `before` with the same irq (0 if none). `out` must not be
 * `before`. Returns 0, or -ERANGE when a count went down (another boot? wrapped?). */
int lp_irq_delta(const struct lp_irq_table *before, const struct lp_irq_table *after,
		 const char *name_prefix, struct lp_irq_table *out, struct error *err);

#endif
