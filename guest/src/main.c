/* guest/src/main.c - probe_main: banner, start_info checks, e820 dump, `smp` AP bring-up, PCI listing, virtio-console, virtio-rng, -blk and -net runs, irq table, exit. */
#include <stdint.h>

#include "cmdline.h"
#include "console.h"
#include "cpu.h"
#include "exit.h"
#include "flood.h"
#include "intx_stress.h"
#include "idt.h"
#include "irq.h"
#include "lab.h"
#include "lapic.h"
#include "latency.h"
#include "lib.h"
#include "mem.h"
#include "net.h"
#include "echo.h"
#include "snaphold.h"
#include "pci.h"
#include "power.h"
#include "smp.h"
#include "start_info.h"
#include "virtio_blk.h"
#include "virtio_console.h"
#include "virtio_net.h"
#include "virtio_vsock.h"
#include "virtio_rng.h"

#define RNG_DEFAULT_KIB 64
#define RNG_MAX_KIB     65536
#define LAB_MAX_WINDOW_MS 1000

/* lat=, latwait=, selfipi=: the interrupt latency workloads. */
struct lat_args {
    unsigned long lat;      /* lat=N: rng latency-mode interrupts to measure, 0: off */
    bool poll;              /* latwait=poll */
    unsigned long selfipi;  /* selfipi=N, 0: off */
    unsigned long intxstress; /* intxstress=N: requests, 0: off */
};

/* Everything below 4 GiB is identity-mapped by entry.S. */
#define MAPPED_LIMIT 0x100000000ull

void probe_main(const struct hvm_start_info *si);

/* The command line, or "" if absent or unusable. */
static const char *boot_cmdline(const struct hvm_start_info *si)
{
    if (si->magic != HVM_START_MAGIC_VALUE || si->cmdline_paddr == 0 ||
        si->cmdline_paddr >= MAPPED_LIMIT)
        return "";
    return (const char *)(uintptr_t)si->cmdline_paddr;
}

static void dump_e820(const struct hvm_start_info *si)
{
    const struct hvm_memmap_table_entry *e;
    uint32_t i;

    if (si->version < 1 || si->memmap_paddr == 0 || si->memmap_paddr >= MAPPED_LIMIT) {
        console_puts("probe: no e820 map in start_info\n");
        return;
    }
    e = (const struct hvm_memmap_table_entry *)(uintptr_t)si->memmap_paddr;
    for (i = 0; i < si->memmap_entries; i++)
        cprintf("probe: e820 0x%016lx-0x%016lx type %u\n",
                (unsigned long)e[i].addr, (unsigned long)(e[i].addr + e[i].size),
                e[i].type);
}

/* First usable function found by pci_enumerate() that `match` accepts and
 * no flood= claimed, or NULL. */
static unsigned long vsock_port;   /* vsock=PORT: the host port the vsock workload connects to */

static struct pci_dev *find_dev(int ndevs, bool (*match)(const struct pci_dev *d))
{
    int i;

    for (i = 0; i < ndevs; i++)
        if (match(pci_get(i)) && pci_get(i)->usable && !pci_get(i)->claimed)
            return pci_get(i);
    return NULL;
}

/*
 * PCI listing, the virtio console if asked for (con_cmdline: the command
 * line for its banner, non-NULL with console=virtio), the virtio-rng
 * workload if a device is present, the virtio-blk workloads if asked for
 * (blk, non-NULL), and the interrupt table. With floods (non-NULL), their
 * devices are claimed first and the floods started before the rng, blk and
 * net work (see flood.h). Returns 0 if every check passed, else an exit status.
 */
static int run_devices(unsigned long rng_kib, enum virtio_irq_mode irq_mode,
                       const struct blk_args *blk, const struct lat_args *lat,
                       const struct net_args *net, const char *con_cmdline,
                       const struct conin_args *conin, const struct flood_args *floods)
{
    const char *mode = "none", *bmode = "none", *nmode = "none";
    int ndevs = pci_enumerate(), rc = floods ? flood_claim(floods, ndevs) : 0, irc;
    struct pci_dev *con = con_cmdline && !rc ? find_dev(ndevs, virtio_console_match) : NULL;
    struct pci_dev *rng = find_dev(ndevs, virtio_rng_match);
    struct pci_dev *bd = blk ? find_dev(ndevs, virtio_blk_match) : NULL;
    struct pci_dev *nd = net ? find_dev(ndevs, virtio_net_match) : NULL;
    struct pci_dev *vd = vsock_port ? find_dev(ndevs, virtio_vsock_match) : NULL;
    bool need_lapic = rng || bd || nd || vd || lat->selfipi || (floods && !rc);

    if (rc) {       /* a flood= device is missing: nothing else is driven */
        rng = bd = nd = NULL;
        blk = NULL;
        net = NULL;
    }
    if (con_cmdline && !con && !rc)
        console_puts("probe: no virtio-console device\n");
    if ((need_lapic || con) && lapic_init()) {
        if (need_lapic)
            rc = PROBE_EXIT_LAPIC;
        con = NULL;     /* "probe: lapic unusable" said why */
    }
    if (con) {
        virtio_console_start(con, irq_mode, con_cmdline);
        if (conin->ms)
            virtio_console_input(conin->ms, conin->until_first);
    }
    if (floods && !rc)
        rc = flood_start(irq_mode);
    if (rc) {
        /* nothing more to drive */
    } else if (!rng) {
        console_puts("probe: no virtio-rng device\n");
        if ((lat->lat || lat->intxstress) && !rc)
            rc = PROBE_EXIT_NO_RNG;
    } else if (!rc) {
        if (lat->intxstress) {
            rc = intx_stress_run(rng, lat->intxstress);
            mode = "intx";
        } else {
            rc = lat->lat ? virtio_rng_latency(rng, lat->lat, lat->poll, irq_mode, &mode)
                          : virtio_rng_run(rng, rng_kib, irq_mode, &mode);
        }
    }
    if (blk && !bd) {
        console_puts("probe: no virtio-blk device\n");
        if (!rc)
            rc = PROBE_EXIT_NO_BLK;
    } else if (bd && !rc) {
        rc = virtio_blk_run(bd, blk, irq_mode, &bmode);
        if (!rng)
            mode = bmode;   /* the global summary names the first driven device */
    }
    if (net && !nd) {
        console_puts("probe: no virtio-net device\n");
        if (!rc)
            rc = PROBE_EXIT_NO_NET;
    } else if (nd && !rc) {
        rc = net_run(nd, net, irq_mode, &nmode);
        if (!rng && !bd)
            mode = nmode;
    }
    if (vsock_port && !vd && !rc) {
        console_puts("probe: no virtio-vsock device\n");
        rc = PROBE_EXIT_VSOCK;
    } else if (vd && !rc) {
        rc = virtio_vsock_run(vd, vsock_port, irq_mode);
    }
    if (lat->selfipi && !rc)
        rc = lat_run_floor(lat->selfipi, lat->poll);
    irq_disable();
    flood_report();
    irc = irq_report(mode);
    return rc ? rc : irc;
}

/* blk=, blkkb=, blkops=, qd=, seed=, blkid. Returns true if the disk is to
 * be driven (a blk= or blkid token); exits 2 on a bad value. */
static bool parse_blk_args(const char *cmdline, struct blk_args *a)
{
    const char *val;
    size_t len;

    memset(a, 0, sizeof(*a));
    a->kib = BLK_DEFAULT_KIB;
    a->ops = BLK_DEFAULT_OPS;
    a->qd = 1;
    a->seed = 1;
    a->seqflush = BLK_DEFAULT_SEQFLUSH;
    a->get_id = cmdline_has(cmdline, "blkid");
    if ((val = cmdline_get(cmdline, "blk", &len)) && blk_parse_workloads(val, len, a)) {
        console_puts("probe: bad blk value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if (cmdline_get_uint(cmdline, "blkkb", BLK_MAX_KIB, &a->kib) < 0 || a->kib == 0) {
        console_puts("probe: bad blkkb value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if (cmdline_get_uint(cmdline, "blkops", BLK_MAX_OPS, &a->ops) < 0) {
        console_puts("probe: bad blkops value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if (cmdline_get_uint(cmdline, "qd", BLK_MAX_QD, &a->qd) < 0 || a->qd == 0) {
        console_puts("probe: bad qd value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if (cmdline_get_uint(cmdline, "seed", BLK_MAX_SEED, &a->seed) < 0) {
        console_puts("probe: bad seed value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if (cmdline_get_uint(cmdline, "seqflush", BLK_MAX_SEQFLUSH, &a->seqflush) < 0 ||
        a->seqflush == 0) {
        console_puts("probe: bad seqflush value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    return val || a->get_id;
}

/* lat=, latwait=, selfipi=; exits 2 on a bad value. */
static void parse_lat_args(const char *cmdline, struct lat_args *a)
{
    const char *val;
    size_t len;

    memset(a, 0, sizeof(*a));
    if (cmdline_get_uint(cmdline, "lat", LAT_MAX_N, &a->lat) < 0 ||
        (cmdline_get(cmdline, "lat", &len) && a->lat == 0)) {
        console_puts("probe: bad lat value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if ((val = cmdline_get(cmdline, "latwait", &len))) {
        if (len == 4 && !memcmp(val, "poll", 4)) {
            a->poll = true;
        } else if (!(len == 3 && !memcmp(val, "hlt", 3))) {
            console_puts("probe: bad latwait value\n");
            probe_exit(PROBE_EXIT_BAD_ARG);
        }
    }
    if (cmdline_get_uint(cmdline, "intxstress", INTX_STRESS_MAX_N, &a->intxstress) < 0 ||
        (cmdline_get(cmdline, "intxstress", &len) && a->intxstress == 0)) {
        console_puts("probe: bad intxstress value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if (cmdline_get_uint(cmdline, "selfipi", LAT_MAX_N, &a->selfipi) < 0 ||
        (cmdline_get(cmdline, "selfipi", &len) && a->selfipi == 0)) {
        console_puts("probe: bad selfipi value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
}

/* conin (300 ms) or conin=MS (until input came, at most MS, 1..10000); exits 2 on a bad value. */
static void parse_conin_args(const char *cmdline, struct conin_args *a)
{
    unsigned long ms = 0;
    size_t len;

    a->ms = 0;
    a->until_first = false;
    if (cmdline_get_uint(cmdline, "conin", CONIN_MAX_MS, &ms) < 0 ||
        (cmdline_get(cmdline, "conin", &len) && ms == 0)) {
        console_puts("probe: bad conin value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if (ms) {
        a->ms = (unsigned int)ms;
        a->until_first = true;
    } else if (cmdline_has(cmdline, "conin")) {
        a->ms = CONIN_DEFAULT_MS;               /* what the host typed before boot */
    }
}

/*
 * Called once from entry.S in 64-bit mode with si = the PVH start_info
 * (physical == virtual). Never returns.
 */
void probe_main(const struct hvm_start_info *si)
{
    const char *cmdline = boot_cmdline(si);
    unsigned long code = 0, rng_kib = RNG_DEFAULT_KIB, labwin = 0;
    enum virtio_irq_mode irq_mode = VIRTIO_IRQ_AUTO;
    struct blk_args blk;
    struct lat_args lat;
    struct net_args net;
    struct flood_args flood;
    struct conin_args conin;
    bool want_blk, want_net, want_flood;
    const char *val;
    size_t len;
    int rc;

    console_init();
    idt_init();
    cprintf("msivm-probe v0: cmdline=\"%s\"\n", cmdline);

    if (si->magic != HVM_START_MAGIC_VALUE) {
        console_puts("probe: bad start_info magic\n");
        probe_exit(PROBE_EXIT_BAD_MAGIC);
    }

    if (cmdline_has(cmdline, "verbose"))
        dump_e820(si);

    if (cmdline_get_uint(cmdline, "exit", 255, &code) < 0) {
        console_puts("probe: bad exit value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if (cmdline_has(cmdline, "stopearly")) { /* test hook: exit= at once, before any device */
        console_puts("probe: stopearly: exiting before any device work\n");
        probe_exit((uint8_t)code);
    }
    if (cmdline_get_uint(cmdline, "rng", RNG_MAX_KIB, &rng_kib) < 0) {
        console_puts("probe: bad rng value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if (cmdline_get_uint(cmdline, "labwin", LAB_MAX_WINDOW_MS, &labwin) < 0) {
        console_puts("probe: bad labwin value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    lab_set_window(labwin);
    if (cmdline_get_uint(cmdline, "vsock", 0xfffffffful, &vsock_port) < 0) {
        console_puts("probe: bad vsock value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    if ((val = cmdline_get(cmdline, "irq", &len)) &&
        virtio_irq_mode_parse(val, len, &irq_mode)) {
        console_puts("probe: bad irq value\n");
        probe_exit(PROBE_EXIT_BAD_ARG);
    }
    want_blk = parse_blk_args(cmdline, &blk);
    parse_lat_args(cmdline, &lat);
    want_net = net_parse_args(cmdline, &net);
    want_flood = flood_parse_args(cmdline, &flood);
    parse_conin_args(cmdline, &conin);
    mem_init(si);
    if (lat.intxstress)
        smp_ap_want_work();             /* the first AP posts intxstress's requests */
    if (cmdline_has(cmdline, "smp"))       /* AP bring-up; exits 2, 10 or 22 on failure */
        smp_run(si, cmdline);

    if (cmdline_has(cmdline, "fault"))     /* test hook: #PF above the mapped 4 GiB */
        (void)*(volatile uint32_t *)(uintptr_t)MAPPED_LIMIT;

    rc = run_devices(rng_kib, irq_mode, want_blk ? &blk : NULL, &lat, want_net ? &net : NULL,
                     cmdline_has(cmdline, "console=virtio") ? cmdline : NULL, &conin,
                     want_flood ? &flood : NULL);
    if (!rc && flood_active() && !flood.exit_after)
        flood_hold();                  /* until the VMM stops the guest */
    if (!rc)
        rc = probe_snaphold(cmdline);  /* snaphold: an interrupt pending across a snapshot */
    if (!rc)
        rc = probe_echo(cmdline);      /* echo: serial lines back until "quit" */
    if (!rc)
        rc = probe_button(cmdline);    /* button=...: returns only if that failed */
    if (!rc)
        rc = probe_power(cmdline);     /* power=...: returns only if that failed */
    probe_exit(rc ? (uint8_t)rc : (uint8_t)code);
}
