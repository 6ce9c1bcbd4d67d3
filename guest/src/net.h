/* guest/src/net.h - minimal IPv4 stack over virtio-net (ARP, ICMP echo, UDP) and the net= workloads. */
#ifndef PROBE_NET_H
#define PROBE_NET_H

#include <stdbool.h>
#include <stddef.h>

#include "exit.h"
#include "pci.h"
#include "virtio_pci.h"

#define NET_MAX_WORKLOADS   16
#define NET_DEFAULT_N       8
#define NET_MAX_N           4096
#define NET_DEFAULT_SIZE    64
#define NET_MAX_SIZE        1472        /* UDP/ICMP payload in a 1500-byte IP packet */
#define NET_DEFAULT_SECS    5
#define NET_MAX_SECS        3600

enum net_workload {
    NET_WL_PING,
    NET_WL_UDP,
    NET_WL_SERVE,
    NET_WL_RX,
    NET_WL_TX,
};

struct net_args {
    uint8_t wl[NET_MAX_WORKLOADS];  /* enum net_workload, run in this order */
    unsigned int nwl;
    unsigned long n;                /* netn= */
    unsigned long size;             /* netsize= */
    unsigned long secs;             /* netsecs= */
};

/*
 * net=, netn=, netsize=, netsecs= from the command line into *a. Returns
 * true if net= was given; prints "probe: bad <key> value" and exits 2 on a
 * bad value.
 */
bool net_parse_args(const char *cmdline, struct net_args *a);

/*
 * Start d (vnet_start) in irq mode `want`, then run the workloads of `a` in
 * order as 10.0.2.15 with the peer 10.0.2.2, answering ARP requests for
 * 10.0.2.15 and ICMP echo requests to it throughout (see guest/README.md,
 * "virtio-net"). *mode is set to the interrupt mode used ("none" if the
 * device did not start). Returns 0 or the first PROBE_EXIT_* status (5, 8,
 * 17, 18, 19, 20, 9 when no queue interrupt came); a failing workload stops
 * the remaining ones.
 */
int net_run(struct pci_dev *d, const struct net_args *a, enum virtio_irq_mode want,
            const char **mode);

#endif
