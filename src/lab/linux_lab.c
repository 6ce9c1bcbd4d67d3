/* Linux lab driver: options, the host side (tap, iperf3 server, scratch disk), interleaved boots with progress, the report. */
#include "lab/linux_lab.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lab/lab_progress.h"
#include "lab/lab_spawn.h"
#include "util/parse.h"
static const char usage[] =
	"usage: msivm lab --guest linux [--kernel FILE] [--initrd FILE] [--configs LIST]\n"
	"                 [--runs N] [--io-runs N] [--vs qemu] [--out DIR] [--force] [options]\n"
	"Boots a stock Linux guest per interrupt configuration (interleaved) and replays the\n"
	"seeds' experiments: boot time (dmesg \"Run /init\"), fio on an empty virtio-blk disk,\n"
	"iperf3 over a tap, /proc/interrupts per vector, VMM CPU and KVM exits per I/O; and\n"
	"vsock (round trips, p50/p99, and bulk throughput to the host's services).\n"
	"  --kernel FILE, --initrd FILE  the guest (default: linux/l2/vmlinuz and\n"
	"                      linux/l2/initramfs.cpio.gz next to msivm, as tests/linux/build.sh l2\n"
	"                      builds them; the initramfs must hold /lab-init)\n"
	"  --configs LIST      msix,msix-shared,intx,nomsi,msi,vhost,msix-nocoalesce (default\n"
	"                      msix,msix-shared,intx,nomsi; vhost: MSI-X with the NIC on vhost-net\n"
	"                      and vsock on vhost-vsock (the others: msivm's vsock backend=unix),\n"
	"                      msivm and QEMU alike; msix-nocoalesce: msivm's disk with coalesce=off)\n"
	"                      The passthrough experiment (needs --vfio): pt-msix (MSI-X by irqfd),\n"
	"                      pt-relay (each interrupt relayed by the VMM's thread: msivm relay=on,\n"
	"                      QEMU x-no-kvm-msix=on), pt-intx (guest pci=nomsi), pt-dedicated\n"
	"                      (msivm --dedicated, vCPU i on host CPU i+1, I/O on CPU 0), pt-virtio\n"
	"                      (the same workloads on the VMM's virtio-blk); fio at depth 1 and 32\n"
	"  --vfio PATH|auto    the device of the pt-* configurations: /sys/bus/pci/devices/BDF,\n"
	"                      bound to vfio-pci (auto: the one device bound to vfio-pci)\n"
	"  --runs N            boots per configuration, 1-10 (default 3)\n"
	"  --io-runs N         of which the first N also run the workloads (default 1; 0: boot only)\n"
	"  --vs qemu           the same guest, disk and tap under QEMU q35 in the same session\n"
	"  --out DIR           report directory (default lab-linux-out); --force replaces a report\n"
	"  --fio-secs N        each fio job's runtime in the guest (default 10)\n"
	"  --iperf-secs N      each iperf3 direction (default 5)\n"
	"  --cpus N, --mem MIB the guest (default 2 vCPUs, 2048 MiB: the seeds' guest)\n"
	"  --tap NAME          tap device the lab creates (default labtap0; 10.0.2.2/24 on the host,\n"
	"                      10.0.2.15 in the guest), --port N the iperf3 server (default 5201)\n"
	"  --cpuid-hide LIST   hide CPUID features from the guest (both VMMs)\n"
	"  --qemu PATH         QEMU binary (default qemu-system-x86_64)\n"
	"  --timeout N         seconds per boot (default: from the workload lengths)\n"
	"  --no-vhost-vsock    no vsock workloads where they need the kernel's vhost-vsock (QEMU,\n"
	"                      msivm's vhost configuration): in the nested rig a two-vCPU L1 running\n"
	"                      QEMU's vhost-vsock-pci locked up or crashed in 3 of 4 lab runs\n"
	"  --merge FILE...     one report from several sessions' report.json (see --merge --help)\n"
	"Needs root (the tap), iperf3 on the host, and a /dev/kvm that runs stock kernels;\n"
	"on PVM hosts run it inside the nested rig: scripts/lab-linux.sh.\n"
	"Exit status: 0 every run succeeded, 1 some run failed, 125 the lab could not start,\n"
	"128+N stopped by signal N (a partial report is written).\n";

static int usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "msivm lab --guest linux: %s '%s' (see msivm lab --guest linux --help)\n", what, arg);
	return EXIT_USAGE;
}

static int parse_configs(const char *s, unsigned *mask)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", s);
	*mask = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned i;
		for (i = 0; i < ll_nconfigs && strcmp(ll_configs[i].name, t); i++)
			;
		if (i == ll_nconfigs)
			return -EINVAL;
		*mask |= 1u << i;
	}
	return *mask ? 0 : -EINVAL;
}

static int uint_opt(const char *arg, uint64_t lo, uint64_t hi, unsigned *out, const char *what)
{
	uint64_t v;
	if (parse_uint(arg, lo, hi, &v))
		return usage_error(what, arg);
	*out = (unsigned)v;
	return -1;
}

/* Returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct ll_options *o)
{
	static const struct option opts[] = {
		{ "guest", required_argument, NULL, 'g' }, { "kernel", required_argument, NULL, 'K' },
		{ "initrd", required_argument, NULL, 'I' }, { "configs", required_argument, NULL, 'c' },
		{ "runs", required_argument, NULL, 'r' }, { "io-runs", required_argument, NULL, 'w' },
		{ "vs", required_argument, NULL, 'q' }, { "out", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' }, { "fio-secs", required_argument, NULL, 'F' },
		{ "iperf-secs", required_argument, NULL, 'P' }, { "cpus", required_argument, NULL, 'C' },
		{ "mem", required_argument, NULL, 'M' }, { "tap", required_argument, NULL, 't' },
		{ "port", required_argument, NULL, 'p' }, { "cpuid-hide", required_argument, NULL, 'x' },
		{ "qemu", required_argument, NULL, 'Q' }, { "timeout", required_argument, NULL, 'T' },
		{ "no-vhost-vsock", no_argument, NULL, 'V' }, { "help", no_argument, NULL, 'h' },
		{ "vfio", required_argument, NULL, 'v' },
		{ 0, 0, 0, 0 },
	};
	int c, st = -1;
	opterr = 0;
	optind = 1;
	while (st < 0 && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 'g':
			if (strcmp(optarg, "linux"))
				return usage_error("--guest here takes 'linux', not", optarg);
			break;
		case 'K': o->kernel = optarg; break;
		case 'I': o->initrd = optarg; break;
		case 'c':
			if (parse_configs(optarg, &o->configs))
				return usage_error("bad configuration list (msix,msix-shared,intx,nomsi,msi,vhost,msix-nocoalesce,pt-msix,pt-relay,pt-intx,pt-dedicated,pt-virtio)", optarg);
			break;
		case 'r': st = uint_opt(optarg, 1, LL_MAX_RUNS, &o->runs, "bad --runs (1-10)"); break;
		case 'w': st = uint_opt(optarg, 0, LL_MAX_RUNS, &o->io_runs, "bad --io-runs (0-10)"); break;
		case 'q':
			if (strcmp(optarg, "qemu"))
				return usage_error("--vs takes 'qemu', not", optarg);
			o->vs_qemu = true;
			break;
		case 'o': o->out_dir = optarg; break;
		case 'f': o->force = true; break;
		case 'F': st = uint_opt(optarg, 1, 3600, &o->fio_s, "bad --fio-secs (1-3600)"); break;
		case 'P': st = uint_opt(optarg, 1, 3600, &o->iperf_s, "bad --iperf-secs (1-3600)"); break;
		case 'C': st = uint_opt(optarg, 1, 64, &o->cpus, "bad --cpus (1-64)"); break;
		case 'M': st = uint_opt(optarg, 128, 1 << 20, &o->mem_mib, "bad --mem in MiB (128-1048576)"); break;
		case 't':
			if (!*optarg || strlen(optarg) > 15 || strpbrk(optarg, "/ ,"))
				return usage_error("bad tap name (1-15 characters, no '/', ',' or blank)", optarg);
			o->tap = optarg;
			break;
		case 'p': st = uint_opt(optarg, 1, 65535, &o->port, "bad --port"); break;
		case 'x': o->cpuid_hide = optarg; break;
		case 'Q': o->qemu = optarg; break;
		case 'T': st = uint_opt(optarg, 10, 86400, &o->timeout_s, "bad --timeout (10-86400 s)"); break;
		case 'V': o->no_vhost_vsock = true; break;
		case 'v': o->vfio = optarg; break;
		case 'h': fputs(usage, stdout); return 0;
		case ':': return usage_error("option needs a value:", argv[optind - 1]);
		default: return usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (st >= 0)
		return st;
	if (optind < argc)
		return usage_error("unexpected argument", argv[optind]);
	if (o->io_runs > o->runs)
		o->io_runs = o->runs;
	for (unsigned i = 0; i < ll_nconfigs; i++)
		if ((o->configs & (1u << i)) && ll_config_needs_vfio(&ll_configs[i]) && !o->vfio)
			return usage_error("configuration needs --vfio /sys/bus/pci/devices/BDF (a device "
					   "bound to vfio-pci) or --vfio auto:", ll_configs[i].name);
	return -1;
}

/* Default guest files: linux/l2/ next to msivm (build/msivm -> build/linux/l2/). */
static void default_guest(struct ll_options *o, char *kbuf, char *ibuf, size_t len)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", o->msivm);
	char *d = dirname(dir);
	if (!o->kernel) {
		snprintf(kbuf, len, "%s/linux/l2/vmlinuz", d);
		o->kernel = kbuf;
	}
	if (!o->initrd) {
		snprintf(ibuf, len, "%s/linux/l2/initramfs.cpio.gz", d);
		o->initrd = ibuf;
	}
}

static int check_file(const char *what, const char *path)
{
	struct stat st;
	const char *why = NULL;
	if (stat(path, &st))
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (access(path, R_OK))
		why = strerror(errno);
	if (!why)
		return 0;
	fprintf(stderr, "msivm lab: cannot read the guest %s '%s': %s (build it with "
			"tests/linux/build.sh l2, or pass --%s)\n", what, path, why, what);
	return -1;
}

/* --- host side: helpers run to completion, the iperf3 server for the session */

/* In a forked child: standard streams on /dev/null, no signal blocked (the lab blocks some). */
static void child_quiet(void)
{
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
	}
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Runs a command quietly; its exit status, or -1. */
static int run_quiet(char *const argv[])
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		child_quiet();
		execvp(argv[0], argv);
		_exit(127);
	}
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static bool tap_exists(const char *tap)
{
	char path[64];
	snprintf(path, sizeof(path), "/sys/class/net/%s", tap);
	return !access(path, F_OK);
}

static void tap_remove(const struct ll_options *o)
{
	char *del[] = { "ip", "link", "del", (char *)o->tap, NULL };
	run_quiet(del);
}

/* The tap with the host's address, up; refuses a tap that exists already. */
static int tap_create(const struct ll_options *o)
{
	if (tap_exists(o->tap)) {
		fprintf(stderr, "msivm lab: a network device '%s' exists already (an earlier lab?): remove "
				"it (ip link del %s) or choose another --tap\n", o->tap, o->tap);
		return -1;
	}
	char addr[64];
	snprintf(addr, sizeof(addr), "%s/24", o->host_ip);
	char *add[] = { "ip", "tuntap", "add", "dev", (char *)o->tap, "mode", "tap", NULL };
	char *ip[] = { "ip", "addr", "add", addr, "dev", (char *)o->tap, NULL };
	char *up[] = { "ip", "link", "set", (char *)o->tap, "up", NULL };
	if (run_quiet(add)) {
		fprintf(stderr, "msivm lab: cannot create the tap '%s' with 'ip tuntap add' (needs root "
				"and iproute2)\n", o->tap);
		return -1;
	}
	if (run_quiet(ip) || run_quiet(up)) {
		fprintf(stderr, "msivm lab: cannot give the tap '%s' the address %s\n", o->tap, addr);
		tap_remove(o);
		return -1;
	}
	return 0;
}

/* iperf3 -s on the host end of the tap, for the whole session; its pid or -1. */
static pid_t iperf_server_start(const struct ll_options *o)
{
	char port[16];
	snprintf(port, sizeof(port), "%u", o->port);
	pid_t parent = getpid(), pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		child_quiet();
		execlp("iperf3", "iperf3", "-s", "-p", port, "-B", o->host_ip, (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	/* An iperf3 that cannot run (missing, port taken) ends at once. */
	struct timespec d = { 0, 300 * 1000 * 1000 };
	nanosleep(&d, NULL);
	int ws;
	if (waitpid(pid, &ws, WNOHANG) == pid) {
		fprintf(stderr, "msivm lab: the iperf3 server did not start (exit %d): is iperf3 installed "
				"(apt-get install iperf3) and port %u free?\n",
			WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, o->port);
		return -1;
	}
	return pid;
}

static void iperf_server_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* --- the run matrix */

/* Boots every planned cell once per run, interleaved (run 1 of every cell, then run 2, ...). */
static void run_matrix(struct ll_options *o, struct ll_cell *cells, unsigned ncells)
{
	struct lab_progress p;
	lab_progress_init(&p, 2);
	for (unsigned r = 0; r < o->runs && !o->interrupted; r++)
		for (unsigned i = 0; i < ncells && !o->interrupted; i++) {
			struct ll_cell *c = &cells[i];
			if (c->skipped)
				continue;
			if ((o->interrupted = lab_pending_signal(o->sigfd)))
				break;
			bool work = r < o->io_runs;
			char what[160];
			snprintf(what, sizeof(what), "%s %s run %u/%u%s",
				 c->vmm == LAB_QEMU ? "qemu" : "msivm", c->cfg->name, r + 1, o->runs,
				 work ? " +workloads" : "");
			lab_progress_show(&p, o->runs_done, o->runs_planned, what);
			struct ll_run *run = &c->runs[c->nruns];
			int signo = 0;
			uint64_t t = lab_now_ns();
			if (ll_run_once(o, c->cfg, c->vmm, work, run, &signo) == -EINTR) {
				ll_run_free(run);
				o->interrupted = signo;
				break;
			}
			c->nruns++;
			o->runs_done++;
			lab_progress_ran(&p, (double)(lab_now_ns() - t) / 1e9);
			if (run->failed) {
				o->runs_failed++;
				lab_progress_clear(&p);
				fprintf(stderr, "run %u/%u %s %s failed: %s\n", o->runs_done, o->runs_planned,
					c->vmm == LAB_QEMU ? "qemu" : "msivm", c->cfg->name, run->error);
			}
		}
	lab_progress_clear(&p);
}
int ll_main(int argc, char **argv)
{
	static char self[4096], kbuf[4096], ibuf[4096];
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--merge"))
			return ll_merge_main(argc, argv);
	if (lab_vmm_path(self, sizeof(self)))
		return EXIT_USAGE;
	struct ll_options o = {
		.msivm = self, .out_dir = "lab-linux-out", .qemu = "qemu-system-x86_64", .runs = 3,
		.io_runs = 1, .fio_s = 10, .iperf_s = 5, .cpus = 2, .mem_mib = 2048, .disk_mib = 256,
		.configs = 0xf, .tap = "labtap0", .host_ip = "10.0.2.2", .guest_ip = "10.0.2.15",
		.port = 5201, .sigfd = -1, .argc = argc, .argv = argv,
	};
	int st = parse_options(argc, argv, &o);
	if (st >= 0)
		return st;
	if ((o.kernel && check_file("kernel", o.kernel)) || (o.initrd && check_file("initrd", o.initrd)))
		return EXIT_USAGE;
	struct kvm_host kh;
	kvm_host_probe(NULL, &kh);
	if (kh.kind != KVM_HOST_HW && !kh.denied) { /* a stock kernel needs hardware KVM: nested has one */
		if (o.kernel || o.initrd) {
			fprintf(stderr, "msivm lab: %s; the nested host that runs the Linux lab here boots "
					"its own guest (tests/linux/build.sh): run without --kernel and --initrd\n",
				kh.why);
			return EXIT_USAGE;
		}
		return lab_nested_exec(self, argc, argv, &kh, true, NULL);
	}
	default_guest(&o, kbuf, ibuf, sizeof(kbuf));
	if (o.vfio && ll_vfio_resolve(&o))
		return EXIT_USAGE;
	if (check_file("kernel", o.kernel) || check_file("initrd", o.initrd))
		return EXIT_USAGE;
	if (geteuid() != 0) {
		fprintf(stderr, "msivm lab: --guest linux needs root (it creates the tap '%s')\n", o.tap);
		return EXIT_USAGE;
	}
	lab_host_probe(&o.host, NULL);
	if (lab_prepare_out_dir(o.out_dir, o.force))
		return EXIT_USAGE;
	time_t now = time(NULL);
	struct tm tm;
	strftime(o.date, sizeof(o.date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	struct ll_cell *cells = calloc(2 * ll_nconfigs, sizeof(*cells));
	if (!cells)
		return EXIT_USAGE;
	unsigned ncells = ll_plan(&o, o.configs, cells);
	o.sigfd = lab_signals_setup();
	int status = 0;
	pid_t server = -1;
	bool tap = false;
	if (lab_make_scratch(o.stats, sizeof(o.stats), "stats", ".json") ||
	    lab_make_scratch(o.disk, sizeof(o.disk), "disk", ".img") || tap_create(&o)) {
		status = EXIT_USAGE;
		goto out;
	}
	tap = true;
	/* vsock: msivm's unix socket (short: PATH_5100 must fit a sockaddr_un); without
	 * /dev/vhost-vsock, the runs that would need it have no vsock workloads */
	snprintf(o.vsock_path, sizeof(o.vsock_path), "/tmp/msivm-lab-%d.vsock", (int)getpid());
	o.vhost_vsock = !o.no_vhost_vsock && !access("/dev/vhost-vsock", R_OK | W_OK);
	if (o.io_runs && o.no_vhost_vsock)
		fprintf(stderr, "msivm lab: --no-vhost-vsock: the vsock workloads run only where msivm's "
				"backend=unix serves them\n");
	else if (o.io_runs && !o.vhost_vsock)
		fprintf(stderr, "msivm lab: no /dev/vhost-vsock here ('modprobe vhost_vsock'): the "
				"vsock workloads run only where msivm's backend=unix serves them\n");
	if (o.io_runs && (server = iperf_server_start(&o)) < 0) {
		status = EXIT_USAGE;
		goto out;
	}
	fprintf(stderr, "msivm lab: Linux guest %s + %s, %u boots per configuration (the first %u with "
			"fio %u s x5 (rw, randread at depth 1, 4, 32, 128), iperf3 %u s x2 and vsock round trips and bulk), %u runs planned\n",
		o.kernel, o.initrd, o.runs, o.io_runs, o.fio_s, o.iperf_s, o.runs_planned);
	run_matrix(&o, cells, ncells);
	if (o.interrupted)
		fprintf(stderr, "msivm lab: interrupted (%s) after %u/%u runs; writing a partial report\n",
			strsignal(o.interrupted), o.runs_done, o.runs_planned);
	struct error err = { "" };
	if (ll_report(&o, cells, ncells, &err)) {
		fprintf(stderr, "msivm lab: %s\n", err.msg);
		status = EXIT_USAGE;
	}
	if (o.runs_failed)
		fprintf(stderr, "msivm lab: %u of %u runs failed (consoles and errors in %s/report.json)\n",
			o.runs_failed, o.runs_done, o.out_dir);
	if (o.interrupted)
		status = 128 + o.interrupted;
	else if (!status && o.runs_failed)
		status = 1;
out:
	iperf_server_stop(server);
	if (tap)
		tap_remove(&o);
	if (o.disk[0])
		unlink(o.disk);
	if (o.stats[0])
		unlink(o.stats);
	if (o.sigfd >= 0)
		close(o.sigfd);
	for (unsigned i = 0; i < ncells; i++)
		for (unsigned r = 0; r < cells[i].nruns; r++)
			ll_run_free(&cells[i].runs[r]);
	free(cells);
	return status;
}
