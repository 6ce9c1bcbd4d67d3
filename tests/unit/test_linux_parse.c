/* Unit tests for the Linux guest console parsers, on fio/iperf3/proc samples recorded on a host. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab/linux_parse.h"

/* Recorded with fio-3.33 and iperf 3.12 (loopback) and cat /proc/interrupts (Linux 6.18). */
#define DATA "tests/unit/data/linux/"

/* The whole sample file as a string (the tests run from the repository root). */
static char *sample(const char *name)
{
	char path[256];
	FILE *f;
	long n;
	char *buf;

	snprintf(path, sizeof(path), DATA "%s", name);
	f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s (run the test from the repository root)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The string with the first `from` replaced by `to` (malloc'd); fails if `from` is absent. */
static char *replace(const char *s, const char *from, const char *to)
{
	const char *at = strstr(s, from);
	size_t a, b = strlen(to), c;
	char *r;

	if (!at)
		fail_msg("'%s' not in the sample", from);
	a = (size_t)(at - s);
	c = strlen(at + strlen(from));
	r = malloc(a + b + c + 1);
	assert_non_null(r);
	memcpy(r, s, a);
	memcpy(r + a, to, b);
	memcpy(r + a + b, at + strlen(from), c + 1);
	return r;
}

/* Equal to 1e-9 relative (absolute below 1). */
#define assert_near(a, b) assert_true(fabs((a) - (b)) <= 1e-9 * (fabs(b) > 1.0 ? fabs(b) : 1.0))

static void expect_msg(const struct error *err, const char *part)
{
	if (!strstr(err->msg, part))
		fail_msg("error '%s' does not mention '%s'", err->msg, part);
}

/* The parsers, for the checks common to all. */
enum parser { P_FIO, P_IPERF, P_IRQS, P_BLOCK };

/* Runs parser `which` on the text into *out: a struct lp_fio, lp_iperf or lp_irq_table
 * (P_BLOCK extracts block "irq" and frees it). */
static int parse_into(enum parser which, const char *text, void *out, struct error *err)
{
	char *b;
	int ret;

	switch (which) {
	case P_FIO:
		return lp_fio_json(text, out, err);
	case P_IPERF:
		return lp_iperf3_json(text, out, err);
	case P_IRQS:
		return lp_proc_interrupts(text, out, err);
	default:
		ret = lp_block(text, "irq", &b, err);
		if (!ret)
			free(b);
		return ret;
	}
}

/* Runs parser `which` on the text, dropping what it parsed. */
static int parse_any(enum parser which, const char *text, struct error *err)
{
	void *out = malloc(sizeof(struct lp_irq_table)); /* the largest output */
	int ret;

	assert_non_null(out);
	ret = parse_into(which, text, out, err);
	free(out);
	return ret;
}

/* Parser `which` succeeds on the text (the test fails on an error); *out is filled with
 * garbage first, so a field the parser does not write shows. */
static void parse_ok(enum parser which, const char *text, void *out, size_t size)
{
	struct error err = { "" };

	memset(out, 0xa5, size);
	if (parse_into(which, text, out, &err))
		fail_msg("parser %d: %s", which, err.msg);
}

/* Parser `which` fails on the text with `code` and a message mentioning `part`. */
static void expect_error(enum parser which, const char *text, int code, const char *part)
{
	struct error err = { "" };

	assert_int_equal(parse_any(which, text, &err), code);
	expect_msg(&err, part);
}

/* The sample with `from` replaced by `to` fails with -EINVAL and a message mentioning `part`. */
static void expect_patched_error(enum parser which, const char *s, const char *from,
				 const char *to, const char *part)
{
	char *p = replace(s, from, to);

	expect_error(which, p, -EINVAL, part);
	free(p);
}

/* ---- lab blocks ---- */

static void expect_block(const char *console, const char *name, const char *want)
{
	struct error err = { "" };
	char *out = (char *)1;
	int ret = lp_block(console, name, &out, &err);

	if (ret)
		fail_msg("lp_block(%s) = %d: %s", name, ret, err.msg);
	assert_string_equal(out, want);
	free(out);
}

static void expect_block_error(const char *console, const char *name, int code, const char *part)
{
	struct error err = { "" };
	char *out = (char *)1;

	assert_int_equal(lp_block(console, name, &out, &err), code);
	assert_null(out);
	expect_msg(&err, part);
}

static void test_block_extracts_and_skips_kernel_lines(void **state)
{
	expect_block("[    0.5] virtio_blk virtio1: [vda] 32768 512-byte logical blocks\n"
		     "lab: ready uptime=1.20\n"
		     "lab: begin fio-rw\n"
		     "lab| {\n"
		     "[    2.345678] random: crng init done\n"
		     "lab|   \"jobs\" : []\n"
		     "lab: mark end fio-rw\n"
		     "lab| }\n"
		     "lab: end fio-rw\n"
		     "lab| after the end\n",
		     "fio-rw", "{\n  \"jobs\" : []\n}\n");
}

static void test_block_crlf_console(void **state)
{
	expect_block("lab: begin irq\r\nlab| a b\r\n[ 1.0] x\r\nlab| \r\nlab|\r\nlab| c\r\r\n"
		     "lab: end irq\r\n",
		     "irq", "a b\n\n\nc\n");
}

static void test_block_first_of_name_only(void **state)
{
	const char *c = "lab: begin fio-rw-x\nlab| wrong\nlab: end fio-rw-x\n"
			"lab: begin fio-rw \nlab| first\nlab: end fio-rw\n"
			"lab: begin fio-rw\nlab| second\nlab: end fio-rw\n";

	expect_block(c, "fio-rw", "first\n");
	expect_block(c, "fio-rw-x", "wrong\n");
	/* No end line after the last line of the console: still complete. */
	expect_block("lab: begin a\nlab| 1\nlab: end a", "a", "1\n");
}

static void test_block_errors(void **state)
{
	expect_block_error("", "fio-rw", -ENOENT, "no console block 'fio-rw'");
	expect_block_error("lab: begin fio-rw2\nlab| x\nlab: end fio-rw2\n", "fio-rw", -ENOENT,
			   "no 'lab: begin fio-rw'");
	expect_block_error("lab: begin fio-rw\nlab| {\nlab| \"jo", "fio-rw", -EPROTO,
			   "truncated: no 'lab: end fio-rw'");
	expect_block_error("lab: begin a\nlab| 1\nlab: begin b\nlab| 2\nlab: end b\nlab: end a\n",
			   "a", -EPROTO, "truncated: 'lab: begin b'");
	expect_block_error("lab: begin a\n[ 1.0] kernel\nlab: end a\n", "a", -ENODATA, "empty");
	expect_block_error("lab: begin a\nlab| \nlab:   \nlab: end a\n", "a", -ENODATA, "empty");
	expect_block_error("lab: begin \nlab| x\nlab: end \n", "", -EINVAL, "no name");
}

/* ---- dmesg ---- */

static void test_dmesg_time(void **state)
{
	struct error err = { "" };
	double t = -1;
	const char *log = "[    0.000000] Linux version 6.1.0-31-cloud-amd64\r\n"
			  "[    0.912345] Freeing unused kernel image (initmem) memory: 2000K\r\n"
			  "lab| [    1.234567] Run /init as init process\r\n"
			  "[    9.000000] Run /init as init process\r\n";

	assert_int_equal(lp_dmesg_time(log, "Run /init", &t, &err), 0);
	assert_near(t, 1.234567);
	assert_int_equal(lp_dmesg_time(log, "Linux version", &t, &err), 0);
	assert_near(t, 0.0);
	/* The needle is looked for after the ']' only. */
	assert_int_equal(lp_dmesg_time("[   12.5] x\n[   13.25] 12.5\n", "12.5", &t, &err), 0);
	assert_near(t, 13.25);
	/* A line with the needle but no timestamp is no dmesg line. */
	assert_int_equal(lp_dmesg_time("Run /init\n[7] Run /init\n", "Run /init", &t, &err), 0);
	assert_near(t, 7.0);
}

static void test_dmesg_errors(void **state)
{
	struct error err = { "" };
	double t = -1;

	assert_int_equal(lp_dmesg_time("", "Run /init", &t, &err), -ENOENT);
	expect_msg(&err, "no dmesg line with 'Run /init'");
	assert_int_equal(lp_dmesg_time("[ 1.0] other\nRun /init\n", "Run /init", &t, &err), -ENOENT);
	assert_int_equal(lp_dmesg_time("[    1.2x4567] Run /init as init process\n", "Run /init", &t,
				       &err), -EINVAL);
	expect_msg(&err, "malformed timestamp");
	assert_int_equal(lp_dmesg_time("[    1.] Run /init\n", "Run /init", &t, &err), -EINVAL);
	assert_int_equal(lp_dmesg_time("[    1.5 Run /init\n", "Run /init", &t, &err), -EINVAL);
	assert_near(t, -1.0);
}

/* ---- fio ---- */

static void expect_fio_rw(const struct lp_fio *f)
{
	/* Read off tests/unit/data/linux/fio-rw.json. */
	assert_true(f->has_read);
	assert_true(f->has_write);
	assert_int_equal(f->read_ios, 843784);
	assert_int_equal(f->write_ios, 844472);
	assert_near(f->read_iops, 421681.159420);
	assert_near(f->write_iops, 422024.987506);
	assert_near(f->read_mib_s, 1686724 / 1024.0);
	assert_near(f->write_mib_s, 1688099 / 1024.0);
	assert_near(f->read_lat_mean_us, 1.602483618);
	assert_near(f->write_lat_mean_us, 2.301475256);
	assert_near(f->read_lat_p99_us, 2.960);
	assert_near(f->write_lat_p99_us, 4.192);
	assert_near(f->runtime_s, 2.001);
}

static void test_fio_rw_sample(void **state)
{
	char *s = sample("fio-rw.json");
	struct lp_fio f;

	parse_ok(P_FIO, s, &f, sizeof(f));
	free(s);
	expect_fio_rw(&f);
}

static void test_fio_randread_sample(void **state)
{
	char *s = sample("fio-randread.json");
	struct lp_fio f;

	parse_ok(P_FIO, s, &f, sizeof(f));
	assert_true(f.has_read);
	assert_false(f.has_write);
	assert_int_equal(f.read_ios, 459449);
	assert_int_equal(f.write_ios, 0);
	assert_near(f.read_iops, 229609.695152);
	assert_near(f.read_mib_s, 918438 / 1024.0);
	assert_near(f.read_lat_mean_us, 138.762104146);
	assert_near(f.read_lat_p99_us, 201.728);
	assert_near(f.write_mib_s, 0.0);
	assert_near(f.write_lat_p99_us, 0.0);
	assert_near(f.runtime_s, 2.001);
	free(s);
}

static void test_fio_skips_warnings(void **state)
{
	char *s = sample("fio-rw.json");
	char *w = replace(s, "{", "fio: this platform does not support process shared mutexes\n"
				  "note: both iodepth >= 1 and synchronous I/O engine are selected\n{");
	char *tail = malloc(strlen(w) + 64);
	struct lp_fio f;

	sprintf(tail, "%sfio: file hash not empty on exit\n", w);
	parse_ok(P_FIO, tail, &f, sizeof(f));
	expect_fio_rw(&f);
	free(tail);
	free(w);
	free(s);
}


static void test_fio_errors(void **state)
{
	char *s = sample("fio-rw.json");

	expect_error(P_FIO, "", -EINVAL, "no JSON object");
	expect_error(P_FIO, "fio: failed to open /dev/vda\n", -EINVAL, "no JSON object");
	expect_error(P_FIO, "{", -EINVAL, "invalid JSON at line 1");
	expect_error(P_FIO, "{}", -EINVAL, "no \"jobs\"");
	expect_error(P_FIO, "{\"jobs\": 3}", -EINVAL, "\"jobs\" is not an array");
	expect_error(P_FIO, "{\"jobs\": []}", -EINVAL, "\"jobs\" is empty");
	expect_error(P_FIO, "{\"jobs\": [7]}", -EINVAL, "jobs[0] is not an object");
	expect_error(P_FIO, "{\"jobs\": [{\"jobname\": \"rw\"}]}", -EINVAL, "fio jobs[0]: no \"read\"");
	expect_patched_error(P_FIO, s, "\"total_ios\" : 843784", "\"total_ios\" : x", "invalid JSON");
	expect_patched_error(P_FIO, s, "\"total_ios\" : 843784", "\"total_ios\" : \"843784\"",
				 "fio jobs[0].read.total_ios is not an integer");
	expect_patched_error(P_FIO, s, "\"iops\" : 421681.159420", "\"iops\" : -1.0",
				 "fio jobs[0].read.iops is negative");
	expect_patched_error(P_FIO, s, "\"bw\" : 1688099", "\"bw\" : null",
				 "fio jobs[0].write.bw is not a number");
	expect_patched_error(P_FIO, s, "\"mean\" : 1602.483618", "\"mean\" : []",
				 "fio jobs[0].read.lat_ns.mean is not a number");
	expect_patched_error(P_FIO, s, "\"99.000000\" : 2960", "\"99.0\" : 2960",
				 "read.clat_ns.percentile: no \"99.000000\"");
	expect_patched_error(P_FIO, s, "\"percentile\" : {", "\"percentiles\" : {",
				 "fio jobs[0].read: no 99th percentile");
	expect_patched_error(P_FIO, s, "\"error\" : 0", "\"error\" : 5", "fio job 'rw' failed: error 5");
	expect_patched_error(P_FIO, s, "\"write\" : {", "\"written\" : {", "fio jobs[0]: no \"write\"");
	free(s);
	/* A job that did no I/O. */
	s = sample("fio-randread.json");
	expect_patched_error(P_FIO, s, "\"total_ios\" : 459449", "\"total_ios\" : 0", "no I/O done");
	free(s);
}

/* Every prefix of a sample before its final '}' fails, as "invalid JSON" once a '{' is in. */
static void test_fio_truncated(void **state)
{
	char *s = sample("fio-randread.json");
	size_t last = (size_t)(strrchr(s, '}') - s);

	for (size_t cut = 0; cut <= last; cut++) {
		char saved = s[cut];

		s[cut] = '\0';
		expect_error(P_FIO, s, -EINVAL, cut == 0 ? "no JSON object" : "invalid JSON");
		s[cut] = saved;
	}
	free(s);
}

/* ---- iperf3 ---- */

static void test_iperf3_samples(void **state)
{
	char *s = sample("iperf3-tcp.json"), *r = sample("iperf3-tcp-reverse.json");
	struct lp_iperf ip;

	parse_ok(P_IPERF, s, &ip, sizeof(ip));
	assert_near(ip.sent_mbit_s, 22889.292504667271);
	assert_near(ip.received_mbit_s, 22887.598905334641);
	assert_near(ip.seconds, 1.000049);
	assert_int_equal(ip.retransmits, 0);
	assert_false(ip.reverse);
	parse_ok(P_IPERF, r, &ip, sizeof(ip));
	assert_near(ip.sent_mbit_s, 24758.204584303806);
	assert_near(ip.received_mbit_s, 24759.282309530716);
	assert_near(ip.seconds, 1.00037);
	assert_true(ip.reverse);
	free(r);
	free(s);
}

static void test_iperf3_retransmits_and_udp(void **state)
{
	static const char sum_sent_rt[] = "\"retransmits\":\t0,\n\t\t\t\"sender\"";
	char *s = sample("iperf3-tcp.json");
	char *p = replace(s, sum_sent_rt, "\"retransmits\":\t17,\n\t\t\t\"sender\"");
	struct lp_iperf ip;

	parse_ok(P_IPERF, p, &ip, sizeof(ip));
	assert_int_equal(ip.retransmits, 17);
	free(p);
	/* UDP reports have no retransmits: 0. */
	p = replace(s, sum_sent_rt, "\"sender\"");
	parse_ok(P_IPERF, p, &ip, sizeof(ip));
	assert_int_equal(ip.retransmits, 0);
	free(p);
	free(s);
}

static void test_iperf3_errors(void **state)
{
	char *refused = sample("iperf3-refused.json"), *s = sample("iperf3-tcp.json");

	expect_error(P_IPERF, refused, -EINVAL,
		     "iperf3 failed: unable to connect to server: Connection refused");
	expect_error(P_IPERF, "", -EINVAL, "iperf3 output: no JSON object");
	expect_error(P_IPERF, "iperf3: error - unable to connect to server\n", -EINVAL,
		     "no JSON object");
	expect_error(P_IPERF, "{\"error\": 3}", -EINVAL, "iperf3 failed: (error of the wrong type)");
	expect_error(P_IPERF, "{\"start\": {}}", -EINVAL, "iperf3 output: no \"end\"");
	expect_patched_error(P_IPERF, s, "\"sum_sent\"", "\"sum_snt\"",
			     "iperf3 end: no \"sum_sent\"");
	expect_patched_error(P_IPERF, s, "\n\t\t\t\"bits_per_second\":\t22887598905.334641",
			     "\n\t\t\t\"bits_per_second\":\t\"22887598905.334641\"",
			     "iperf3 end.sum_received.bits_per_second is not a number");
	expect_patched_error(P_IPERF, s, "\"bits_per_second\":\t22889292504.66727",
			     "\"bits_per_second\":\tx", "invalid JSON");
	expect_patched_error(P_IPERF, s, "\"reverse\":\t0", "\"reverse\":\t\"no\"",
			     "iperf3 start.test_start: a mistyped \"reverse\"");
	expect_patched_error(P_IPERF, s, "\"retransmits\":\t0,\n\t\t\t\"sender\"",
			     "\"retransmits\":\t-2,\n\t\t\t\"sender\"", "retransmits is negative");
	for (size_t cut = 1; cut <= (size_t)(strrchr(s, '}') - s); cut++) {
		char saved = s[cut];
		s[cut] = '\0';
		expect_error(P_IPERF, s, -EINVAL, "invalid JSON");
		s[cut] = saved;
	}
	free(s);
	free(refused);
}

/* ---- /proc/interrupts ---- */

/* Linux 6.1 style (PCI-MSI with a large hwirq), as in the kernel the lab boots. */
static const char irq_61[] =
	"           CPU0       CPU1       \n"
	"  0:         43          0   IO-APIC   2-edge      timer\n"
	"  4:        512          0   IO-APIC   4-edge      ttyS0\n"
	" 11:       1032          0   IO-APIC  11-fasteoi   virtio1, virtio2\n"
	" 24:          0          0   PCI-MSI 16384-edge      virtio0-config\n"
	" 25:       1250          7   PCI-MSI 16385-edge      virtio0-req.0\n"
	" 26:          3          0  PCI-MSIX-0000:00:03.0   1-edge      virtio1-input.0\n"
	"NMI:          0          0   Non-maskable interrupts\n"
	"LOC:      12345      67890   Local timer interrupts\n"
	"ERR:          0\n";

static struct lp_irq_table *parse_irqs(const char *text)
{
	struct lp_irq_table *t = malloc(sizeof(*t));

	assert_non_null(t);
	parse_ok(P_IRQS, text, t, sizeof(*t));
	return t;
}

static const struct lp_irq_row *row(const struct lp_irq_table *t, const char *irq)
{
	for (unsigned i = 0; i < t->n; i++)
		if (!strcmp(t->rows[i].irq, irq))
			return &t->rows[i];
	fail_msg("no irq %s", irq);
	return NULL;
}

enum irq_sample { LINUX61, HOST, SHAPES };

/* What the samples' rows parse to, read off them by hand. */
static const struct want_row {
	enum irq_sample sample;
	const char *irq;
	uint64_t total;
	const char *chip, *hwirq_type, *type, *names;
	bool level, msi;
} want_rows[] = {
	{ LINUX61, "25", 1257, "PCI-MSI", "16385-edge", "edge", "virtio0-req.0", false, true },
	{ LINUX61, "11", 1032, "IO-APIC", "11-fasteoi", "fasteoi", "virtio1, virtio2", true, false },
	{ LINUX61, "26", 3, "PCI-MSIX-0000:00:03.0", "1-edge", "edge", "virtio1-input.0", false, true },
	{ LINUX61, "LOC", 80235, "", "", "", "Local timer interrupts", false, false },
	{ LINUX61, "ERR", 0, "", "", "", "", false, false },
	{ HOST, "36", 340567, "PCI-MSIX-0000:00:02.0", "1-edge", "edge", "virtio1-req.0", false, true },
	{ HOST, "24", 1, "IO-APIC", "5-edge", "edge", "ACPI:Ged", false, false },
	{ HOST, "LOC", 6112933ULL + 6204746ULL, "", "", "", "Local timer interrupts", false, false },
	{ HOST, "MIS", 0, "", "", "", "", false, false },
	{ HOST, "PIW", 0, "", "", "", "Posted-interrupt wakeup event", false, false },
	{ SHAPES, "9", 1, "IR-IO-APIC", "9-fasteoi", "fasteoi", "acpi", true, false },
	{ SHAPES, "30", 5, "IR-PCI-MSI", "512000-edge", "edge", "nvme0q0", false, true },
	{ SHAPES, "31", 2, "IO-APIC", "-level", "level", "", true, false },
	{ SHAPES, "32", 4, "None", "", "", "some-name", false, false },
	{ SHAPES, "LOC", 10, "", "", "", "Local timer interrupts", false, false },
};

/* Sample `which` (text) parses to ncpus CPUs, n rows, and the rows of want_rows. */
static void expect_irq_sample(enum irq_sample which, const char *text, unsigned ncpus,
			      unsigned n)
{
	struct lp_irq_table *t = parse_irqs(text);

	assert_int_equal(t->ncpus, ncpus);
	assert_int_equal(t->n, n);
	for (size_t i = 0; i < sizeof(want_rows) / sizeof(want_rows[0]); i++) {
		const struct want_row *w = &want_rows[i];
		const struct lp_irq_row *r;

		if (w->sample != which)
			continue;
		r = row(t, w->irq);
		assert_int_equal(r->total, w->total);
		assert_string_equal(r->chip, w->chip);
		assert_string_equal(r->hwirq_type, w->hwirq_type);
		assert_string_equal(r->type, w->type);
		assert_string_equal(r->names, w->names);
		assert_int_equal(lp_irq_is_level(r), w->level);
		assert_int_equal(lp_irq_is_msi(r), w->msi);
	}
	free(t);
}

static void test_irqs_linux61(void **state)
{
	expect_irq_sample(LINUX61, irq_61, 2, 9);
}

static void test_irqs_host_sample(void **state)
{
	char *s = sample("proc-interrupts-6.18.txt");

	expect_irq_sample(HOST, s, 2, 35);
	free(s);
}

/* IR- chips, a row without hwirq, one without flow name, 4 CPUs, \r\n and blank lines. */
static void test_irqs_other_shapes(void **state)
{
	expect_irq_sample(SHAPES,
			  "\n           CPU0       CPU1       CPU2       CPU3\r\n"
			  " 9:   0   1   0   0  IR-IO-APIC    9-fasteoi   acpi\r\n"
			  " 30:  5   0   0   0  IR-PCI-MSI 512000-edge      nvme0q0\r\n"
			  " 31:  0   0   0   2  IO-APIC     -level  \r\n"
			  " 32:  1   1   1   1  None  some-name\r\n"
			  "\r\n"
			  "LOC:  1   2   3   4   Local timer interrupts\r\n",
			  4, 5);
}

static void test_irqs_errors(void **state)
{
	const char *hdr = "           CPU0       CPU1\n";
	char text[8192];

	expect_error(P_IRQS, "", -EINVAL, "/proc/interrupts: empty");
	expect_error(P_IRQS, " \n\n", -EINVAL, "empty");
	expect_error(P_IRQS, "  0:  43  0  IO-APIC  2-edge  timer\n", -EINVAL, "no 'CPU0 ...' header");
	expect_error(P_IRQS, "  CPU0  CPUx\n", -EINVAL, "no 'CPU0 ...' header (line 1");
	snprintf(text, sizeof(text), "%s 25:       1250\n", hdr);
	expect_error(P_IRQS, text, -EINVAL, "line 2 (irq 25): only 1 of 2 CPU counts (truncated?)");
	snprintf(text, sizeof(text), "%s 25:       1250     7\n", hdr);
	expect_error(P_IRQS, text, -EINVAL, "line 2 (irq 25): no chip (truncated?)");
	snprintf(text, sizeof(text), "%sLOC:      12345\n", hdr);
	expect_error(P_IRQS, text, -EINVAL, "irq LOC): only 1 of 2");
	snprintf(text, sizeof(text), "%s 25:       1250      x   PCI-MSI 16385-edge  virtio0-req.0\n",
		 hdr);
	expect_error(P_IRQS, text, -EINVAL, "count for CPU1 is not a number: 'x'");
	snprintf(text, sizeof(text), "%s 25:  99999999999999999999  0  PCI-MSI 1-edge  v\n", hdr);
	expect_error(P_IRQS, text, -EINVAL, "count out of range");
	snprintf(text, sizeof(text), "%s 25:  1  0  PCI-MSI 1-edge  v\ngarbage here\n", hdr);
	expect_error(P_IRQS, text, -EINVAL, "line 3 is not an interrupt row: 'garbage here'");
	snprintf(text, sizeof(text), "%s x-y:  1  0  Something\n", hdr);
	expect_error(P_IRQS, text, -EINVAL, "not an interrupt row");

	/* LP_IRQ_MAX rows fit; one more is an error, not a silent cut. */
	size_t n = (size_t)snprintf(text, sizeof(text), "%s", hdr);
	for (int i = 0; i < LP_IRQ_MAX; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%d: 1 2 PCI-MSI %d-edge v%d\n", i,
				      i, i);
	struct lp_irq_table *t = parse_irqs(text);
	assert_int_equal(t->n, LP_IRQ_MAX);
	assert_int_equal(t->rows[LP_IRQ_MAX - 1].total, 3);
	free(t);
	snprintf(text + n, sizeof(text) - n, "NMI: 0 0 Non-maskable interrupts\n");
	expect_error(P_IRQS, text, -E2BIG, "more than 128 rows (line 130)");
}

/* Cutting the sample anywhere never crashes; a cut inside a row's counts is an error. */
static void test_irqs_truncated(void **state)
{
	char *s = sample("proc-interrupts-6.18.txt");
	size_t len = strlen(s);
	struct lp_irq_table *t = malloc(sizeof(*t));
	const char *after_counts = strstr(s, " 36:          0     ");

	assert_non_null(t);
	assert_non_null(after_counts);
	for (size_t cut = 0; cut < len; cut++) {
		struct error err = { "" };
		char saved = s[cut];
		int ret;

		s[cut] = '\0';
		ret = lp_proc_interrupts(s, t, &err);
		s[cut] = saved;
		if (ret != 0 && ret != -EINVAL)
			fail_msg("cut at %zu: %d", cut, ret);
		if (ret)
			assert_true(err.msg[0] != '\0');
		/* A cut inside "0     340567" of irq 36 leaves its counts or its chip missing. */
		if (s + cut > after_counts + 3 && s + cut <= after_counts + 26) {
			assert_int_equal(ret, -EINVAL);
			expect_msg(&err, "(irq 36)");
		}
	}
	free(t);
	free(s);
}

static void test_irq_delta(void **state)
{
	struct lp_irq_table *before = parse_irqs(irq_61);
	char *later = replace(irq_61, " 25:       1250          7", " 25:       1300         17");
	char *later2 = replace(later, "ERR:", " 27:  5  0  PCI-MSI 16386-edge  virtio0-req.1\nERR:");
	struct lp_irq_table *after = parse_irqs(later2), *out = malloc(sizeof(*out));
	struct error err = { "" };

	assert_int_equal(lp_irq_delta(before, after, "virtio0", out, &err), 0);
	assert_int_equal(out->ncpus, 2);
	assert_int_equal(out->n, 3);
	assert_string_equal(out->rows[0].irq, "24");
	assert_int_equal(out->rows[0].total, 0);
	assert_int_equal(row(out, "25")->total, 60);
	assert_int_equal(row(out, "27")->total, 5);
	assert_string_equal(row(out, "25")->chip, "PCI-MSI");
	assert_int_equal(lp_irq_delta(before, after, NULL, out, &err), 0);
	assert_int_equal(out->n, 10);
	assert_int_equal(row(out, "LOC")->total, 0);
	/* In place, into `after`. */
	assert_int_equal(lp_irq_delta(before, after, "virtio", after, &err), 0);
	assert_int_equal(after->n, 5);
	assert_int_equal(row(after, "25")->total, 60);
	/* A count that went down: the snapshots swapped. */
	free(after);
	after = parse_irqs(later2);
	assert_int_equal(lp_irq_delta(after, before, "virtio", out, &err), -ERANGE);
	expect_msg(&err, "irq 25 (virtio0-req.0): count went down from 1317 to 1257");
	free(out);
	free(after);
	free(before);
	free(later2);
	free(later);
}

/* ---- the whole path: a console with every sample framed, \r\n, kernel lines interleaved ---- */

/* Appends `text` as block `name` to the console at *w: "lab| " lines with "\r\n", a kernel
 * message after every 40th line. */
static void frame(char **w, const char *name, const char *text)
{
	const char *cursor = text, *line;
	size_t len;
	int i = 0;

	*w += sprintf(*w, "lab: begin %s\r\n", name);
	while (lp_next_line(&cursor, &line, &len)) {
		*w += sprintf(*w, "lab| %.*s\r\n", (int)len, line);
		if (++i % 40 == 0)
			*w += sprintf(*w, "[   %d.%06d] virtio_net virtio2 eth0: link up\r\n", i, i);
	}
	*w += sprintf(*w, "lab: end %s\r\n", name);
}

/* Block `name` of the console (the test fails on an error). */
static char *block_of(const char *console, const char *name)
{
	struct error err = { "" };
	char *b;

	if (lp_block(console, name, &b, &err))
		fail_msg("lp_block(%s): %s", name, err.msg);
	assert_null(strchr(b, '\r'));
	return b;
}

static void test_console_round_trip(void **state)
{
	char *fio = sample("fio-rw.json"), *iperf = sample("iperf3-tcp-reverse.json");
	char *irq = sample("proc-interrupts-6.18.txt");
	char *console = malloc(8 * (strlen(fio) + strlen(iperf) + strlen(irq)) + 4096), *w = console;
	char *b;
	struct lp_fio f;
	struct lp_iperf ip;
	struct lp_irq_table *t;
	struct error err = { "" };
	double secs;

	w += sprintf(w, "[    0.000000] Linux version 6.1.0-31-cloud-amd64\r\n");
	frame(&w, "dmesg", "[    0.000000] Linux version 6.1.0-31-cloud-amd64\n"
			   "[    0.734501] Run /init as init process\n");
	frame(&w, "fio-rw", fio);
	w += sprintf(w, "lab: mark begin iperf-rx\r\n");
	frame(&w, "iperf-rx", iperf);
	frame(&w, "irq-after-iperf-rx", irq);

	parse_ok(P_FIO, b = block_of(console, "fio-rw"), &f, sizeof(f));
	free(b);
	expect_fio_rw(&f);
	parse_ok(P_IPERF, b = block_of(console, "iperf-rx"), &ip, sizeof(ip));
	free(b);
	assert_true(ip.reverse);
	assert_near(ip.received_mbit_s, 24759.282309530716);
	t = parse_irqs(b = block_of(console, "irq-after-iperf-rx"));
	assert_int_equal(t->n, 35);
	free(t);
	free(b);
	assert_int_equal(lp_dmesg_time(b = block_of(console, "dmesg"), "Run /init", &secs, &err), 0);
	assert_near(secs, 0.734501);
	free(b);
	/* Straight off the console, "lab| " and all. */
	assert_int_equal(lp_dmesg_time(console, "Run /init", &secs, &err), 0);
	assert_near(secs, 0.734501);
	free(console);
	free(irq);
	free(iperf);
	free(fio);
}

/* ---- vsk's lines (the vsock workloads) ---- */

static void test_vsock_lines(void **state)
{
	struct lp_vsock v;
	struct error err = { "" };
	/* as tests/linux/vsk.c prints them, after other output, with \r\n line ends */
	assert_int_equal(lp_vsock_line("vsk: connected\r\nrr count=2000 size=64 min_us=81.5 "
				       "p50_us=120.0 p99_us=410.2 max_us=1900.0 mean_us=140.3\r\n",
				       &v, &err), 0);
	assert_true(v.rr);
	assert_near(v.count, 2000.0);
	assert_near(v.size, 64.0);
	assert_near(v.p50_us, 120.0);
	assert_near(v.p99_us, 410.2);
	assert_near(v.max_us, 1900.0);
	assert_near(v.mean_us, 140.3);
	assert_int_equal(lp_vsock_line("bulk bytes=16777216 secs=2.500 mib_s=6.40\n", &v, &err), 0);
	assert_false(v.rr);
	assert_near(v.bytes, 16777216.0);
	assert_near(v.secs, 2.5);
	assert_near(v.mib_s, 6.4);
	/* refusals name the problem */
	static const struct { const char *text, *msg; } bad[] = {
		{ "", "no 'rr ' or 'bulk ' line" },
		{ "rr count=10 size=64 min_us=1 p50_us=2 p99_us=3 max_us=4\n", "valid mean_us=" },
		{ "rr count=10 size=64 min_us=1 p50_us=x p99_us=3 max_us=4 mean_us=2\n", "valid p50_us=" },
		{ "rr count=10 size=64 min_us=1 p50_us=5 p99_us=3 max_us=4 mean_us=2\n", "out of order" },
		{ "rr count=0 size=64 min_us=1 p50_us=2 p99_us=3 max_us=4 mean_us=2\n", "no round trips" },
		{ "bulk bytes=0 secs=1 mib_s=0\n", "nothing moved" },
		{ "bulk bytes=5 secs=-1 mib_s=1\n", "valid secs=" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.msg[0] = 0;
		assert_int_equal(lp_vsock_line(bad[i].text, &v, &err), -EINVAL);
		if (!strstr(err.msg, bad[i].msg))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].text, err.msg, bad[i].msg);
	}
}

/* ---- garbled samples: random bytes replaced never crash, and fail with a message ---- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_garbled_samples(void **state)
{
	static const char *const files[] = { "fio-rw.json", "iperf3-tcp.json",
					     "proc-interrupts-6.18.txt" };
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	for (int which = 0; which < 4; which++) {
		char *s = which < 3 ? sample(files[which]) : NULL;
		char *base;
		size_t len;

		if (which == 3) {
			char *irq = sample(files[2]), *w;
			s = malloc(2 * strlen(irq) + 4096);
			w = s;
			frame(&w, "irq", irq);
			free(irq);
		}
		len = strlen(s);
		base = strdup(s);
		for (int round = 0; round < 300; round++) {
			struct error err = { "" };
			int nbytes = 1 + (int)(rnd(&seed) % 8), ret;

			memcpy(s, base, len + 1);
			for (int k = 0; k < nbytes; k++)
				s[rnd(&seed) % len] = (char)(1 + rnd(&seed) % 255);
			ret = parse_any((enum parser)which, s, &err);
			if (ret > 0 || (ret < 0 && !err.msg[0]))
				fail_msg("sample %d round %d: %d without a message", which, round, ret);
		}
		free(base);
		free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block_extracts_and_skips_kernel_lines),
		cmocka_unit_test(test_block_crlf_console),
		cmocka_unit_test(test_block_first_of_name_only),
		cmocka_unit_test(test_block_errors),
		cmocka_unit_test(test_dmesg_time),
		cmocka_unit_test(test_dmesg_errors),
		cmocka_unit_test(test_fio_rw_sample),
		cmocka_unit_test(test_fio_randread_sample),
		cmocka_unit_test(test_fio_skips_warnings),
		cmocka_unit_test(test_fio_errors),
		cmocka_unit_test(test_fio_truncated),
		cmocka_unit_test(test_iperf3_samples),
		cmocka_unit_test(test_iperf3_retransmits_and_udp),
		cmocka_unit_test(test_iperf3_errors),
		cmocka_unit_test(test_vsock_lines),
		cmocka_unit_test(test_irqs_linux61),
		cmocka_unit_test(test_irqs_host_sample),
		cmocka_unit_test(test_irqs_other_shapes),
		cmocka_unit_test(test_irqs_errors),
		cmocka_unit_test(test_irqs_truncated),
		cmocka_unit_test(test_irq_delta),
		cmocka_unit_test(test_console_round_trip),
		cmocka_unit_test(test_garbled_samples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
