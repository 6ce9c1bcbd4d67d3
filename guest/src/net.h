/* guest/src/net.h - minimal IPv4 stack over virtio-net (ARP, ICMP echo, UDP) and the net= workloads. */
#ifndef PROBE_NET_H
#define PROBE_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* IPv4 addresses as they are in memory (network byte order). */
#define NET_IP4(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)
#define NET_DEFAULT_IP      NET_IP4(10, 0, 2, 15)
#define NET_DEFAULT_PEER    NET_IP4(10, 0, 2, 2)

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
    uint32_t ip;                    /* netip=, network byte order */
    uint32_t peer;                  /* netpeer=, network byte order */
};

/*
 * net=, netn=, netsize=, netsecs=, netip=, netpeer= from the command line
 * into *a. Returns
 * true if net= was given; prints "probe: bad <key> value" and exits 2 on a
 * bad value.
 */
bool net_parse_args(const char *cmdline, struct net_args *a);

/*
 * Start d (vnet_start) in irq mode `want`, then run the workloads of `a` in
 * order as a->ip with the peer a->peer, answering ARP requests for a->ip
 * and ICMP echo requests to it throughout, and UDP datagrams to its port 7
 * during `serve` (see guest/README.md, "virtio-net"). *mode is set to the interrupt mode used ("none" if the
 * device did not start). Returns 0 or the first PROBE_EXIT_* status (5, 8,
 * 17, 18, 19, 20, 9 when no queue interrupt came); a failing workload stops
 * the remaining ones.
 */
int net_run(struct pci_dev *d, const struct net_args *a, enum virtio_irq_mode want,
            const char **mode);

#endif
