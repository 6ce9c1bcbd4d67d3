/* Lab driver: options, the run matrix (experiment x VMM x mode x run) with progress, then the report. */
#include "lab/lab.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/parse.h"
#include "virtio/virtio_pci.h"

#define EXIT_USAGE 125

static const char lab_usage[] =
	"usage: msivm lab [--modes LIST] [--runs N] [--experiments LIST] [--out DIR] [--vs qemu]\n"
	"                 [--probe FILE]\n"
	"  --modes LIST        interrupt modes, comma-separated (default msix,msix-shared,msi,intx)\n"
	"  --runs N            runs per configuration, 1-32 (default 3)\n"
	"  --experiments LIST  boot,rng,blk-randread,blk-seqwrite,net-ping,net-tx,net-rx,floor,\n"
	"                      lat-irqfd,lat-irqfd-pin,\n"
	"                      lat-irqfd-rt,lat-irqfd-ded, the same for lat-sigmsi and lat-intx\n"
	"                      (default: all)\n"
	"  --out DIR           report directory (default lab-out)\n"
	"  --vs qemu           run the same guest and devices under QEMU too\n"
	"  --probe FILE        probe guest (default: guest/probe.elf next to msivm)\n";

static int lab_usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "msivm lab: %s '%s' (see msivm lab --help)\n", what, arg);
	return EXIT_USAGE;
}

static int parse_modes(const char *s, unsigned *modes)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	*modes = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		enum irq_mode m;
		if (irq_mode_parse(t, &m))
			return -EINVAL;
		*modes |= 1u << m;
	}
	return *modes ? 0 : -EINVAL;
}

static int parse_experiments(const char *s, struct lab_options *o)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	o->nexps = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned i;
		for (i = 0; i < lab_nexperiments && strcmp(lab_experiments[i].name, t); i++)
			;
		if (i == lab_nexperiments || o->nexps == LAB_MAX_EXPS)
			return -EINVAL;
		o->exps[o->nexps++] = &lab_experiments[i];
	}
	return o->nexps ? 0 : -EINVAL;
}

static int parse_options(int argc, char **argv, struct lab_options *o, char *probe_buf,
			 size_t probe_len)
{
	static const struct option opts[] = {
		{ "modes", required_argument, NULL, 'm' }, { "runs", required_argument, NULL, 'r' },
		{ "experiments", required_argument, NULL, 'e' }, { "out", required_argument, NULL, 'o' },
		{ "vs", required_argument, NULL, 'q' }, { "probe", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' }, { 0, 0, 0, 0 },
	};
	uint64_t v;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (parse_modes(optarg, &o->modes))
				return lab_usage_error("bad mode list", optarg);
			break;
		case 'r':
			if (parse_uint(optarg, 1, LAB_MAX_RUNS, &v))
				return lab_usage_error("bad --runs (1-32)", optarg);
			o->runs = (unsigned)v;
			break;
		case 'e':
			if (parse_experiments(optarg, o))
				return lab_usage_error("unknown experiment in", optarg);
			break;
		case 'o': o->out_dir = optarg; break;
		case 'p': o->probe = optarg; break;
		case 'q':
			if (strcmp(optarg, "qemu"))
				return lab_usage_error("--vs takes 'qemu', not", optarg);
			o->vs_qemu = true;
			break;
		case 'h': fputs(lab_usage, stdout); return 0;
		case ':': return lab_usage_error("option needs a value:", argv[optind - 1]);
		default: return lab_usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return lab_usage_error("unexpected argument", argv[optind]);
	if (!o->probe) {
		char *dir = dirname(probe_buf); /* probe_buf holds the msivm path */
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s/guest/probe.elf", dir);
		snprintf(probe_buf, probe_len, "%s", tmp);
		o->probe = probe_buf;
	}
	if (access(o->probe, R_OK))
		return lab_usage_error("cannot read the probe guest", o->probe);
	return -1;
}

/* A sparse 64 MiB scratch image for the disk experiments. */
static int make_disk(struct lab_options *o)
{
	snprintf(o->disk, sizeof(o->disk), "%s/scratch-disk.img", o->out_dir);
	int fd = open(o->disk, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 64 << 20)) {
		fprintf(stderr, "msivm lab: cannot create '%s': %s\n", o->disk, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

static void progress(unsigned done, unsigned total, const char *exp, const char *vmm,
		     const char *mode, unsigned run)
{
	fprintf(stderr, "\r[%3u/%3u] %-5s %-6s %-12s run %u   ", done, total, exp, vmm, mode, run);
	fflush(stderr);
}

int lab_main(int argc, char **argv)
{
	static char self[4096], probe_path[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "msivm lab: cannot find its own binary\n");
		return EXIT_USAGE;
	}
	self[n] = 0;
	snprintf(probe_path, sizeof(probe_path), "%s", self);
	struct lab_options o = { .msivm = self, .out_dir = "lab-out", .runs = 3, .modes = 0xf };
	for (unsigned i = 0; i < lab_nexperiments && o.nexps < LAB_MAX_EXPS; i++)
		o.exps[o.nexps++] = &lab_experiments[i];
	int st = parse_options(argc, argv, &o, probe_path, sizeof(probe_path));
	if (st >= 0)
		return st;
	if (mkdir(o.out_dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "msivm lab: cannot create '%s': %s\n", o.out_dir, strerror(errno));
		return EXIT_USAGE;
	}
	o.tsc_hz = lab_tsc_hz();
	o.host_cpus = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
	for (unsigned e = 0; e < o.nexps; e++)
		if (o.exps[e]->dev == LAB_DEV_DISK && !o.disk[0] && make_disk(&o))
			return EXIT_USAGE;

	struct lab_cell (*cells)[2][LAB_MAX_MODES] = calloc(o.nexps, sizeof(*cells));
	if (!cells)
		return EXIT_USAGE;
	unsigned total = 0, done = 0;
	int status = 0;
	const char *why;
	for (unsigned e = 0; e < o.nexps; e++)
		for (unsigned vmm = 0; vmm < 2; vmm++)
			for (unsigned m = 0; m < LAB_MAX_MODES; m++)
				if (lab_cell_wanted(&o, o.exps[e], vmm, m, &why) && !why)
					total += o.runs;
	for (unsigned e = 0; e < o.nexps; e++)
		for (unsigned vmm = 0; vmm < 2; vmm++)
			for (unsigned m = 0; m < LAB_MAX_MODES; m++) {
				if (!lab_cell_wanted(&o, o.exps[e], vmm, m, &why))
					continue;
				struct lab_cell *c = &cells[e][vmm][m];
				if (why) {
					c->skipped = true;
					snprintf(c->skip_reason, sizeof(c->skip_reason), "%s", why);
					continue;
				}
				for (unsigned r = 0; r < o.runs && !c->skipped; r++) {
					progress(++done, total, o.exps[e]->name, vmm ? "qemu" : "msivm",
						 irq_mode_name((enum irq_mode)m), r + 1);
					struct error err = { "" };
					int ret = lab_run_once(&o, o.exps[e], vmm ? LAB_QEMU : LAB_MSIVM, m,
							       &c->runs[c->nruns], &err);
					if (ret) {
						c->skipped = true;
						snprintf(c->skip_reason, sizeof(c->skip_reason), "%s", err.msg);
						total -= o.runs - r - 1;
						break;
					}
					c->nruns++;
				}
			}
	fprintf(stderr, "\r%*s\r", 60, "");
	struct error err = { "" };
	if (lab_report(&o, cells, &err)) {
		fprintf(stderr, "msivm lab: %s\n", err.msg);
		status = EXIT_USAGE;
	}
	for (unsigned e = 0; e < o.nexps; e++)
		for (unsigned vmm = 0; vmm < 2; vmm++)
			for (unsigned m = 0; m < LAB_MAX_MODES; m++)
				for (unsigned r = 0; r < cells[e][vmm][m].nruns; r++) {
					free(cells[e][vmm][m].runs[r].console);
					free(cells[e][vmm][m].runs[r].raw_json);
				}
	free(cells);
	return status;
}
