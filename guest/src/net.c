/* guest/src/net.c - ARP/IPv4/ICMP/UDP for the probe (netip=, peer netpeer=) and the ping/udp/serve/rx/tx workloads. */
#include "net.h"
#include "cmdline.h"
#include "console.h"
#include "cpu.h"
#include "irq.h"
#include "lab.h"
#include "lapic.h"
#include "lib.h"
#include "stats.h"
#include "virtio_net.h"
#include "wait.h"

#define ETH_HLEN        14
#define ETH_P_IP        0x0800
#define ETH_P_ARP       0x0806
#define IP_HLEN         20
#define IP_PROTO_ICMP   1
#define IP_PROTO_UDP    17
#define ICMP_HLEN       8
#define ICMP_ECHO_REPLY 0
#define ICMP_ECHO       8
#define UDP_HLEN        8
#define ARP_LEN         28
#define ARP_REQUEST     1
#define ARP_REPLY       2

#define PING_ID         0x7072      /* "pr" */
#define UDP_SRC_PORT    49152
#define UDP_ECHO_PORT   7
#define UDP_DISCARD_PORT 9

#define ARP_TRIES       4           /* 250 ms apart */
#define TX_ARP_TRIES    2           /* net=tx: then the broadcast MAC */
#define WATCHDOG_TICKS  WAIT_WATCHDOG_TICKS     /* 10 ms: bounds every sleep */

/* Addresses as they are in memory (network byte order). */
#define MY_IP           S.ip        /* netip= */
#define PEER_IP         S.peer      /* netpeer= */
#define BCAST_IP        0xffffffffu
/* cprintf("..." IP_FMT "...", IP_ARGS(ip)) */
#define IP_FMT          "%u.%u.%u.%u"
#define IP_ARGS(ip)     (unsigned int)((ip) & 255), (unsigned int)((ip) >> 8 & 255), \
                        (unsigned int)((ip) >> 16 & 255), (unsigned int)((ip) >> 24)

struct eth_hdr {
    uint8_t dst[6], src[6];
    uint16_t type;
} __attribute__((packed));

struct arp_pkt {
    uint16_t htype, ptype;
    uint8_t hlen, plen;
    uint16_t op;
    uint8_t sha[6];
    uint32_t spa;
    uint8_t tha[6];
    uint32_t tpa;
} __attribute__((packed));

struct ip_hdr {
    uint8_t vihl, tos;
    uint16_t len, id, frag;
    uint8_t ttl, proto;
    uint16_t csum;
    uint32_t src, dst;
} __attribute__((packed));

struct icmp_hdr {
    uint8_t type, code;
    uint16_t csum, id, seq;
} __attribute__((packed));

struct udp_hdr {
    uint16_t sport, dport, len, csum;
} __attribute__((packed));

enum expect {
    EXP_NONE,
    EXP_ICMP,       /* echo reply id/seq/payload */
    EXP_UDP,        /* datagram from peer:7 to our port, payload */
};

static const char *const wl_names[] = {
    [NET_WL_PING] = "ping",
    [NET_WL_UDP] = "udp",
    [NET_WL_SERVE] = "serve",
    [NET_WL_RX] = "rx",
    [NET_WL_TX] = "tx",
};

static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static struct {
    struct vnet_info info;
    uint32_t ip, peer;          /* netip=, netpeer= (network byte order) */
    uint8_t peer_mac[6];
    bool peer_known;
    uint64_t hz;                /* TSC frequency used for timeouts and netsecs */
    uint64_t now;               /* TSC at the start of the current poll pass */
    uint32_t bad;               /* frames that failed a check */
    uint32_t served, arp_replies, tx_drop;
    uint32_t udp_served;        /* UDP port 7 datagrams echoed (serve) */
    bool serving;               /* net=serve running: echo UDP port 7 */
    uint64_t good_frames, good_bytes;   /* frames that passed the checks */
    uint16_t ip_id;
    /* what the running workload waits for */
    uint8_t expect;
    uint16_t exp_id, exp_seq, exp_port;
    const uint8_t *exp_payload;
    uint32_t exp_len;
    bool got, wrong;
    const char *why;            /* what was wrong */
} S __noinit;                   /* cleared by net_run */

static uint8_t payload[NET_MAX_SIZE] __noinit;
static uint64_t lat_vals[NET_MAX_N] __noinit;

static inline uint16_t htons(uint16_t x)
{
    return __builtin_bswap16(x);
}

#define ntohs htons

static bool mac_eq(const uint8_t *a, const uint8_t *b)
{
    return *(const uint32_t *)a == *(const uint32_t *)b &&
           *(const uint16_t *)(a + 4) == *(const uint16_t *)(b + 4);
}

static void mac_copy(uint8_t *d, const uint8_t *s)
{
    *(uint32_t *)d = *(const uint32_t *)s;
    *(uint16_t *)(d + 4) = *(const uint16_t *)(s + 4);
}

/* ---- Internet checksum (RFC 1071) ---- */

/* Ones' complement sum of buf[0..len) added to sum, as a 64-bit
 * accumulator of little-endian words: 32 bytes per loop iteration of adc
 * (each instruction is emulated at CPL0). The result is only meaningful
 * through csum_fold; buffers summed one after the other must start at even
 * offsets of the checksummed data. */
static uint64_t csum_add(uint64_t sum, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    size_t q = len / 32;
    uint64_t v;

    if (q) {
        __asm__("clc\n"
                "1:\tadcq 0(%[p]), %[s]\n\t"
                "adcq 8(%[p]), %[s]\n\t"
                "adcq 16(%[p]), %[s]\n\t"
                "adcq 24(%[p]), %[s]\n\t"
                "leaq 32(%[p]), %[p]\n\t"
                "decq %[q]\n\t"         /* leaves CF alone */
                "jnz 1b\n\t"
                "adcq $0, %[s]"
                : [s] "+r"(sum), [p] "+r"(p), [q] "+r"(q)
                : "m"(*(const uint8_t(*)[len])buf)
                : "cc");
    }
    len &= 31;
    for (; len >= 8; len -= 8, p += 8) {
        __builtin_memcpy(&v, p, 8);
        sum += v;
        sum += sum < v;
    }
    if (len) {
        v = 0;
        for (q = 0; q < len; q++)
            v |= (uint64_t)p[q] << (8 * q);
        sum += v;
        sum += sum < v;
    }
    return sum;
}

/* Fold to 16 bits and complement: the value to store (as is, little-endian)
 * in a checksum field; 0 when verifying data that include a valid one. */
static uint16_t csum_fold(uint64_t sum)
{
    sum = (sum & 0xffffffffu) + (sum >> 32);
    sum = (sum & 0xffffffffu) + (sum >> 32);
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* Sum of the UDP pseudo header (addresses as in memory). */
static uint64_t pseudo_sum(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len)
{
    uint64_t sum = (uint64_t)src + dst;

    return sum + ((uint32_t)proto << 8) + htons(len);
}

/* ---- output ---- */

/* Ethernet + IPv4 header (no options, DF, TTL 64) for l4len bytes of
 * protocol proto; returns where the L4 header goes. */
static uint8_t *ip_out(uint8_t *f, const uint8_t *dmac, uint32_t dst, uint8_t proto,
                       uint32_t l4len)
{
    struct eth_hdr *e = (struct eth_hdr *)f;
    struct ip_hdr *ip = (struct ip_hdr *)(f + ETH_HLEN);

    mac_copy(e->dst, dmac);
    mac_copy(e->src, S.info.mac);
    e->type = htons(ETH_P_IP);
    ip->vihl = 0x45;
    ip->tos = 0;
    ip->len = htons((uint16_t)(IP_HLEN + l4len));
    ip->id = htons(S.ip_id++);
    ip->frag = htons(0x4000);
    ip->ttl = 64;
    ip->proto = proto;
    ip->csum = 0;
    ip->src = MY_IP;
    ip->dst = dst;
    ip->csum = csum_fold(csum_add(0, ip, IP_HLEN));
    return f + ETH_HLEN + IP_HLEN;
}

/* UDP header at u for a datagram whose payload (plen bytes) has the
 * partial sum psum; the payload itself is written by the caller. */
static void udp_out(uint8_t *u, uint32_t dst, uint16_t sport, uint16_t dport, uint32_t plen,
                    uint64_t psum)
{
    struct udp_hdr *h = (struct udp_hdr *)u;
    uint16_t ulen = (uint16_t)(UDP_HLEN + plen), c;

    h->sport = htons(sport);
    h->dport = htons(dport);
    h->len = htons(ulen);
    h->csum = 0;
    c = csum_fold(csum_add(pseudo_sum(MY_IP, dst, IP_PROTO_UDP, ulen) + psum, h, UDP_HLEN));
    h->csum = c ? c : 0xffff;
}

static void arp_out(uint16_t op, const uint8_t *edst, const uint8_t *tha, uint32_t tpa)
{
    uint8_t *f = vnet_tx_buf();
    struct eth_hdr *e = (struct eth_hdr *)f;
    struct arp_pkt *a = (struct arp_pkt *)(f + ETH_HLEN);

    if (!f) {
        S.tx_drop++;
        return;
    }
    mac_copy(e->dst, edst);
    mac_copy(e->src, S.info.mac);
    e->type = htons(ETH_P_ARP);
    a->htype = htons(1);
    a->ptype = htons(ETH_P_IP);
    a->hlen = 6;
    a->plen = 4;
    a->op = htons(op);
    mac_copy(a->sha, S.info.mac);
    a->spa = MY_IP;
    mac_copy(a->tha, tha);
    a->tpa = tpa;
    memset(f + ETH_HLEN + ARP_LEN, 0, 60 - ETH_HLEN - ARP_LEN);   /* minimum frame */
    vnet_tx_send(60, 0, 0, true);
}

/* ---- input ---- */

/* false if the frame is malformed (counted bad). */
static bool arp_in(const uint8_t *f, uint32_t len)
{
    const struct eth_hdr *e = (const struct eth_hdr *)f;
    const struct arp_pkt *a = (const struct arp_pkt *)(f + ETH_HLEN);

    if (len < ETH_HLEN + ARP_LEN || a->htype != htons(1) || a->ptype != htons(ETH_P_IP) ||
        a->hlen != 6 || a->plen != 4)
        return false;
    if (a->spa == PEER_IP && (a->op == htons(ARP_REPLY) || a->op == htons(ARP_REQUEST))) {
        mac_copy(S.peer_mac, a->sha);
        S.peer_known = true;
    }
    if (a->op == htons(ARP_REQUEST) && a->tpa == MY_IP) {
        arp_out(ARP_REPLY, e->src, a->sha, a->spa);
        S.arp_replies++;
    }
    return true;
}

static void expect_result(bool ok, const char *why)
{
    if (ok)
        S.got = true;
    else if (!S.wrong) {
        S.wrong = true;
        S.why = why;
    }
}

static bool icmp_in(const uint8_t *f, const struct ip_hdr *ip, const uint8_t *l4, uint32_t l4len)
{
    const struct icmp_hdr *h = (const struct icmp_hdr *)l4;
    uint32_t plen = l4len - ICMP_HLEN;

    if (l4len < ICMP_HLEN || csum_fold(csum_add(0, l4, l4len)))
        return false;
    if (h->type == ICMP_ECHO && h->code == 0) {
        uint8_t *o = vnet_tx_buf(), *r;
        struct icmp_hdr *rh;

        if (!o || l4len > VNET_BUF_SIZE - VNET_HDR_LEN - ETH_HLEN - IP_HLEN) {
            S.tx_drop++;
            return true;
        }
        /* Reply to the sender's MAC: no ARP lookup needed. */
        r = ip_out(o, ((const struct eth_hdr *)f)->src, ip->src, IP_PROTO_ICMP, l4len);
        memcpy(r, l4, l4len);
        rh = (struct icmp_hdr *)r;
        rh->type = ICMP_ECHO_REPLY;
        rh->csum = 0;
        rh->csum = csum_fold(csum_add(0, r, l4len));
        vnet_tx_send(ETH_HLEN + IP_HLEN + l4len, 0, 0, true);
        S.served++;
    } else if (h->type == ICMP_ECHO_REPLY && S.expect == EXP_ICMP && h->id == htons(S.exp_id)) {
        if (h->seq != htons(S.exp_seq))
            expect_result(false, "sequence number");
        else if (plen != S.exp_len || memcmp(l4 + ICMP_HLEN, S.exp_payload, plen))
            expect_result(false, "payload");
        else
            expect_result(true, 0);
    }
    return true;
}

/* net=serve: echo the datagram (header + payload at l4, ulen bytes, checks
 * passed) to the sender's MAC, address and port, from port 7. Swapping the
 * addresses and the ports leaves the UDP checksum as it is, so a non-zero
 * one is copied; a zero one (none) is computed. */
static void udp_echo(const uint8_t *f, const struct ip_hdr *ip, const uint8_t *l4, uint16_t ulen)
{
    const struct udp_hdr *h = (const struct udp_hdr *)l4;
    uint8_t *o = vnet_tx_buf(), *r;
    struct udp_hdr *rh;
    uint16_t c;

    if (!o || ulen > VNET_BUF_SIZE - VNET_HDR_LEN - ETH_HLEN - IP_HLEN) {
        S.tx_drop++;
        return;
    }
    r = ip_out(o, ((const struct eth_hdr *)f)->src, ip->src, IP_PROTO_UDP, ulen);
    memcpy(r, l4, ulen);
    rh = (struct udp_hdr *)r;
    rh->sport = h->dport;
    rh->dport = h->sport;
    if (!h->csum) {
        c = csum_fold(csum_add(pseudo_sum(MY_IP, ip->src, IP_PROTO_UDP, ulen), r, ulen));
        rh->csum = c ? c : 0xffff;
    }
    vnet_tx_send(ETH_HLEN + IP_HLEN + ulen, 0, 0, true);
    S.udp_served++;
}

static bool udp_in(const uint8_t *f, const struct ip_hdr *ip, const uint8_t *l4, uint32_t l4len)
{
    const struct udp_hdr *h = (const struct udp_hdr *)l4;
    uint16_t ulen;

    if (l4len < UDP_HLEN)
        return false;
    ulen = ntohs(h->len);
    if (ulen < UDP_HLEN || ulen > l4len)
        return false;
    if (h->csum && csum_fold(csum_add(pseudo_sum(ip->src, ip->dst, IP_PROTO_UDP, ulen),
                                      l4, ulen)))
        return false;
    if (S.expect == EXP_UDP && h->dport == htons(S.exp_port) &&
        h->sport == htons(UDP_ECHO_PORT) && ip->src == PEER_IP) {
        uint32_t plen = ulen - UDP_HLEN;

        expect_result(plen == S.exp_len && !memcmp(l4 + UDP_HLEN, S.exp_payload, plen),
                      "payload");
    } else if (S.serving && h->dport == htons(UDP_ECHO_PORT) && ip->dst == MY_IP &&
               h->sport != htons(UDP_ECHO_PORT) && h->sport) {
        /* unicast only; never to port 7 or 0 (no echo loop between two servers) */
        udp_echo(f, ip, l4, ulen);
    }
    return true;
}

static bool ip_in(const uint8_t *f, uint32_t len)
{
    const struct ip_hdr *ip = (const struct ip_hdr *)(f + ETH_HLEN);
    uint32_t avail = len - ETH_HLEN, ihl, tot;

    if (avail < IP_HLEN || (ip->vihl >> 4) != 4)
        return false;
    ihl = (ip->vihl & 15u) * 4;
    tot = ntohs(ip->len);
    if (ihl < IP_HLEN || tot < ihl || tot > avail || csum_fold(csum_add(0, ip, ihl)))
        return false;
    if ((ip->dst != MY_IP && ip->dst != BCAST_IP) || (ntohs(ip->frag) & 0x3fff))
        return true;        /* not for us, or a fragment: ignored */
    if (ip->proto == IP_PROTO_ICMP)
        return icmp_in(f, ip, (const uint8_t *)ip + ihl, tot - ihl);
    if (ip->proto == IP_PROTO_UDP)
        return udp_in(f, ip, (const uint8_t *)ip + ihl, tot - ihl);
    return true;
}

/* Every received frame (vnet_rx_fn). */
static void net_in(const uint8_t *f, uint32_t len, void *ctx)
{
    const struct eth_hdr *e = (const struct eth_hdr *)f;
    bool ok = true;

    (void)ctx;
    if (len < ETH_HLEN) {
        ok = false;
    } else if (mac_eq(e->dst, S.info.mac) || mac_eq(e->dst, bcast_mac)) {
        if (e->type == htons(ETH_P_ARP))
            ok = arp_in(f, len);
        else if (e->type == htons(ETH_P_IP))
            ok = ip_in(f, len);
    }
    if (!ok) {
        S.bad++;
        return;
    }
    S.good_frames++;
    S.good_bytes += len;
}

/* ---- waiting ---- */

/* One poll pass: the TSC, then everything both queues completed. 0 or
 * PROBE_EXIT_VIRTIO (device error). */
static int pump(void)
{
    int n;

    S.now = rdtsc();
    n = vnet_poll(net_in, 0, &S.bad);
    if (n < 0)
        return PROBE_EXIT_VIRTIO;
    if (vnet_counters()->rx_frames || vnet_counters()->tx_frames != vnet_tx_in_flight())
        lab_ready();
    return 0;
}

/* Sleep ("sti; hlt", the 10 ms watchdog bounds each sleep) until a queue
 * has work (0) or the TSC passes deadline (-1). Returns with IF=1. */
static int net_wait(uint64_t deadline)
{
    irq_disable();
    while (!vnet_has_work()) {
        if ((int64_t)(rdtsc() - deadline) >= 0) {
            irq_enable();
            return -1;
        }
        irq_enable_and_halt();
        irq_disable();
    }
    irq_enable();
    return 0;
}

static bool past(uint64_t deadline)
{
    return (int64_t)(rdtsc() - deadline) >= 0;
}

/* Sleep until there is work, then one poll pass: 0; -1 once the deadline
 * has passed (checked before sleeping, so a steady stream of frames cannot
 * hold the caller past it); or PROBE_EXIT_VIRTIO. */
static int step(uint64_t deadline)
{
    if (past(deadline) || net_wait(deadline))
        return -1;
    return pump();
}

/* The lab's window pause (lab_work_begin/end): keep serving the device. */
static void net_idle(uint64_t deadline)
{
    while (!step(deadline))
        ;
}

/* A TX frame area, waiting up to 1 s for a slot; NULL on timeout or
 * device error (*rc set). */
static uint8_t *tx_get(int *rc)
{
    uint64_t deadline = rdtsc() + S.hz;
    uint8_t *f;

    while (!(f = vnet_tx_buf())) {
        if ((*rc = step(deadline)) < 0) {
            cprintf("probe: net tx timeout (%u in flight)\n", vnet_tx_in_flight());
            *rc = PROBE_EXIT_NET_TX;
        }
        if (*rc)
            return NULL;
    }
    return f;
}

/* Learn the peer's MAC: up to `tries` ARP requests, 250 ms apart. 0,
 * PROBE_EXIT_ARP_TIMEOUT (after "probe: net arp <peer> timeout") or a
 * device error. */
static int arp_resolve(unsigned int tries)
{
    unsigned int i;
    int rc = 0;

    if (S.peer_known)
        return 0;
    for (i = 0; i < tries && !S.peer_known; i++) {
        uint64_t deadline;

        if (!tx_get(&rc))
            return rc;
        arp_out(ARP_REQUEST, bcast_mac, (const uint8_t[6]){ 0 }, PEER_IP);
        deadline = rdtsc() + S.hz / 4;
        while (!S.peer_known && !(rc = step(deadline)))
            ;
        if (rc > 0)
            return rc;
    }
    if (!S.peer_known) {
        cprintf("probe: net arp " IP_FMT " timeout\n", IP_ARGS(PEER_IP));
        return PROBE_EXIT_ARP_TIMEOUT;
    }
    cprintf("probe: net arp " IP_FMT " is %02x:%02x:%02x:%02x:%02x:%02x\n", IP_ARGS(PEER_IP),
            S.peer_mac[0], S.peer_mac[1], S.peer_mac[2], S.peer_mac[3], S.peer_mac[4],
            S.peer_mac[5]);
    return 0;
}

/* ---- workloads ---- */

/* Pattern payload of request `seq`: byte j = seq + j; for UDP the first
 * 4 bytes are seq (little-endian). */
static void fill_payload(uint32_t seq, uint32_t len, bool udp)
{
    uint32_t j;

    for (j = 0; j < len; j++)
        payload[j] = (uint8_t)(seq + j);
    if (udp)
        for (j = 0; j < 4 && j < len; j++)
            payload[j] = (uint8_t)(seq >> (8 * j));
}

/* net=ping / net=udp: n echo requests, one at a time, each answered
 * within 1 s. */
static int run_echo(bool udp, unsigned long n, unsigned long size)
{
    const char *name = udp ? "udp" : "ping";
    uint32_t bad0 = S.bad, seq;
    uint64_t bytes = 0, t_start, t_end;
    struct stats st;
    char buf[112];
    int rc;

    if ((rc = arp_resolve(ARP_TRIES)))
        return rc;
    stats_reset(&st, lat_vals, NET_MAX_N);
    lab_work_begin(net_idle);
    t_start = rdtsc();
    for (seq = 1; seq <= n; seq++) {
        uint8_t *f = tx_get(&rc), *l4;
        uint64_t t0, deadline;

        if (!f)
            return rc;
        fill_payload(seq, (uint32_t)size, udp);
        S.exp_payload = payload;
        S.exp_len = (uint32_t)size;
        S.got = S.wrong = false;
        if (udp) {
            l4 = ip_out(f, S.peer_mac, PEER_IP, IP_PROTO_UDP, UDP_HLEN + (uint32_t)size);
            memcpy(l4 + UDP_HLEN, payload, size);
            udp_out(l4, PEER_IP, UDP_SRC_PORT, UDP_ECHO_PORT, (uint32_t)size,
                    csum_add(0, payload, size));
            S.exp_port = UDP_SRC_PORT;
            S.expect = EXP_UDP;
        } else {
            struct icmp_hdr *h;

            l4 = ip_out(f, S.peer_mac, PEER_IP, IP_PROTO_ICMP, ICMP_HLEN + (uint32_t)size);
            h = (struct icmp_hdr *)l4;
            h->type = ICMP_ECHO;
            h->code = 0;
            h->csum = 0;
            h->id = htons(PING_ID);
            h->seq = htons((uint16_t)seq);
            memcpy(l4 + ICMP_HLEN, payload, size);
            h->csum = csum_fold(csum_add(0, l4, ICMP_HLEN + size));
            S.exp_id = PING_ID;
            S.exp_seq = (uint16_t)seq;
            S.expect = EXP_ICMP;
        }
        t0 = rdtsc();
        vnet_tx_send(ETH_HLEN + IP_HLEN + (udp ? UDP_HLEN : ICMP_HLEN) + (uint32_t)size, 0, 0,
                     true);
        deadline = t0 + S.hz;
        while (!S.got && !S.wrong && !(rc = step(deadline)))
            ;
        if (rc > 0)
            return rc;
        S.expect = EXP_NONE;
        if (S.wrong) {
            cprintf("probe: net-%s reply wrong (request %u: %s)\n", name, seq, S.why);
            return PROBE_EXIT_ECHO_WRONG;
        }
        if (!S.got) {
            cprintf("probe: net-%s reply missing (request %u)\n", name, seq);
            return PROBE_EXIT_ECHO_MISSING;
        }
        stats_add(&st, S.now - t0);
        bytes += size;
    }
    t_end = rdtsc();
    lab_work_end(net_idle);
    if (udp)
        cprintf("probe: result net-udp requests=%u bytes=%lu cycles=%lu %s bad=%u\n", st.n,
                (unsigned long)bytes, (unsigned long)(t_end - t_start),
                stats_format(&st, buf, sizeof(buf)), S.bad - bad0);
    else
        cprintf("probe: result net-ping requests=%u %s bad=%u\n", st.n,
                stats_format(&st, buf, sizeof(buf)), S.bad - bad0);
    return 0;
}

/* net=serve / net=rx: answer and count for secs seconds (serve also echoes
 * UDP port 7). */
static int run_listen(bool rx, unsigned long secs)
{
    uint64_t t0, deadline, frames0 = S.good_frames, bytes0 = S.good_bytes;
    uint32_t served0 = S.served, udp0 = S.udp_served, bad0 = S.bad;
    int rc;

    if (rx && !S.peer_known) {
        /* Tell the peer who we are (no wait: the source may not answer). */
        if (!tx_get(&rc))
            return rc;
        arp_out(ARP_REQUEST, bcast_mac, (const uint8_t[6]){ 0 }, PEER_IP);
    }
    lab_work_begin(net_idle);
    t0 = rdtsc();
    deadline = t0 + secs * S.hz;
    S.serving = !rx;
    while (!(rc = step(deadline)))
        ;
    S.serving = false;
    if (rc > 0)
        return rc;
    lab_work_end(net_idle);
    if (rx)
        cprintf("probe: result net-rx requests=%lu bytes=%lu cycles=%lu bad=%u\n",
                (unsigned long)(S.good_frames - frames0), (unsigned long)(S.good_bytes - bytes0),
                (unsigned long)(rdtsc() - t0), S.bad - bad0);
    else
        cprintf("probe: net served %u echo requests %u udp echoes\n", S.served - served0,
                S.udp_served - udp0);
    return 0;
}

/* net=tx: n UDP datagrams of size bytes to peer:9 as fast as the TX queue
 * takes them. The payload is one shared buffer (second descriptor). */
static int run_tx(unsigned long n, unsigned long size)
{
    uint32_t bad0 = S.bad, sent = 0, inflight;
    uint64_t psum, t0, t1, bytes0, frames0, progress;
    const uint8_t *dmac = S.peer_mac;
    int rc;

    /* A sink need not answer ARP: then the frames go to the broadcast MAC. */
    if ((rc = arp_resolve(TX_ARP_TRIES)) == PROBE_EXIT_ARP_TIMEOUT) {
        console_puts("probe: net-tx to the broadcast MAC\n");
        dmac = bcast_mac;
    } else if (rc) {
        return rc;
    }
    fill_payload(0, (uint32_t)size, false);
    psum = csum_add(0, payload, size);
    frames0 = vnet_counters()->tx_frames;
    bytes0 = vnet_counters()->tx_bytes;
    lab_work_begin(net_idle);
    t0 = progress = rdtsc();
    inflight = 0;
    while (sent < n) {
        unsigned int batch = 0;
        uint8_t *f;

        while (sent < n && (f = vnet_tx_buf())) {
            udp_out(ip_out(f, dmac, PEER_IP, IP_PROTO_UDP, UDP_HLEN + (uint32_t)size),
                    PEER_IP, UDP_SRC_PORT, UDP_DISCARD_PORT, (uint32_t)size, psum);
            vnet_tx_send(ETH_HLEN + IP_HLEN + UDP_HLEN, payload, (uint32_t)size, false);
            sent++;
            batch++;
        }
        if (batch)
            vnet_tx_kick();
        /* progress = the last time a frame went out or completed */
        if (batch || vnet_tx_in_flight() < inflight)
            progress = rdtsc();
        inflight = vnet_tx_in_flight();
        if (sent < n && (rc = step(progress + S.hz))) {
            if (rc < 0) {
                cprintf("probe: net tx timeout (frame %u, %u in flight)\n", sent + 1,
                        vnet_tx_in_flight());
                return PROBE_EXIT_NET_TX;
            }
            return rc;
        }
    }
    /* until every frame completed */
    while (vnet_tx_in_flight()) {
        if (vnet_tx_in_flight() < inflight)
            progress = rdtsc();
        inflight = vnet_tx_in_flight();
        if ((rc = step(progress + S.hz))) {
            if (rc < 0) {
                cprintf("probe: net tx timeout (%u in flight at the end)\n",
                        vnet_tx_in_flight());
                return PROBE_EXIT_NET_TX;
            }
            return rc;
        }
    }
    t1 = rdtsc();
    lab_work_end(net_idle);
    cprintf("probe: result net-tx requests=%lu bytes=%lu cycles=%lu bad=%u\n",
            (unsigned long)(vnet_counters()->tx_frames - frames0),
            (unsigned long)(vnet_counters()->tx_bytes - bytes0), (unsigned long)(t1 - t0),
            S.bad - bad0);
    return 0;
}

/* ---- arguments and the run ---- */

static int parse_workloads(const char *s, size_t len, struct net_args *a)
{
    int n = cmdline_pick_list(s, len, wl_names, ARRAY_SIZE(wl_names), a->wl, NET_MAX_WORKLOADS);

    if (n < 0)
        return -1;
    a->nwl = (unsigned int)n;
    return 0;
}

/* Dotted-quad IPv4 address (four decimal numbers 0..255 of 1-3 digits),
 * first byte 1..223 (not 0.x, multicast, reserved or broadcast); into *out
 * in network byte order. -1 if malformed. */
static int parse_ip4(const char *s, size_t len, uint32_t *out)
{
    uint32_t ip = 0;
    unsigned int part;
    size_t i = 0;

    for (part = 0; part < 4; part++) {
        unsigned int v = 0, nd = 0;

        if (part) {
            if (i >= len || s[i] != '.')
                return -1;
            i++;
        }
        for (; i < len && nd < 3 && s[i] >= '0' && s[i] <= '9'; i++, nd++)
            v = v * 10 + (unsigned int)(s[i] - '0');
        if (!nd || v > 255)
            return -1;
        ip |= (uint32_t)v << (8 * part);
    }
    if (i != len || (ip & 255) == 0 || (ip & 255) >= 224)
        return -1;
    *out = ip;
    return 0;
}

static void bad_value(const char *key)
{
    cprintf("probe: bad %s value\n", key);
    probe_exit(PROBE_EXIT_BAD_ARG);
}

bool net_parse_args(const char *cmdline, struct net_args *a)
{
    const char *val, *v2;
    size_t len;

    memset(a, 0, sizeof(*a));
    a->n = NET_DEFAULT_N;
    a->size = NET_DEFAULT_SIZE;
    a->secs = NET_DEFAULT_SECS;
    a->ip = NET_DEFAULT_IP;
    a->peer = NET_DEFAULT_PEER;
    if ((val = cmdline_get(cmdline, "net", &len)) && parse_workloads(val, len, a))
        bad_value("net");
    if (cmdline_get_uint(cmdline, "netn", NET_MAX_N, &a->n) < 0 || a->n == 0)
        bad_value("netn");
    if (cmdline_get_uint(cmdline, "netsize", NET_MAX_SIZE, &a->size) < 0 || a->size == 0)
        bad_value("netsize");
    if (cmdline_get_uint(cmdline, "netsecs", NET_MAX_SECS, &a->secs) < 0 || a->secs == 0)
        bad_value("netsecs");
    if ((v2 = cmdline_get(cmdline, "netip", &len)) && parse_ip4(v2, len, &a->ip))
        bad_value("netip");
    if ((v2 = cmdline_get(cmdline, "netpeer", &len)) && parse_ip4(v2, len, &a->peer))
        bad_value("netpeer");
    return val != NULL;
}

int net_run(struct pci_dev *d, const struct net_args *a, enum virtio_irq_mode want,
            const char **mode)
{
    struct virtio_pci *vp;
    const char *src;
    unsigned long irqs, size = a->size;
    unsigned int i;
    int rc = 0;

    *mode = "none";
    memset(&S, 0, sizeof(S));
    S.ip = a->ip;
    S.peer = a->peer;
    if ((rc = vnet_start(d, want, &S.info)))
        return rc;
    vp = vnet_dev();
    *mode = virtio_irq_mode_name(vp->mode);
    S.hz = lab_tsc_hz(&src);
    cprintf("probe: net tsc %lu MHz (%s)\n", (unsigned long)(S.hz / 1000000), src);
    cprintf("probe: net ip " IP_FMT " peer " IP_FMT "\n", IP_ARGS(MY_IP), IP_ARGS(PEER_IP));
    if (S.info.mtu >= IP_HLEN + UDP_HLEN && size > S.info.mtu - IP_HLEN - UDP_HLEN + 0ul) {
        size = S.info.mtu - IP_HLEN - UDP_HLEN;     /* the device's MTU is binding */
        cprintf("probe: netsize clamped to %lu (mtu)\n", size);
    }

    irq_register(IRQ_VEC_WATCHDOG, 0, 0, IRQ_EDGE, IRQ_F_HIDE_IDLE, "lapic timer (watchdog)");
    lapic_timer_start(IRQ_VEC_WATCHDOG, WATCHDOG_TICKS);
    irq_enable();
    for (i = 0; i < a->nwl && !rc; i++) {
        switch (a->wl[i]) {
        case NET_WL_PING:
        case NET_WL_UDP:
            rc = run_echo(a->wl[i] == NET_WL_UDP, a->n, size);
            break;
        case NET_WL_SERVE:
        case NET_WL_RX:
            rc = run_listen(a->wl[i] == NET_WL_RX, a->secs);
            break;
        case NET_WL_TX:
            rc = run_tx(a->n, size);
            break;
        }
    }
    lapic_timer_stop();

    irqs = vp->vq[0].irqs;
    if (vp->mode == VIRTIO_IRQ_MSIX)
        irqs += vp->vq[1].irqs;     /* else one interrupt signals both queues */
    cprintf("probe: net %s rx=%lu tx=%lu bad=%u arp_replies=%u echo_replies=%u tx_drop=%u "
            "udp_echoes=%u\n",
            d->name, (unsigned long)vnet_counters()->rx_frames,
            (unsigned long)vnet_counters()->tx_frames, S.bad, S.arp_replies, S.served,
            S.tx_drop, S.udp_served);
    cprintf("probe: virtio %s queue_irqs=%lu config_irqs=%u isr_empty=%u\n", d->name, irqs,
            vp->config_irqs, vp->isr_empty);
    if (!rc && irqs == 0 && (vnet_counters()->rx_frames || vnet_counters()->tx_frames)) {
        console_puts("probe: net no queue interrupt\n");
        rc = PROBE_EXIT_IRQ_CHECK;
    }
    return rc;
}
