/* msivm lab --guest linux: the seeds' experiments on a stock Linux guest, per interrupt configuration, beside QEMU. */
#ifndef MSIVM_LAB_LINUX_LAB_H
#define MSIVM_LAB_LINUX_LAB_H

#include <stdbool.h>
#include <stdint.h>

#include "lab/lab.h"
#include "lab/linux_parse.h"
#include "util/error.h"

#define LL_MAX_RUNS 10

/* The workloads of one boot, in the order the guest runs them (guest/linux/lab-init). */
enum ll_work { LL_FIO_RW, LL_FIO_QD1, LL_FIO_QD4, LL_FIO_QD32, LL_FIO_QD128, LL_IPERF_TX,
	       LL_IPERF_RX, LL_VSOCK_RR, LL_VSOCK_BULK, LL_NWORK };

#define LL_WORK_BIT(w) (1u << (w))
/* What the guest ran before fio-qd4, fio-qd128 and vsock existed (report.json files without an
 * "asked" list). */
#define LL_WORKS_BEFORE_DEPTH (LL_WORK_BIT(LL_FIO_RW) | LL_WORK_BIT(LL_FIO_QD1) | \
			       LL_WORK_BIT(LL_FIO_QD32) | LL_WORK_BIT(LL_IPERF_TX) | \
			       LL_WORK_BIT(LL_IPERF_RX))

/* Is w a fio workload (a JSON block of fio's)? */
static inline bool ll_work_is_fio(unsigned w)
{
	return w <= LL_FIO_QD128;
}

/* Is w one of the vsock workloads (run only where the run has a vsock device)? */
static inline bool ll_work_is_vsock(unsigned w)
{
	return w == LL_VSOCK_RR || w == LL_VSOCK_BULK;
}

/* The guest's vsock device in a run, and how the host reaches it. */
enum ll_vsock {
	LL_VSOCK_NONE,             /* no device: the vsock workloads are not run */
	LL_VSOCK_UNIX,             /* msivm's backend=unix: the host's services at PATH_P */
	LL_VSOCK_VHOST,            /* the kernel's vhost-vsock (msivm backend=vhost, QEMU's
				    * vhost-vsock-pci): the host's services on AF_VSOCK ports */
};

/* Ports of the host's services the guest's vsock workloads connect to (CID 2). */
#define LL_VSOCK_RR_PORT   5100    /* echo: round trips */
#define LL_VSOCK_BULK_PORT 5101    /* sink: reads to the end, then closes */
#define LL_VSOCK_CID       3       /* the guest's */

/* The block name the guest frames workload w with ("fio-rw", ...). */
const char *ll_work_name(enum ll_work w);

/* KVM exit reasons counted per workload (debugfs, both VMMs alike). */
enum ll_exit { LL_EXITS, LL_EXIT_IO, LL_EXIT_MMIO, LL_EXIT_HALT, LL_EXIT_IRQ, LL_EXIT_IRQ_WINDOW,
	       LL_NEXIT };

/* The debugfs file name of exit reason e ("exits", "io_exits", ...). */
const char *ll_exit_name(enum ll_exit e);

/* One interrupt configuration: the same for every virtio device of the VM. */
struct ll_config {
	const char *name;          /* msix, msix-shared, intx, nomsi, msi */
	const char *label;         /* what Linux ends up with, for the report */
	const char *irq;           /* msivm's irq= */
	const char *qemu_vectors;  /* appended to QEMU's -device: "" (default), ",vectors=0";
				    * NULL: QEMU has no equivalent (the run is skipped) */
	const char *guest_extra;   /* appended to the guest's command line, or "" */
	bool msi_expected;         /* Linux must use MSI-X: an IO-APIC virtio line is flagged */
	bool vhost;                /* the NIC's data path in the host kernel: msivm backend=vhost,
				    * QEMU -netdev tap,vhost=on */
	const char *disk_extra;    /* appended to msivm's --disk value, or NULL */
	bool vsock_vhost;          /* msivm's vsock on backend=vhost (else backend=unix); QEMU's
				    * is always vhost-vsock-pci */
	/* The passthrough experiment (--vfio, docs/vfio.md): */
	bool passthrough;          /* fio on the VFIO device (--vfio), the guest's /dev/nvme0n1:
				    * msivm --device path=, QEMU -device vfio-pci */
	const char *vfio_extra;    /* appended to msivm's --device (",relay=on"), or NULL */
	const char *qemu_vfio_extra; /* appended to QEMU's vfio-pci (",x-no-kvm-msix=on"), or NULL */
	bool dedicated;            /* msivm --dedicated, vCPUs pinned (QEMU: skipped) */
	uint32_t works;            /* LL_WORK_BIT of the workloads run (no vsock device); 0: all */
};

/* Whether configuration c needs the VFIO device (--vfio). */
static inline bool ll_config_needs_vfio(const struct ll_config *c)
{
	return c->passthrough;
}

/* The guest's /proc/interrupts rows a configuration counts: the NVMe's for a passthrough one,
 * else virtio's. */
static inline const char *ll_config_irq_rows(const struct ll_config *c)
{
	return c->passthrough ? "nvme" : "virtio";
}

extern const struct ll_config ll_configs[];
extern const unsigned ll_nconfigs;

/* CPU time of a VMM process during a window: its vCPU threads, and every other thread. */
struct ll_cpu {
	double vcpu_s, other_s;
};

struct ll_work_result {
	bool ran;                  /* the guest printed its block */
	char error[200];           /* why its figures are missing ("" when they parsed) */
	struct lp_fio fio;         /* fio workloads */
	struct lp_iperf iperf;     /* iperf workloads */
	struct lp_vsock vsock;     /* vsock workloads */
	double ios, mib;           /* what moved: fio I/Os (read + write), vsock round trips; MiB
				    * (fio, iperf, vsock-bulk) */
	double window_s;           /* host time between the guest's marks */
	struct ll_cpu cpu;         /* VMM CPU between the marks; NAN when not seen */
	double exits[LL_NEXIT];    /* KVM exits between the marks; NAN: no debugfs */
	struct lp_irq_table *irqs; /* virtio rows: interrupts during the workload (malloc'd) */
};

/* One boot of the guest under one VMM and configuration. */
struct ll_run {
	bool failed;               /* no "lab: poweroff", bad exit status, timeout */
	char error[256];           /* failed: why, one line */
	int status;                /* VMM exit status */
	double wall_s;             /* VMM start to exit */
	double run_init_s;         /* the guest kernel's "Run /init" (dmesg); NAN if missing */
	double ready_s;            /* guest uptime when its init saw every device; NAN if missing */
	struct ll_cpu cpu_total;   /* the VMM's CPU over the whole run (from /proc at exit) */
	struct lp_irq_table *irq_ready; /* virtio rows at ready (malloc'd; NULL if missing) */
	char level_with_msi[200];  /* virtio lines on IO-APIC although MSI-X was expected; "" none */
	bool worked;               /* the workloads were asked for */
	enum ll_vsock vsock;       /* the vsock workloads too, through this backend */
	uint32_t asked;            /* LL_WORK_BIT per workload the guest was to run; 0: every fio
				    * and iperf workload, and the vsock ones when vsock names one */
	struct ll_work_result work[LL_NWORK];
	char *console, *errout;    /* malloc'd */
	char *stats_json;          /* msivm --stats-json (msivm runs), malloc'd */
};

struct ll_cell {                   /* (vmm, configuration) */
	const struct ll_config *cfg;
	enum lab_vmm vmm;
	bool skipped;
	char skip_reason[96];
	unsigned nruns;
	struct ll_run runs[LL_MAX_RUNS];
};

struct ll_options {
	const char *msivm, *kernel, *initrd, *out_dir;
	const char *qemu;          /* QEMU binary (default qemu-system-x86_64) */
	const char *cpuid_hide;    /* msivm --cpuid-hide LIST, QEMU -cpu host,-a,-b; NULL: none */
	unsigned timeout_s;        /* per boot; 0: from the workload lengths */
	unsigned disk_mib;         /* scratch disk size */
	bool force, vs_qemu;
	unsigned runs, io_runs;    /* boots per configuration; the first io_runs run the workloads */
	unsigned fio_s, iperf_s;   /* workload lengths in the guest */
	unsigned cpus, mem_mib;
	unsigned configs;          /* bit per ll_configs[] entry */
	const char *tap, *host_ip, *guest_ip;
	unsigned port;             /* iperf3 server */
	bool vhost_vsock;          /* this host has /dev/vhost-vsock (else only backend=unix runs
				    * have vsock workloads) */
	bool no_vhost_vsock;       /* --no-vhost-vsock: as if it had none */
	char vsock_path[108];      /* msivm's --vsock path= (backend=unix) */
	const char *vfio;          /* --vfio: /sys/bus/pci/devices/BDF bound to vfio-pci, or NULL */
	char vfio_buf[300];        /* --vfio auto: the one found */
	char disk[4096];           /* scratch disk image */
	char stats[4096];          /* per-run --stats-json file */
	int sigfd;
	int argc;
	char **argv;
	char date[32];
	struct lab_host host;
	unsigned runs_planned, runs_done, runs_failed;
	int interrupted;
};

/* linux_vfio.c: resolves o->vfio ("auto": the one PCI device bound to vfio-pci) and checks
 * that it is bound to vfio-pci. Returns 0, or -1 after a message on stderr. */
int ll_vfio_resolve(struct ll_options *o);

/* `msivm lab --guest linux ...`: the Linux lab. Same exit statuses as lab_main. */
int ll_main(int argc, char **argv);

/* Fills cells with the (VMM, configuration) pairs of the configurations in the bit mask
 * `configs` (bit i: ll_configs[i]): msivm's, then QEMU's when o->vs_qemu (QEMU's msi cell
 * skipped, with the reason); adds o->runs per cell that runs to o->runs_planned. Returns the
 * number of cells (at most 2 * ll_nconfigs). */
unsigned ll_plan(struct ll_options *o, unsigned configs, struct ll_cell *cells);

/* `msivm lab --guest linux --merge [--out DIR] [--force] FILE...`: one report from the
 * report.json files of several sessions. Same exit statuses as ll_main. */
int ll_merge_main(int argc, char **argv);

/* Boots the guest once under `vmm` in `cfg`, filling *run (run->failed and
 * run->error when it did not power off cleanly). Returns 0, or -EINTR if a
 * signal arrived on o->sigfd (forwarded to the VMM; *signo set, *run to be
 * freed with ll_run_free). */
int ll_run_once(const struct ll_options *o, const struct ll_config *cfg, enum lab_vmm vmm,
		bool work, struct ll_run *run, int *signo);

/* The workloads a run with workloads asks the guest for: every fio and iperf one, and the vsock
 * ones with a vsock device. */
static inline uint32_t ll_works_default(enum ll_vsock vsock)
{
	uint32_t all = LL_WORK_BIT(LL_NWORK) - 1;
	return vsock ? all : all & ~(LL_WORK_BIT(LL_VSOCK_RR) | LL_WORK_BIT(LL_VSOCK_BULK));
}

/* The vsock device of a run with workloads under `vmm` in cfg (LL_VSOCK_NONE without
 * /dev/vhost-vsock where vhost-vsock would be needed). */
enum ll_vsock ll_vsock_backend(const struct ll_options *o, const struct ll_config *cfg,
			       enum lab_vmm vmm);

/* The host's ends of the guest's vsock workloads (linux_vsock.c): an echo service on
 * LL_VSOCK_RR_PORT and a sink on LL_VSOCK_BULK_PORT, served by a thread of their own until
 * stopped; unix sockets PATH_P for LL_VSOCK_UNIX (path: msivm's path=), AF_VSOCK listeners
 * for LL_VSOCK_VHOST. start returns the running services, or NULL with a message in err (the
 * run then fails with it); stop ends the thread, closes and removes what start made. */
struct ll_vsock_srv;
struct ll_vsock_srv *ll_vsock_start(enum ll_vsock kind, const char *path, struct error *err);
void ll_vsock_stop(struct ll_vsock_srv *s);

/* Interprets a finished run's console: boot figures, workload results, interrupts
 * (for the VMM `vmm`, configuration cfg). The workloads' CPU, window and exits
 * come from the watcher and are not touched. The run is failed when the guest reported an
 * error, did not power off, or (work) printed no block for one of its workloads (the vsock
 * ones only when run->vsock names a device).
 * Exported for the recorded-console test. */
void ll_parse_console(const char *console, const struct ll_config *cfg, bool work,
		      struct ll_run *run);

#define LL_MARK_POWEROFF (-2)

/* A console line as the watcher reads it: the workload index of "lab: mark begin|end NAME"
 * (*begin says which), LL_MARK_POWEROFF for "lab: poweroff", -1 for anything else. Trailing
 * "\r" and blanks are ignored. */
int ll_mark(const char *line, size_t len, bool *begin);

/* Frees what a run holds (not the run). */
void ll_run_free(struct ll_run *run);

/* Writes report.txt, report.json and the SVG charts into o->out_dir and prints
 * the tables. Returns 0 or -errno (err says why). */
int ll_report(const struct ll_options *o, struct ll_cell *cells, unsigned ncells,
	      struct error *err);

#endif
