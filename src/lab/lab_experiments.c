/* The probe lab's experiments: what each runs (guest arguments, device, msivm options) and the figures it reports. */
#include "lab/lab_metrics.h"
#include "virtio/virtio_pci.h"

static const struct lab_metric_def boot_metrics[] = {
	{ "ready_ms", "boot to ready", "ms", false, false, false },
	{ "wall_ms", "start to exit", "ms", false, false, false },
	{ "cpu_ms", "host CPU", "ms", false, false, false },
};

/* The work window's figures: the VMM's own threads' CPU (the headline), its
 * vCPU threads' CPU, and the guest's counts between the markers. */
#define WINDOW_METRICS(req)                                                                \
	{ LAB_VMM_CPU_KEY, "VMM CPU per " req ", own threads", "us", false, false, false }, \
	{ "vcpu_cpu_us_per_req", "vCPU threads' CPU per " req, "us", false, false, false }, \
	{ "irqs_per_req", "device interrupts per " req, "", false, false, false },         \
	{ "kicks_per_req", "notify writes per " req, "", false, false, false },            \
	{ "halts_per_req", "guest HLTs per " req, "", false, false, false },               \
	{ "uexits_per_req", "exits to msivm's userspace per " req, "", false, true, false }, \
	{ "isr_reads_per_req", "ISR reads per " req, "", false, true, false },             \
	{ "level_irqs", "level-triggered interrupts", "", false, false, false },           \
	{ "exits_per_req", "KVM exits per " req " (PVM's count)", "", false, true, true },  \
	{ "cpu_us_per_req", "host CPU per " req ", whole run", "us", false, false, true },  \
	{ "work_cpu_us_per_req", "msivm io+vCPU thread CPU per " req ", workload", "us",    \
	  false, true, true }

/* The figures every device workload reports. */
#define IO_METRICS(tput_key, tput_label, tput_unit) \
	{ tput_key, tput_label, tput_unit, true, false, false }, WINDOW_METRICS("request")

static const struct lab_metric_def rng_metrics[] = { IO_METRICS("mib_s", "throughput", "MiB/s") };

static const struct lab_metric_def blk_metrics[] = {
	IO_METRICS("iops", "IOPS", "req/s"),
	{ "iops_per_cpu_s", "requests per host CPU second, whole run", "req/CPU-s", true, false, true },
	{ "iops_per_cpu_s_ready", "requests per host CPU second, after ready", "req/CPU-s", true,
	  false, true },
	{ "mib_s", "throughput", "MiB/s", true, false, false },
	{ "lat_avg_us", "request latency, mean", "us", false, false, false },
	{ "lat_p99_us", "request latency, p99", "us", false, false, false },
};

static const struct lab_metric_def net_metrics[] = {
	IO_METRICS("iops", "packet rate", "packets/s"),
	{ "mib_s", "throughput", "MiB/s", true, false, false },
};

static const struct lab_metric_def ping_metrics[] = {
	{ "lat_avg_us", "ping round trip, mean", "us", false, false, false },
	{ "lat_p99_us", "ping round trip, p99", "us", false, false, false },
	WINDOW_METRICS("ping"),
};

static const struct lab_metric_def lat_metrics[] = {
	{ "lat_min_us", "interrupt latency, min", "us", false, false, false },
	{ "lat_avg_us", "interrupt latency, mean", "us", false, false, false },
	{ "lat_p99_us", "interrupt latency, p99", "us", false, false, false },
	{ "lat_max_us", "interrupt latency, max", "us", false, false, false },
};

/* Restore figures (lab_snapshot.c). "First instruction": msivm's first KVM_RUN (--stats-json's
 * first_run_ns), QEMU's RESUME event; both from the process's start. */
static const struct lab_metric_def snapshot_metrics[] = {
	{ "restore_entry_ms", "restore: start to the guest's first instruction", "ms", false, false, false },
	{ "restore_ms", "restore: start to the guest's first answer", "ms", false, false, false },
	{ "cold_ms", "cold start to ready", "ms", false, false, false },
	{ "cold_entry_ms", "cold start to the guest's first instruction", "ms", false, true, false },
	{ "restore_x_cold", "restore / cold start, to the first instruction", "x", false, true, false },
	{ "save_ms", "snapshot of the running guest (QEMU: migrate to a file)", "ms", false, false, false },
	{ "state_kib", "state file (QEMU: its whole stream)", "KiB", false, false, false },
	{ "mem_kib", "memory file, on disk (sparse)", "KiB", false, true, false },
	{ "clone_pss_kib", "host memory per clone, 4 restored at once (PSS)", "KiB", false, false, false },
	{ "cold_pss_kib", "host memory of one cold-booted VM (PSS)", "KiB", false, false, false },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define PIN "--cpu-pin vcpu0=1,io=0"
#define LAT(nm, title, mode, extra, cpu, cpus)                                                   \
	{ nm, title, "latency", "lat=200", LAB_DEV_RNG, ",latency=2000" extra, cpu, mode, cpus,  \
	  true, lat_metrics, N(lat_metrics), NULL }

const struct lab_experiment lab_experiments[] = {
	{ "boot", "Boot to ready (first virtio request done)", "rng", "rng=4", LAB_DEV_RNG, NULL,
	  NULL, -1, 1, false, boot_metrics, N(boot_metrics), NULL },
	{ "rng", "virtio-rng, 4 KiB requests (256)", "rng", "rng=1024", LAB_DEV_RNG, NULL, NULL, -1, 1, false,
	  rng_metrics, N(rng_metrics), NULL },
	{ "blk-randread", "virtio-blk, 4 KiB random reads, queue depth 4", "blk-randread",
	  "blk=randread blkkb=16384 blkops=512 qd=4", LAB_DEV_DISK, NULL, NULL, -1, 1, false,
	  blk_metrics, N(blk_metrics), NULL },
	{ "blk-randread-qd1", "virtio-blk, 4 KiB random reads, queue depth 1", "blk-randread",
	  "blk=randread blkkb=16384 blkops=512 qd=1", LAB_DEV_DISK, NULL, NULL, -1, 1, false,
	  blk_metrics, N(blk_metrics), NULL },
	{ "blk-randread-qd1-poll", "virtio-blk, 4 KiB random reads, queue depth 1, poll=1000",
	  "blk-randread", "blk=randread blkkb=16384 blkops=512 qd=1", LAB_DEV_DISK, ",poll=1000", NULL,
	  -1, 1, true, blk_metrics, N(blk_metrics), NULL },
	{ "blk-randread-qd1-io-same", "virtio-blk, qd 1, I/O thread pinned to vCPU 0's CPU",
	  "blk-randread", "blk=randread blkkb=16384 blkops=512 qd=1", LAB_DEV_DISK, NULL,
	  "--cpu-pin vcpu0=1,io=1", IRQ_MODE_MSIX, 2, true, blk_metrics, N(blk_metrics), NULL },
	{ "blk-randread-qd1-io-apart", "virtio-blk, qd 1, I/O thread pinned to another CPU",
	  "blk-randread", "blk=randread blkkb=16384 blkops=512 qd=1", LAB_DEV_DISK, NULL,
	  "--cpu-pin vcpu0=1,io=0", IRQ_MODE_MSIX, 2, true, blk_metrics, N(blk_metrics), NULL },
	{ "blk-randread-qd32", "virtio-blk, 4 KiB random reads, queue depth 32", "blk-randread",
	  "blk=randread blkkb=16384 blkops=512 qd=32", LAB_DEV_DISK, NULL, NULL, -1, 1, false,
	  blk_metrics, N(blk_metrics), NULL },
	{ "blk-randread-qd32-nocoalesce", "virtio-blk, queue depth 32, interrupt moderation off",
	  "blk-randread", "blk=randread blkkb=16384 blkops=512 qd=32", LAB_DEV_DISK, ",coalesce=off",
	  NULL, -1, 1, true, blk_metrics, N(blk_metrics), NULL },
	/* Depth 64 is the probe's deepest (3 descriptors a request in a 256-entry ring). */
	{ "blk-randread-qd64", "virtio-blk, 4 KiB random reads, queue depth 64", "blk-randread",
	  "blk=randread blkkb=16384 blkops=512 qd=64", LAB_DEV_DISK, NULL, NULL, -1, 1, false,
	  blk_metrics, N(blk_metrics), NULL },
	{ "blk-randread-qd4-nocoalesce", "virtio-blk, queue depth 4, interrupt moderation off",
	  "blk-randread", "blk=randread blkkb=16384 blkops=512 qd=4", LAB_DEV_DISK, ",coalesce=off",
	  NULL, -1, 1, true, blk_metrics, N(blk_metrics), NULL },
	{ "blk-randread-qd64-nocoalesce", "virtio-blk, queue depth 64, interrupt moderation off",
	  "blk-randread", "blk=randread blkkb=16384 blkops=512 qd=64", LAB_DEV_DISK, ",coalesce=off",
	  NULL, -1, 1, true, blk_metrics, N(blk_metrics), NULL },
	{ "blk-seqwrite", "virtio-blk, 4 KiB sequential writes + flush, queue depth 4", "blk-seqwrite",
	  "blk=seqwrite blkkb=16384 blkops=512 qd=4", LAB_DEV_DISK, NULL, NULL, -1, 1, false,
	  blk_metrics, N(blk_metrics), NULL },
	{ "net-ping", "virtio-net, ICMP echo to the peer (64 pings)", "net-ping", "net=ping netn=64",
	  LAB_DEV_NET, NULL, NULL, -1, 1, false, ping_metrics, N(ping_metrics), NULL },
	{ "net-tx", "virtio-net, guest to host: 1000 UDP frames of 1024 bytes", "net-tx",
	  "net=tx netn=1000 netsize=1024", LAB_DEV_NET, ",peer=sink", NULL, -1, 1, false, net_metrics,
	  N(net_metrics), NULL },
	{ "net-rx", "virtio-net, host to guest: 1024-byte UDP frames at 2000/s for ~2 s", "net-rx",
	  "net=rx netsecs=2", LAB_DEV_NET, ",peer=source,rate=2000,size=1024", NULL, -1, 1, true,
	  net_metrics, N(net_metrics), NULL },
	{ "snapshot", "Snapshot and restore of the echo probe (256 MiB), 4 clones", "snapshot", "echo",
	  LAB_DEV_RNG, NULL, NULL, -1, 1, false, snapshot_metrics, N(snapshot_metrics),
	  lab_snapshot_run },
	{ "floor", "Platform floor: LAPIC self-IPI to handler (no VMM involved)", "floor", "selfipi=200",
	  LAB_DEV_RNG, NULL, NULL, IRQ_MODE_MSIX, 1, true, lat_metrics, N(lat_metrics), NULL },
	LAT("lat-irqfd", "Interrupt latency: MSI-X via irqfd, default scheduling", IRQ_MODE_MSIX, "",
	    NULL, 1),
	LAT("lat-irqfd-pin", "Interrupt latency: MSI-X via irqfd, pinned", IRQ_MODE_MSIX, "", PIN, 2),
	LAT("lat-irqfd-rt", "Interrupt latency: MSI-X via irqfd, pinned + SCHED_FIFO", IRQ_MODE_MSIX,
	    "", PIN " --rt 10", 2),
	LAT("lat-irqfd-ded", "Interrupt latency: MSI-X via irqfd, dedicated (HLT/PAUSE exits off)",
	    IRQ_MODE_MSIX, "", PIN " --rt 10 --dedicated", 2),
	LAT("lat-sigmsi", "Interrupt latency: MSI-X via KVM_SIGNAL_MSI, default scheduling",
	    IRQ_MODE_MSIX, ",irqpath=signal-msi", NULL, 1),
	LAT("lat-sigmsi-pin", "Interrupt latency: MSI-X via KVM_SIGNAL_MSI, pinned", IRQ_MODE_MSIX,
	    ",irqpath=signal-msi", PIN, 2),
	LAT("lat-sigmsi-rt", "Interrupt latency: MSI-X via KVM_SIGNAL_MSI, pinned + SCHED_FIFO",
	    IRQ_MODE_MSIX, ",irqpath=signal-msi", PIN " --rt 10", 2),
	LAT("lat-sigmsi-ded", "Interrupt latency: MSI-X via KVM_SIGNAL_MSI, dedicated", IRQ_MODE_MSIX,
	    ",irqpath=signal-msi", PIN " --rt 10 --dedicated", 2),
	LAT("lat-intx", "Interrupt latency: INTx through the IOAPIC, default scheduling", IRQ_MODE_INTX,
	    "", NULL, 1),
	LAT("lat-intx-pin", "Interrupt latency: INTx, pinned", IRQ_MODE_INTX, "", PIN, 2),
	LAT("lat-intx-rt", "Interrupt latency: INTx, pinned + SCHED_FIFO", IRQ_MODE_INTX, "",
	    PIN " --rt 10", 2),
	LAT("lat-intx-ded", "Interrupt latency: INTx, dedicated", IRQ_MODE_INTX, "",
	    PIN " --rt 10 --dedicated", 2),
};
const unsigned lab_nexperiments = N(lab_experiments);
_Static_assert(N(lab_experiments) <= LAB_MAX_EXPS, "raise LAB_MAX_EXPS");
