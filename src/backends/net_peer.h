/* Built-in peer, protocol part: a guest frame -> the peer's answer (ARP reply, ICMP echo reply, UDP echo), and source frames. */
#ifndef MSIVM_BACKENDS_NET_PEER_H
#define MSIVM_BACKENDS_NET_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the peer knows of the guest: learnt from the frames it sends. */
struct peer_addrs {
	uint8_t guest_mac[6];
	uint32_t guest_ip;         /* host order */
	bool mac_known, ip_known;
};

enum peer_verdict {
	PEER_ARP,                  /* an ARP request for 10.0.2.2: answered */
	PEER_ICMP,                 /* an ICMP echo request to 10.0.2.2: answered */
	PEER_UDP,                  /* a UDP datagram to 10.0.2.2:7: echoed */
	PEER_IGNORED,              /* anything else, or malformed */
};

/* Looks at the guest frame [f, f + len). If the peer answers it, writes the
 * answer (at most NET_PEER_FRAME_MAX bytes) to `out` and its length to
 * *out_len. Learns the guest's MAC and IPv4 address on the way. IPv4 must be
 * unfragmented with a correct header checksum; ICMP/UDP checksums of the
 * request are not checked, those of the answer are computed. */
enum peer_verdict peer_answer(struct peer_addrs *a, const uint8_t *f, size_t len, uint8_t *out,
			      size_t *out_len);

/* Writes a source frame of `size` bytes (NET_PEER_SIZE_MIN..MAX): UDP from
 * 10.0.2.2:9 to the guest (learnt, else broadcast MAC and 10.0.2.15) port 9;
 * payload: sequence number and `ns` as big-endian u64, then bytes
 * (seq + i) & 0xff; checksums set. */
void peer_source_frame(const struct peer_addrs *a, uint8_t *out, uint32_t size, uint64_t seq,
		       uint64_t ns);

/* The Internet checksum (RFC 1071) of [p, p + len), folded into `sum` (a
 * partial 32-bit sum, 0 to start). Returns the complemented 16-bit value
 * in network byte order as it is stored in a header. */
uint16_t peer_csum(const void *p, size_t len, uint32_t sum);

#endif
