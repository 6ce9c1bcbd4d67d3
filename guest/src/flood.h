/* guest/src/flood.h - hostile modes (flood=): fill a device's queue with huge requests, then let the probe do its other work. */
#ifndef PROBE_FLOOD_H
#define PROBE_FLOOD_H

#include <stdbool.h>

#include "exit.h"
#include "virtio_pci.h"

#define FLOOD_MAX   8       /* flood= entries */

enum flood_kind {
    FLOOD_RNG,              /* 256 indirect chains of ~4 GiB writable buffers, one kick */
    FLOOD_RNG_NONEG,        /* the same without negotiating VIRTIO_F_INDIRECT_DESC */
    FLOOD_BLK,              /* a queue full of maximal IN requests, one kick */
    FLOOD_NET,              /* TX queue full of MTU-sized frames, re-posted as they complete */
    FLOOD_CONSOLE,          /* TX queue full of region-sized buffers, re-posted likewise */
};

struct flood_args {
    unsigned char kind[FLOOD_MAX];  /* enum flood_kind, in flood= order */
    unsigned int n;
    bool exit_after;                /* bare `exit` token: exit after the work instead of holding */
    unsigned long blk_segs;         /* floodsegs=: data buffers per blk request, 0: seg_max (<= 64) */
};

#define FLOOD_MAX_SEGS  64

/* flood= (comma list), floodsegs= and `exit`; exits 2 ("probe: bad flood
 * value", "probe: bad floodsegs value") on an unknown or empty name or a
 * number outside 1..64. Returns true if at least one flood is asked for. */
bool flood_parse_args(const char *cmdline, struct flood_args *a);

/*
 * For each flood in order, claim the first usable, unclaimed PCI function of
 * its type (pci_dev.claimed; the ordinary drivers skip claimed functions).
 * Prints "probe: no virtio-<type> device for flood=<kind>" and returns
 * PROBE_EXIT_NO_FLOOD if one is missing, else 0. Call after pci_enumerate().
 */
int flood_claim(const struct flood_args *a, int ndevs);


/*
 * Start every claimed flood (needs lapic_init): virtio setup in irq mode
 * `want`, the flood region (shared by all floods), post and kick; prints
 * "probe: flood <kind> <bdf> chains=N bytes=B ..." per flood. rng-noneg
 * then waits up to 200 ms for the device's configuration interrupt and
 * prints what the device status says. Returns 0 or an exit status (5, 8).
 */
int flood_start(enum virtio_irq_mode want);

/* True if any flood was started. */
bool flood_active(void);

/* One line per started flood: "probe: flood <kind> <bdf> posted=P
 * completed=C queue_irqs=Q". */
void flood_report(void);

/* "probe: flood holding", then sleep with interrupts on (the floods' interrupt
 * hooks keep re-posting) until the VMM ends the guest. */
__attribute__((noreturn)) void flood_hold(void);

#endif
