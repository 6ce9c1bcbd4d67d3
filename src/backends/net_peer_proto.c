/* Built-in peer, protocol part: checks a guest frame byte by byte and builds ARP, ICMP echo and UDP echo answers and source frames. */
#include "backends/net_peer.h"

#include <string.h>

#include "backends/net_backend.h"

#define ETH_HLEN      14u
#define ETH_P_IP      0x0800u
#define ETH_P_ARP     0x0806u
#define ARP_LEN       28u
#define IP_HLEN       20u
#define IP_PROTO_ICMP 1u
#define IP_PROTO_UDP  17u
#define ICMP_HLEN     8u
#define UDP_HLEN      8u
#define ICMP_ECHO_REPLY   0u
#define ICMP_ECHO_REQUEST 8u
#define PEER_TTL      64u

static const uint8_t peer_mac[6] = NET_PEER_MAC;
static const uint8_t bcast_mac[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)(v >> 32)); put32(p + 4, (uint32_t)v); }

static uint32_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += get16(p + i);
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

uint16_t peer_csum(const void *p, size_t len, uint32_t sum)
{
	sum = sum16(p, len, sum);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Writes the checksum field at `field` (big-endian) of data already in place. */
static void set_csum(uint8_t *field, uint16_t c) { put16(field, c); }

static void eth_header(uint8_t *out, const uint8_t *dst, uint16_t type)
{
	memcpy(out, dst, 6);
	memcpy(out + 6, peer_mac, 6);
	put16(out + 12, type);
}

/* An IPv4 header without options from the peer to `dst`, `payload` bytes after it. */
static void ip_header(uint8_t *ip, uint32_t dst, uint8_t proto, uint16_t id, size_t payload)
{
	memset(ip, 0, IP_HLEN);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(IP_HLEN + payload));
	put16(ip + 4, id);
	ip[8] = PEER_TTL;
	ip[9] = proto;
	put32(ip + 12, NET_PEER_IP);
	put32(ip + 16, dst);
	set_csum(ip + 10, peer_csum(ip, IP_HLEN, 0));
}

/* UDP checksum with the IPv4 pseudo-header; 0 is sent as 0xffff. */
static uint16_t udp_csum(uint32_t src, uint32_t dst, const uint8_t *udp, size_t len)
{
	uint8_t pseudo[12];
	put32(pseudo, src);
	put32(pseudo + 4, dst);
	pseudo[8] = 0;
	pseudo[9] = IP_PROTO_UDP;
	put16(pseudo + 10, (uint16_t)len);
	uint16_t c = peer_csum(udp, len, sum16(pseudo, sizeof(pseudo), 0));
	return c ? c : 0xffff;
}

static enum peer_verdict arp(struct peer_addrs *a, const uint8_t *f, size_t len, uint8_t *out,
			     size_t *out_len)
{
	const uint8_t *p = f + ETH_HLEN;
	if (len < ETH_HLEN + ARP_LEN || get16(p) != 1 || get16(p + 2) != ETH_P_IP || p[4] != 6 ||
	    p[5] != 4 || get16(p + 6) != 1)
		return PEER_IGNORED;
	const uint8_t *sha = p + 8;
	uint32_t spa = get32(p + 14), tpa = get32(p + 24);
	if (!(sha[0] & 1)) {
		memcpy(a->guest_mac, sha, 6);
		a->mac_known = true;
		if (spa) {
			a->guest_ip = spa;
			a->ip_known = true;
		}
	}
	if (tpa != NET_PEER_IP || (sha[0] & 1))
		return PEER_IGNORED;
	eth_header(out, sha, ETH_P_ARP);
	uint8_t *r = out + ETH_HLEN;
	put16(r, 1);
	put16(r + 2, ETH_P_IP);
	r[4] = 6;
	r[5] = 4;
	put16(r + 6, 2);
	memcpy(r + 8, peer_mac, 6);
	put32(r + 14, NET_PEER_IP);
	memcpy(r + 18, sha, 6);
	put32(r + 24, spa);
	*out_len = ETH_HLEN + ARP_LEN;
	return PEER_ARP;
}

static enum peer_verdict icmp(const uint8_t *f, const uint8_t *ip, size_t ihl, size_t tot,
			      uint8_t *out, size_t *out_len)
{
	size_t n = tot - ihl;
	const uint8_t *m = ip + ihl;
	if (n < ICMP_HLEN || m[0] != ICMP_ECHO_REQUEST || m[1] != 0 ||
	    ETH_HLEN + IP_HLEN + n > NET_PEER_FRAME_MAX)
		return PEER_IGNORED;
	eth_header(out, f + 6, ETH_P_IP);
	ip_header(out + ETH_HLEN, get32(ip + 12), IP_PROTO_ICMP, get16(ip + 4), n);
	uint8_t *r = out + ETH_HLEN + IP_HLEN;
	memcpy(r, m, n);  /* id, sequence and payload as they came */
	r[0] = ICMP_ECHO_REPLY;
	r[1] = 0;
	put16(r + 2, 0);
	set_csum(r + 2, peer_csum(r, n, 0));
	*out_len = ETH_HLEN + IP_HLEN + n;
	return PEER_ICMP;
}

static enum peer_verdict udp(const uint8_t *f, const uint8_t *ip, size_t ihl, size_t tot,
			     uint8_t *out, size_t *out_len)
{
	const uint8_t *u = ip + ihl;
	if (tot - ihl < UDP_HLEN)
		return PEER_IGNORED;
	size_t n = get16(u + 4);
	if (n < UDP_HLEN || n > tot - ihl || get16(u + 2) != NET_PEER_ECHO_PORT ||
	    ETH_HLEN + IP_HLEN + n > NET_PEER_FRAME_MAX)
		return PEER_IGNORED;
	uint32_t guest = get32(ip + 12);
	eth_header(out, f + 6, ETH_P_IP);
	ip_header(out + ETH_HLEN, guest, IP_PROTO_UDP, get16(ip + 4), n);
	uint8_t *r = out + ETH_HLEN + IP_HLEN;
	memcpy(r, u, n);
	put16(r, NET_PEER_ECHO_PORT);
	put16(r + 2, get16(u));
	put16(r + 6, 0);
	set_csum(r + 6, udp_csum(NET_PEER_IP, guest, r, n));
	*out_len = ETH_HLEN + IP_HLEN + n;
	return PEER_UDP;
}

static enum peer_verdict ipv4(struct peer_addrs *a, const uint8_t *f, size_t len, uint8_t *out,
			      size_t *out_len)
{
	if (memcmp(f, peer_mac, 6) && memcmp(f, bcast_mac, 6))
		return PEER_IGNORED;
	if (len < ETH_HLEN + IP_HLEN)
		return PEER_IGNORED;
	const uint8_t *ip = f + ETH_HLEN;
	size_t ihl = (size_t)(ip[0] & 0xf) * 4, tot = get16(ip + 2);
	if ((ip[0] >> 4) != 4 || ihl < IP_HLEN || tot < ihl || tot > len - ETH_HLEN ||
	    peer_csum(ip, ihl, 0) != 0)
		return PEER_IGNORED;
	uint32_t src = get32(ip + 12), dst = get32(ip + 16);
	if (src && !(f[6] & 1)) {
		memcpy(a->guest_mac, f + 6, 6);
		a->guest_ip = src;
		a->mac_known = a->ip_known = true;
	}
	if (dst != NET_PEER_IP || (get16(ip + 6) & 0x3fff) || !src || (f[6] & 1))
		return PEER_IGNORED; /* not ours, a fragment, or no one to answer */
	if (ip[9] == IP_PROTO_ICMP)
		return icmp(f, ip, ihl, tot, out, out_len);
	if (ip[9] == IP_PROTO_UDP)
		return udp(f, ip, ihl, tot, out, out_len);
	return PEER_IGNORED;
}

enum peer_verdict peer_answer(struct peer_addrs *a, const uint8_t *f, size_t len, uint8_t *out,
			      size_t *out_len)
{
	if (len < ETH_HLEN)
		return PEER_IGNORED;
	switch (get16(f + 12)) {
	case ETH_P_ARP:
		return arp(a, f, len, out, out_len);
	case ETH_P_IP:
		return ipv4(a, f, len, out, out_len);
	default:
		return PEER_IGNORED;
	}
}

void peer_source_frame(const struct peer_addrs *a, uint8_t *out, uint32_t size, uint64_t seq,
		       uint64_t ns)
{
	uint32_t dst = a->ip_known ? a->guest_ip : NET_PEER_GUEST_IP;
	size_t n = size - ETH_HLEN - IP_HLEN;   /* UDP header and payload */
	eth_header(out, a->mac_known ? a->guest_mac : bcast_mac, ETH_P_IP);
	ip_header(out + ETH_HLEN, dst, IP_PROTO_UDP, (uint16_t)seq, n);
	uint8_t *u = out + ETH_HLEN + IP_HLEN;
	put16(u, NET_PEER_SOURCE_PORT);
	put16(u + 2, NET_PEER_SOURCE_PORT);
	put16(u + 4, (uint16_t)n);
	put16(u + 6, 0);
	uint8_t *d = u + UDP_HLEN;
	size_t dlen = n - UDP_HLEN;
	for (size_t i = 0; i < dlen; i++)
		d[i] = (uint8_t)(seq + i);
	if (dlen >= 16) {
		put64(d, seq);
		put64(d + 8, ns);
	}
	set_csum(u + 6, udp_csum(NET_PEER_IP, dst, u, n));
}
