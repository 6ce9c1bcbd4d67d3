/* main: command line -> VM config -> build, boot and run the VM; the only place that exits. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "api/api.h"
#include "arch/x86/boot.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/layout.h"
#include "lab/lab.h"
#include "util/log.h"
#include "util/parse.h"
#include "vmm/jail.h"
#include "vmm/seccomp.h"
#include "vmm/vm.h"
#include "vmm/vm_stats.h"

/* Exit statuses of msivm itself; a guest's debug-exit byte V is returned as V. */
#define EXIT_MSIVM_ERROR 125 /* bad usage or host problem: nothing ran */
#define EXIT_GUEST_RESET 123 /* the guest reset (rebooted) and --no-reboot was given */
#define EXIT_GUEST_CRASH 126 /* guest stopped without debug-exit (KVM or emulation failure) */

static const char usage_text[] =
	"usage: msivm run --kernel FILE [options]\n"
	"       msivm lab [options]   (the interrupt-mode experiments; msivm lab --help)\n"
	"       msivm remote --api-socket PATH COMMAND   (drive a running msivm; --help)\n"
	"       msivm --help | --version\n"
	"\n"
	"msivm run: boot a kernel (a PVH ELF or a Linux bzImage) in a KVM microVM.\n"
	"  --kernel FILE      kernel image to boot (required): a PVH ELF or a Linux bzImage\n"
	"  --initrd FILE      initial ramdisk\n"
	"  --cpuid-hide LIST  hide CPUID features, e.g. cmpxchg16b,xsave (see the manual)\n"
	"  --cmdline STR      kernel command line\n"
	"  --mem SIZE         guest RAM, e.g. 256M or 1G (default 256M)\n"
	"  --cpus N           number of vCPUs, 1-255 (default 1)\n"
	"  --serial WHERE     COM1: FILE or file=FILE (output to a file), tty (standard\n"
	"                     output, and standard input as the guest's keyboard: raw\n"
	"                     mode on a terminal, Ctrl-a x quits with status 130), off\n"
	"  --pit              create the in-kernel i8254 PIT\n"
	"  --rng OPTS         add a virtio-rng device; OPTS: irq=msix|msix-shared|msi|intx,\n"
	"                     vectors=N (MSI-X table size; 0: no MSI-X),\n"
	"                     irqpath=irqfd|signal-msi (how MSI/MSI-X reach KVM),\n"
	"                     latency=US (complete one buffer every US with a TSC stamp),\n"
	"                     bps=SIZE, ops=N (rate limit: bytes and requests per second,\n"
	"                     token buckets with one second of burst), or \"\"\n"
	"  --disk OPTS        add a virtio-blk disk; OPTS: path=FILE (raw image, a multiple of\n"
	"                     512 bytes) and optionally ro, queues=N (1-8), engine=uring|sync\n"
	"                     (default: uring if available), irq=MODE, vectors=N, bps=SIZE,\n"
	"                     ops=N as for --rng\n"
	"  --console OPTS     add a virtio-console (one port); OPTS: out=FILE (guest output;\n"
	"                     default: standard output), max=SIZE (output cap, default 64M,\n"
	"                     0: none; a file counts from its size), in=FILE (input for the\n"
	"                     guest, read until its end; default: none), irq=MODE, vectors=N\n"
	"                     as for --rng, or \"\"\n"
	"  --net OPTS         add a virtio-net NIC; OPTS: backend=tap|peer|socket and optionally\n"
	"                     mac=52:54:00:12:34:56 (default 52:54:00:12:34:<n>), queues=N (queue\n"
	"                     pairs, 1-7), mtu=N (68-65535, default 1500), irq=MODE, vectors=N,\n"
	"                     bps=SIZE, ops=N (each direction) as for --rng. tap: ifname=NAME\n"
	"                     (an existing tap, or created: needs CAP_NET_ADMIN). peer: built\n"
	"                     in, no host network; answers ARP and ping for 10.0.2.2 and\n"
	"                     echoes UDP port 7; peer=responder|sink|source,\n"
	"                     rate=N (frames/s) and size=S (bytes, 60-1514) for source. socket:\n"
	"                     path=P joins two msivm started with the same P (unix datagrams;\n"
	"                     the first binds P.0 and sends to P.1, the second the reverse)\n"
	"  --kvm-device PATH  KVM device node (default /dev/kvm)\n"
	"  --cpu-pin SPEC     pin threads to host CPUs, e.g. vcpu0=1,io=0\n"
	"  --rt PRIO          run vCPU and I/O threads SCHED_FIFO at PRIO (1-99)\n"
	"  --dedicated        disable HLT and PAUSE exits (needs every vCPU pinned to its own CPU)\n"
	"  --halt-poll NS     KVM halt polling time for this VM, in nanoseconds\n"
	"  --seccomp MODE     system call filters per thread: on (default; a forbidden\n"
	"                     call stops msivm with status 159 and names the call), log\n"
	"                     (allow and let the kernel log it), off\n"
	"  --user USER[:GROUP] once the VM is built, run as USER (name or id) with no\n"
	"                     supplementary groups and no way back to root\n"
	"  --chroot DIR       once the VM is built, enter a new mount namespace whose root\n"
	"                     is DIR (as Firecracker's jailer); with --user or --chroot a\n"
	"                     guest reset ends msivm (123): it could not reopen its files\n"
	"  --no-reboot        end msivm (status 123) when the guest resets, instead of\n"
	"                     rebooting it in place\n"
	"  --shutdown-timeout S  on SIGINT/SIGTERM, press the guest's ACPI power button\n"
	"                     and stop it after S seconds if it has not powered off\n"
	"                     (default 10; 0: at once); a second signal, or a guest that\n"
	"                     never enabled its button, stops it at once\n"
	"  --api-socket PATH  serve the API (HTTP/1.1 + JSON) on a new unix socket PATH\n"
	"                     (mode 0600): GET /vm, GET /metrics, PUT /vm/pause, resume,\n"
	"                     power-button, shutdown (exit 0), reboot, resize-disks;\n"
	"                     its client: msivm remote --api-socket PATH COMMAND\n"
	"  --stats            print interrupts per device/vector and VM exits at the end\n"
	"                     (of the last boot, after guest reboots)\n"
	"  --stats-json FILE  write the same figures as JSON (\"-\": standard output)\n"
	"  --log-file FILE    append log lines to FILE instead of standard error\n"
	"  --log-level LEVEL  error, warn (default), info or debug; each line carries the\n"
	"                     seconds since start and the thread's name\n"
	"  -v, --verbose      more log lines (repeat for debug)\n"
	"  -q, --quiet        errors only\n"
	"\n"
	"Exit status: 0 when the guest powers off (ACPI S5), the byte the guest wrote\n"
	"to port 0xf4 (debug-exit; QEMU's isa-debug-exit would give (byte << 1) | 1),\n"
	"123 if the guest reset under --no-reboot, 125 if msivm could not run the\n"
	"guest, 126 if the guest crashed, 128+N after signal N (159: a seccomp\n"
	"filter stopped msivm). A guest reset (ACPI\n"
	"reset register, i8042 reset pulse, triple fault) reboots the VM in place:\n"
	"fresh vCPUs and devices, kernel and initrd loaded again, disks kept.\n";

struct run_opts {
	const char *kernel;
	const char *cmdline;
	const char *initrd;
	const char *serial;
	const char *stats_json;
	const char *log_file;
	const char *api_socket;
	bool stats;
	bool no_reboot;
	struct jail_config jail;
	struct vm_config vm;
};

/* Prints "msivm: <msg>" and a hint to stderr; returns the usage exit code. */
static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "msivm: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see msivm --help)\n");
	return EXIT_MSIVM_ERROR;
}

enum { OPT_KERNEL = 256, OPT_CMDLINE, OPT_MEM, OPT_CPUS, OPT_SERIAL, OPT_PIT, OPT_KVM, OPT_RNG, OPT_DISK, OPT_STATS, OPT_STATS_JSON,
       OPT_CPU_PIN, OPT_RT, OPT_DEDICATED, OPT_HALT_POLL, OPT_INITRD, OPT_CPUID_HIDE, OPT_CONSOLE, OPT_NET,
       OPT_NO_REBOOT, OPT_SECCOMP, OPT_USER, OPT_CHROOT, OPT_LOG_FILE, OPT_LOG_LEVEL, OPT_SHUTDOWN_TIMEOUT, OPT_API_SOCKET };

static const struct option run_options[] = {
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "cmdline", required_argument, NULL, OPT_CMDLINE },
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "serial", required_argument, NULL, OPT_SERIAL },
	{ "pit", no_argument, NULL, OPT_PIT },
	{ "kvm-device", required_argument, NULL, OPT_KVM },
	{ "rng", required_argument, NULL, OPT_RNG },
	{ "disk", required_argument, NULL, OPT_DISK },
	{ "net", required_argument, NULL, OPT_NET },
	{ "console", required_argument, NULL, OPT_CONSOLE },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "no-reboot", no_argument, NULL, OPT_NO_REBOOT },
	{ "shutdown-timeout", required_argument, NULL, OPT_SHUTDOWN_TIMEOUT },
	{ "api-socket", required_argument, NULL, OPT_API_SOCKET },
	{ "seccomp", required_argument, NULL, OPT_SECCOMP },
	{ "user", required_argument, NULL, OPT_USER },
	{ "log-file", required_argument, NULL, OPT_LOG_FILE },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "chroot", required_argument, NULL, OPT_CHROOT },
	{ "stats-json", required_argument, NULL, OPT_STATS_JSON },
	{ "cpu-pin", required_argument, NULL, OPT_CPU_PIN },
	{ "initrd", required_argument, NULL, OPT_INITRD },
	{ "cpuid-hide", required_argument, NULL, OPT_CPUID_HIDE },
	{ "rt", required_argument, NULL, OPT_RT },
	{ "dedicated", no_argument, NULL, OPT_DEDICATED },
	{ "halt-poll", required_argument, NULL, OPT_HALT_POLL },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ 0, 0, 0, 0 },
};

/* Parses a device's interrupt options "irq=MODE,vectors=N" (either may be
 * missing) into *irq. Returns -1 on success or an exit status. */
static int parse_irq_opts(const char *opt, const char *arg, struct virtio_pci_config *irq)
{
	char buf[256];
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return usage_error("--%s value is too long", opt);
	*irq = (struct virtio_pci_config){ .mode = IRQ_MODE_MSIX, .vectors = -1 };
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (!strncmp(tok, "irq=", 4)) {
			if (irq_mode_parse(tok + 4, &irq->mode))
				return usage_error("bad irq mode '%s': use msix, msix-shared, msi or intx",
						   tok + 4);
		} else if (!strncmp(tok, "vectors=", 8)) {
			if (parse_uint(tok + 8, 0, MSIX_MAX_VECTORS, &v))
				return usage_error("bad vectors '%s': use 0 to 64", tok + 8);
			irq->vectors = (int)v;
		} else if (!strncmp(tok, "irqpath=", 8)) {
			if (irq_path_parse(tok + 8, &irq->path))
				return usage_error("bad irqpath '%s': use irqfd or signal-msi", tok + 8);
		} else {
			return usage_error("unknown device option '%s'", tok);
		}
	}
	return -1;
}

/* Takes "bps=SIZE" (bytes per second, K/M/G suffixes) or "ops=N" (requests
 * per second) into *l. Returns 1 if `tok` was one of them, 0 if not, or
 * -(exit status) for a bad value. */
static int parse_limit_tok(const char *tok, struct rate_limit_opts *l)
{
	uint64_t v;
	if (!strncmp(tok, "bps=", 4)) {
		if (parse_size(tok + 4, &v) || v == 0)
			return -usage_error("bad bps '%s': use bytes per second such as 50M", tok + 4);
		l->bytes_per_s = v;
		return 1;
	}
	if (!strncmp(tok, "ops=", 4)) {
		if (parse_uint(tok + 4, 1, 100000000, &v))
			return -usage_error("bad ops '%s': use requests per second, 1 to 1e8", tok + 4);
		l->ops_per_s = v;
		return 1;
	}
	return 0;
}

/* Parses a --rng value: "latency=US" plus the interrupt options. Returns -1
 * on success or an exit status. */
static int parse_rng(const char *arg, struct vm_device_spec *d)
{
	char buf[256], irq[256] = "";
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return usage_error("--%s value is too long", "rng");
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		int lim = parse_limit_tok(tok, &d->limit);
		if (lim < 0)
			return -lim;
		if (lim > 0)
			continue;
		if (!strncmp(tok, "latency=", 8)) {
			if (parse_uint(tok + 8, 10, 1000000, &v))
				return usage_error("bad latency period '%s': use 10 to 1000000 us", tok + 8);
			d->rng_latency_us = (uint32_t)v;
		} else {
			size_t n = strlen(irq);
			snprintf(irq + n, sizeof(irq) - n, "%s%s", n ? "," : "", tok);
		}
	}
	return parse_irq_opts("rng", irq, &d->irq);
}

/* Parses a --disk value "path=FILE[,ro][,queues=N][,engine=E][,irq=MODE][,vectors=N]"
 * into *d (every other key goes to parse_irq_opts, which rejects what it does
 * not know) and checks that the image can be opened. Returns -1 on success or
 * an exit status. */
static int parse_disk(const char *arg, struct vm_device_spec *d)
{
	char buf[VIRTIO_BLK_PATH_MAX + 128], irq[256] = "";
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return usage_error("--%s value is too long", "disk");
	struct virtio_blk_opts *b = &d->blk;
	*b = (struct virtio_blk_opts){ .queues = 1, .engine = BLK_ENGINE_AUTO };
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		int lim = parse_limit_tok(tok, &d->limit);
		if (lim < 0)
			return -lim;
		if (lim > 0)
			continue;
		if (!strncmp(tok, "path=", 5)) {
			if (snprintf(b->path, sizeof(b->path), "%s", tok + 5) >= (int)sizeof(b->path))
				return usage_error("--disk path= is longer than %s bytes", "4095");
		} else if (!strcmp(tok, "ro")) {
			b->ro = true;
		} else if (!strncmp(tok, "queues=", 7)) {
			if (parse_uint(tok + 7, 1, VIRTIO_BLK_MAX_QUEUES, &v))
				return usage_error("bad queues '%s': use 1 to 8", tok + 7);
			b->queues = (uint16_t)v;
		} else if (!strncmp(tok, "engine=", 7)) {
			if (blk_engine_parse(tok + 7, &b->engine))
				return usage_error("bad engine '%s': use uring or sync", tok + 7);
		} else { /* irq=, vectors=, ... */
			size_t n = strlen(irq);
			if (snprintf(irq + n, sizeof(irq) - n, "%s%s", n ? "," : "", tok) >=
			    (int)(sizeof(irq) - n))
				return usage_error("--%s value is too long", "disk");
		}
	}
	if (!b->path[0])
		return usage_error("--disk %s: path=FILE is required", arg);
	int st = parse_irq_opts("disk", irq, &d->irq);
	if (st >= 0)
		return st;
	if (access(b->path, b->ro ? R_OK : R_OK | W_OK)) {
		fprintf(stderr, "msivm: cannot open disk image '%s': %s%s\n", b->path, strerror(errno),
			!b->ro && errno == EACCES ? " (add ,ro for read-only)" : "");
		return EXIT_MSIVM_ERROR;
	}
	return -1;
}

/* Parses a --console value "[out=FILE][,in=FILE][,irq=MODE][,vectors=N]" into
 * *d (other keys go to parse_irq_opts); the files are opened when the VM is
 * built. Returns -1 on success or an exit status. */
static int parse_console(const char *arg, struct vm_device_spec *d)
{
	char buf[2 * VIRTIO_CONSOLE_PATH_MAX + 128], irq[256] = "";
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return usage_error("--%s value is too long", "console");
	struct virtio_console_opts *c = &d->console;
	c->max_out = VIRTIO_CONSOLE_OUT_MAX;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool out = !strncmp(tok, "out=", 4), in = !strncmp(tok, "in=", 3);
		uint64_t v;
		if (!strncmp(tok, "max=", 4)) {
			if (parse_size(tok + 4, &v))
				return usage_error("bad console max '%s': use a size such as 64M, or 0 "
						   "for no cap", tok + 4);
			c->max_out = v;
		} else if (out || in) {
			const char *path = tok + (out ? 4 : 3);
			char *dst = out ? c->out_path : c->in_path;
			if (!path[0] || snprintf(dst, VIRTIO_CONSOLE_PATH_MAX, "%s", path) >=
						VIRTIO_CONSOLE_PATH_MAX)
				return usage_error("--console %s: needs a file name of at most 4095 bytes",
						   tok);
		} else {
			size_t n = strlen(irq);
			if (snprintf(irq + n, sizeof(irq) - n, "%s%s", n ? "," : "", tok) >=
			    (int)(sizeof(irq) - n))
				return usage_error("--%s value is too long", "console");
		}
	}
	return parse_irq_opts("console", irq, &d->irq);
}

/* Parses a MAC address "xx:xx:xx:xx:xx:xx": unicast and not all zero. Returns 0 or -EINVAL. */
static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned v[6];
	int used = 0;
	if (strlen(s) != 17 || sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%n", &v[0], &v[1], &v[2], &v[3],
				      &v[4], &v[5], &used) != 6 || used != 17)
		return -EINVAL;
	for (unsigned i = 0; i < 6; i++) {
		if (!isxdigit((unsigned char)s[3 * i]) || !isxdigit((unsigned char)s[3 * i + 1]))
			return -EINVAL;
		mac[i] = (uint8_t)v[i];
	}
	if ((mac[0] & 1) || !(mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]))
		return -EINVAL;
	return 0;
}

/* Parses a --net value "backend=tap|peer|socket[,ifname=NAME][,mac=M][,queues=N][,mtu=N]
 * [,peer=MODE][,rate=N][,size=S][,path=P][,irq=MODE][,vectors=N]" into *d (other keys go to
 * parse_irq_opts) and checks that the keys fit the backend. The backend is opened when the VM
 * is built. Returns -1 on success or an exit status. */
static int parse_net(const char *arg, struct vm_device_spec *d)
{
	char buf[512], irq[256] = "";
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return usage_error("--%s value is too long", "net");
	struct virtio_net_opts *n = &d->net;
	*n = (struct virtio_net_opts){ .queues = 1, .be = { .nqueues = 1, .rate = 1000, .size = 1024,
							   .peer_mode = NET_PEER_RESPONDER } };
	bool backend = false, ifname = false, path = false, peer = false, source_opt = false;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		int lim = parse_limit_tok(tok, &d->limit);
		if (lim < 0)
			return -lim;
		if (lim > 0)
			continue;
		if (!strncmp(tok, "backend=", 8)) {
			if (net_be_kind_parse(tok + 8, &n->be.kind))
				return usage_error("bad backend '%s': use tap, peer or socket", tok + 8);
			backend = true;
		} else if (!strncmp(tok, "ifname=", 7)) {
			const char *s = tok + 7;
			if (!s[0] || strlen(s) >= NET_IFNAME_MAX || strpbrk(s, "/: \t"))
				return usage_error("bad ifname '%s': 1 to 15 characters, no '/', ':' or "
						   "blanks", s);
			snprintf(n->be.ifname, sizeof(n->be.ifname), "%s", s);
			ifname = true;
		} else if (!strncmp(tok, "mac=", 4)) {
			if (parse_mac(tok + 4, n->mac))
				return usage_error("bad mac '%s': use a unicast address such as "
						   "52:54:00:12:34:56", tok + 4);
			n->mac_set = true;
		} else if (!strncmp(tok, "queues=", 7)) {
			if (parse_uint(tok + 7, 1, VIRTIO_NET_MAX_PAIRS, &v))
				return usage_error("bad queues '%s': use 1 to 7 queue pairs", tok + 7);
			n->queues = (uint16_t)v;
		} else if (!strncmp(tok, "mtu=", 4)) {
			if (parse_uint(tok + 4, VIRTIO_NET_MTU_MIN, VIRTIO_NET_MTU_MAX, &v))
				return usage_error("bad mtu '%s': use 68 to 65535", tok + 4);
			n->mtu = (uint16_t)v;
		} else if (!strncmp(tok, "peer=", 5)) {
			if (net_peer_mode_parse(tok + 5, &n->be.peer_mode))
				return usage_error("bad peer mode '%s': use responder, sink or source",
						   tok + 5);
			peer = true;
		} else if (!strncmp(tok, "rate=", 5)) {
			if (parse_uint(tok + 5, 1, NET_PEER_RATE_MAX, &v))
				return usage_error("bad rate '%s': use 1 to 10000000 frames per second",
						   tok + 5);
			n->be.rate = (uint32_t)v;
			source_opt = true;
		} else if (!strncmp(tok, "size=", 5)) {
			if (parse_uint(tok + 5, NET_PEER_SIZE_MIN, NET_PEER_SIZE_MAX, &v))
				return usage_error("bad size '%s': use 60 to 1514 bytes", tok + 5);
			n->be.size = (uint32_t)v;
			source_opt = true;
		} else if (!strncmp(tok, "path=", 5)) {
			const char *s = tok + 5;
			if (!s[0] || strlen(s) >= NET_PATH_MAX)
				return usage_error("bad path '%s': 1 to 99 characters", s);
			snprintf(n->be.path, sizeof(n->be.path), "%s", s);
			path = true;
		} else { /* irq=, vectors=, ... */
			size_t len = strlen(irq);
			if (snprintf(irq + len, sizeof(irq) - len, "%s%s", len ? "," : "", tok) >=
			    (int)(sizeof(irq) - len))
				return usage_error("--%s value is too long", "net");
		}
	}
	enum net_be_kind k = n->be.kind;
	if (!backend)
		return usage_error("--net %s: backend=tap, backend=peer or backend=socket is required",
				   arg);
	if (ifname && k != NET_BE_TAP)
		return usage_error("--net %s: ifname= is for backend=tap", arg);
	if (path != (k == NET_BE_SOCKET))
		return usage_error(path ? "--net %s: path= is for backend=socket"
					: "--net %s: backend=socket needs path=P", arg);
	if ((peer || source_opt) && k != NET_BE_PEER)
		return usage_error("--net %s: peer=, rate= and size= are for backend=peer", arg);
	if (source_opt && n->be.peer_mode != NET_PEER_SOURCE)
		return usage_error("--net %s: rate= and size= need peer=source", arg);
	uint32_t mtu = n->mtu ? n->mtu : VIRTIO_NET_MTU_DEFAULT;
	if (n->be.peer_mode == NET_PEER_SOURCE && n->be.size > mtu + 14)
		return usage_error("--net %s: size= is larger than the MTU allows (mtu + 14 bytes)", arg);
	n->be.nqueues = k == NET_BE_TAP ? n->queues : 1;
	return parse_irq_opts("net", irq, &d->irq);
}

/* Parses `msivm run` options. Returns -1 on success or an exit status. */
static int parse_run(int argc, char **argv, struct run_opts *o)
{
	uint64_t v;
	int verbosity = LOG_WARN, c;
	const char *pins = NULL;
	*o = (struct run_opts){
		.vm = { .kvm_path = "/dev/kvm", .mem_size = 256 * MiB, .ncpus = 1, .serial_fd = 1,
			.serial_in_fd = -1, .shutdown_timeout_ms = 10000 },
	};
	cpu_policy_init(&o->vm.cpu);
	o->vm.seccomp = seccomp_default_mode();
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":vqh", run_options, NULL)) != -1) {
		switch (c) {
		case OPT_KERNEL: o->kernel = optarg; break;
		case OPT_CMDLINE: o->cmdline = optarg; break;
		case OPT_SERIAL: o->serial = optarg; break;
		case OPT_PIT: o->vm.pit = true; break;
		case OPT_KVM: o->vm.kvm_path = optarg; break;
		case OPT_STATS: o->stats = true; break;
		case OPT_NO_REBOOT: o->no_reboot = true; break;
		case OPT_USER: {
			struct error e;
			if (jail_parse_user(optarg, &o->jail, &e))
				return usage_error("%s", e.msg);
			break;
		}
		case OPT_CHROOT: o->jail.root = optarg; break;
		case OPT_LOG_FILE: o->log_file = optarg; break;
		case OPT_LOG_LEVEL: {
			enum log_level l;
			if (log_level_parse(optarg, &l))
				return usage_error("bad --log-level '%s': use error, warn, info or debug",
						   optarg);
			verbosity = (int)l;
			break;
		}
		case OPT_SECCOMP:
			if (seccomp_mode_parse(optarg, &o->vm.seccomp))
				return usage_error("bad --seccomp '%s': use on, log or off", optarg);
			break;
		case OPT_STATS_JSON: o->stats_json = optarg; break;
		case OPT_CPU_PIN: pins = optarg; break;
		case OPT_INITRD: o->initrd = optarg; break;
		case OPT_CPUID_HIDE: {
			struct error e;
			if (cpuid_hide_parse(optarg, &o->vm.cpuid_hide, &e))
				return usage_error("--cpuid-hide: %s", e.msg);
			break;
		}
		case OPT_DEDICATED: o->vm.cpu.dedicated = true; break;
		case OPT_RT:
			if (parse_uint(optarg, 1, 99, &v))
				return usage_error("bad --rt '%s': use a priority from 1 to 99", optarg);
			o->vm.cpu.rt_prio = (int)v;
			break;
		case OPT_HALT_POLL:
			if (parse_uint(optarg, 0, 1000000000, &v))
				return usage_error("bad --halt-poll '%s': use nanoseconds, 0 to 1e9", optarg);
			o->vm.cpu.halt_poll_ns = (int64_t)v;
			break;
		case OPT_API_SOCKET: o->api_socket = optarg; break;
		case OPT_SHUTDOWN_TIMEOUT:
			if (parse_uint(optarg, 0, 3600, &v))
				return usage_error("bad --shutdown-timeout '%s': use seconds, 0 to 3600", optarg);
			o->vm.shutdown_timeout_ms = (uint32_t)v * 1000;
			break;
		case 'v': verbosity = verbosity < LOG_DEBUG ? verbosity + 1 : LOG_DEBUG; break;
		case 'q': verbosity = LOG_ERROR; break;
		case 'h': fputs(usage_text, stdout); return 0;
		case OPT_MEM:
			if (parse_size(optarg, &v))
				return usage_error("bad --mem size '%s': use a number with K, M or G", optarg);
			if (v < GUEST_MEM_MIN || v > GUEST_MEM_MAX || v % (4 * KiB))
				return usage_error("--mem %s is out of range: 2M to 1T, a multiple of 4K",
						   optarg);
			o->vm.mem_size = v;
			break;
		case OPT_CPUS:
			if (parse_uint(optarg, 1, 255, &v))
				return usage_error("bad --cpus '%s': use a number from 1 to 255", optarg);
			o->vm.ncpus = (uint32_t)v;
			break;
		case OPT_RNG: {
			if (o->vm.ndevices == VM_MAX_DEVICES)
				return usage_error("too many devices (at most %s)", "8");
			struct vm_device_spec *d = &o->vm.devices[o->vm.ndevices++];
			d->type = VM_DEV_RNG;
			int st = parse_rng(optarg, d);
			if (st >= 0)
				return st;
			break;
		}
		case OPT_DISK: {
			if (o->vm.ndevices == VM_MAX_DEVICES)
				return usage_error("too many devices (at most %s)", "8");
			struct vm_device_spec *d = &o->vm.devices[o->vm.ndevices++];
			d->type = VM_DEV_BLK;
			int st = parse_disk(optarg, d);
			if (st >= 0)
				return st;
			break;
		}
		case OPT_CONSOLE: {
			if (o->vm.ndevices == VM_MAX_DEVICES)
				return usage_error("too many devices (at most %s)", "8");
			struct vm_device_spec *d = &o->vm.devices[o->vm.ndevices++];
			d->type = VM_DEV_CONSOLE;
			int st = parse_console(optarg, d);
			if (st >= 0)
				return st;
			break;
		}
		case OPT_NET: {
			if (o->vm.ndevices == VM_MAX_DEVICES)
				return usage_error("too many devices (at most %s)", "8");
			struct vm_device_spec *d = &o->vm.devices[o->vm.ndevices++];
			d->type = VM_DEV_NET;
			int st = parse_net(optarg, d);
			if (st >= 0)
				return st;
			break;
		}
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!o->kernel)
		return usage_error("%s: --kernel FILE is required", "run");
	if (o->jail.drop_user && o->vm.cpu.rt_prio)
		return usage_error("--rt needs root's scheduling privilege: it cannot be combined with "
				   "--user%s", "");
	if (o->jail.root && access(o->jail.root, X_OK))
		return usage_error("--chroot '%s': not a directory msivm can enter", o->jail.root);
	struct error err;
	if ((pins && cpu_policy_parse_pins(&o->vm.cpu, pins, o->vm.ncpus, &err)) ||
	    cpu_policy_check(&o->vm.cpu, o->vm.ncpus, &err)) {
		fprintf(stderr, "msivm: %s\n", err.msg);
		return EXIT_MSIVM_ERROR;
	}
	log_set_level((enum log_level)verbosity);
	return -1;
}

static int exit_status_of(const struct vm *vm)
{
	switch ((enum vm_end)atomic_load(&vm->end)) {
	case VM_END_GUEST_EXIT:
	case VM_END_SIGNAL:
		return vm->exit_status;
	case VM_END_POWEROFF:
		return 0;
	case VM_END_RESET:
		return EXIT_GUEST_RESET;
	default:
		return EXIT_GUEST_CRASH;
	}
}

/* --serial: FILE or file=FILE (output to a file), tty (standard output, and
 * standard input in raw mode with Ctrl-a x to quit when it is a terminal),
 * off. Returns -1 on success (with *raw and *saved set when the terminal
 * was switched to raw mode) or an exit status. */
static int open_serial(struct run_opts *o, struct termios *saved, bool *raw)
{
	const char *v = o->serial;
	if (!v)
		return -1;
	if (!strcmp(v, "off")) {
		o->vm.serial_fd = -1;
		return -1;
	}
	if (!strcmp(v, "tty")) {
		o->vm.serial_in_fd = STDIN_FILENO;
		o->vm.serial_escape = isatty(STDIN_FILENO);
		if (o->vm.serial_escape && !tcgetattr(STDIN_FILENO, saved)) {
			struct termios t = *saved;
			cfmakeraw(&t);
			t.c_oflag |= OPOST | ONLCR; /* guest output stays readable */
			if (!tcsetattr(STDIN_FILENO, TCSAFLUSH, &t)) {
				*raw = true;
				fprintf(stderr, "msivm: serial console on this terminal; Ctrl-a x quits\r\n");
			}
		}
		return -1;
	}
	if (!strncmp(v, "file=", 5))
		v += 5;
	o->vm.serial_fd = open(v, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->vm.serial_fd < 0) {
		fprintf(stderr, "msivm: cannot open serial output '%s': %s\n", v, strerror(errno));
		return EXIT_MSIVM_ERROR;
	}
	return -1;
}

/* After a guest reboot the VM is built again from the same config; console
 * output files then grow instead of starting over. */
static void keep_console_output(struct vm_config *cfg)
{
	for (uint32_t i = 0; i < cfg->ndevices; i++)
		if (cfg->devices[i].type == VM_DEV_CONSOLE)
			cfg->devices[i].console.append = true;
}

static int cmd_run(int argc, char **argv)
{
	struct run_opts o;
	int status = parse_run(argc, argv, &o);
	if (status >= 0)
		return status;
	jail_note_inherited(&o.jail); /* before msivm opens anything of its own */
	FILE *stats_out = NULL;
	bool stats_stdout = o.stats_json && !strcmp(o.stats_json, "-");
	if (stats_stdout)
		stats_out = stdout;
	else if (o.stats_json && !(stats_out = fopen(o.stats_json, "we"))) {
		fprintf(stderr, "msivm: cannot open statistics file '%s': %s\n", o.stats_json,
			strerror(errno));
		return EXIT_MSIVM_ERROR;
	}
	int log_fd = -1;
	if (o.log_file) {
		log_fd = open(o.log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (log_fd < 0) {
			fprintf(stderr, "msivm: cannot open log file '%s': %s\n", o.log_file,
				strerror(errno));
			return EXIT_MSIVM_ERROR;
		}
		log_set_fd(log_fd);
	}
	struct termios saved_tty;
	bool tty_raw = false;
	int st = open_serial(&o, &saved_tty, &tty_raw);
	if (st >= 0)
		return st;
	if (vm_signals_init() || seccomp_signals_init()) {
		fprintf(stderr, "msivm: cannot set up signal handling\n");
		return EXIT_MSIVM_ERROR;
	}
	struct vm *vm = calloc(1, sizeof(*vm));
	struct error err = { "" };
	if (!vm) {
		fprintf(stderr, "msivm: out of memory\n");
		return EXIT_MSIVM_ERROR;
	}
	status = EXIT_MSIVM_ERROR;
	struct api_target api = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct api_server *api_srv = NULL;
	if (o.api_socket && api_server_start(&api_srv, o.api_socket, &api, o.vm.seccomp, &err)) {
		fprintf(stderr, "msivm: %s\n", err.msg);
		free(vm);
		return EXIT_MSIVM_ERROR;
	}
	for (unsigned boot = 1; vm_create(vm, &o.vm, &err) == 0; boot++) {
		struct x86_boot_spec boot_spec = { o.kernel, o.cmdline, o.initrd };
		/* The process-wide filter goes on once the first VM is built; it
		 * still lets this thread build the next one after a guest reboot.
		 * The API thread starts inside the jail, under that filter. */
		if (x86_boot(vm, &boot_spec, &err) ||
		    (boot == 1 && (jail_enter(&o.jail, &err) ||
				   seccomp_install(SECCOMP_BASELINE, o.vm.seccomp, "main", &err) ||
				   (api_srv && api_server_run(api_srv, &err))))) {
			vm_destroy(vm);
			break;
		}
		api_set_vm(&api, vm, boot);
		int run_err = vm_run(vm, &err);
		api_set_vm(&api, NULL, boot);
		if (run_err) {
			vm_destroy(vm);
			break;
		}
		bool reset = atomic_load(&vm->end) == VM_END_RESET;
		if (reset && !o.no_reboot && jail_confines(&o.jail))
			log_warn("guest reset (%s): msivm runs jailed (--user/--chroot) and cannot "
				 "build the VM again; stopping", vm->end_reason);
		else if (reset && !o.no_reboot) {
			log_info("guest reset (%s): reboot %u", vm->end_reason, boot);
			vm_destroy(vm);
			keep_console_output(&o.vm);
			continue;
		}
		status = exit_status_of(vm);
		if (vm->end_reason && status != 0)
			log_info("guest stopped: %s", vm->end_reason);
		if (o.stats)
			vm_stats_print(vm, stderr);
		if (stats_out && vm_stats_write_json(vm, stats_out, o.stats_json, &err))
			fprintf(stderr, "msivm: %s\n", err.msg);
		vm_destroy(vm);
		break;
	}
	api_server_stop(api_srv);
	if (status == EXIT_MSIVM_ERROR)
		fprintf(stderr, "msivm: %s\n", err.msg);
	free(vm);
	if (o.vm.serial_fd > 2)
		close(o.vm.serial_fd);
	if (tty_raw)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
	if (stats_out && !stats_stdout)
		fclose(stats_out);
	if (log_fd >= 0)
		close(log_fd);
	return status;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_MSIVM_ERROR;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("msivm %s%s\n", MSIVM_VERSION,
		       seccomp_default_mode() == SECCOMP_OFF ? " (sanitizer build: --seccomp off by default)"
							     : "");
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "lab"))
		return lab_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "remote"))
		return api_client_main(argc - 1, argv + 1);
	fprintf(stderr, "msivm: unknown command '%s' (see msivm --help)\n", cmd);
	return EXIT_MSIVM_ERROR;
}
