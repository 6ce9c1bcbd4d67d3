/* Config net: the keys of --net (backends, MAC, queues, MTU, the peer's source) and their combinations. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config/config_dev_keys.h"

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

/* A backend whose host end is a tap (ifname=, tap=). */
static bool tap_like(enum net_be_kind k) { return k == NET_BE_TAP || k == NET_BE_VHOST; }

int cdev_set_net(struct config_dev *p, const struct dev_key *k, const char *val,
		 struct error *e)
{
	struct virtio_net_opts *n = &p->d->net;
	uint64_t v = 0;
	int ret = 0;
	switch (k->id) {
	case K_BACKEND:
		ret = cdev_enum(p, net_be_kind_parse(val, &n->be.kind), CONFIG_E_BACKEND, "backend",
				val, "tap, vhost, peer or socket", e);
		if (!ret && (p->seen & SEEN(K_TAP)) && !tap_like(n->be.kind))
			return cdev_err(p, true, e, "tap=NAME means backend=tap (or vhost)");
		return ret;
	case K_TAP:
		if ((p->seen & SEEN(K_BACKEND)) && !tap_like(n->be.kind))
			return cdev_err(p, true, e, "tap=NAME means backend=tap (or vhost)");
		if (!(p->seen & SEEN(K_BACKEND)))
			n->be.kind = NET_BE_TAP;
		p->seen |= SEEN(K_BACKEND) | SEEN(K_IFNAME);
		/* fall through */
	case K_IFNAME:
		if (!val[0] || strlen(val) >= NET_IFNAME_MAX || strpbrk(val, "/: \t"))
			return cdev_err(p, false, e, "bad ifname '%.100s': 1 to 15 characters, no '/', "
					"':' or blanks", val);
		snprintf(n->be.ifname, sizeof(n->be.ifname), "%s", val);
		return 0;
	case K_MAC:
		if (parse_mac(val, n->mac))
			return cdev_err(p, false, e, "bad mac '%.100s': use a unicast address such as "
					"52:54:00:12:34:56", val);
		n->mac_set = true;
		return 0;
	case K_QUEUES:
	case K_NUM_QUEUES:
		ret = cdev_uint(p, k, val, 1, VIRTIO_NET_MAX_PAIRS, "1 to 7 queue pairs", &v, e);
		n->queues = (uint16_t)v;
		return ret;
	case K_MTU:
		ret = cdev_uint(p, k, val, VIRTIO_NET_MTU_MIN, VIRTIO_NET_MTU_MAX, "68 to 65535", &v, e);
		n->mtu = (uint16_t)v;
		return ret;
	case K_PEER:
		return cdev_enum(p, net_peer_mode_parse(val, &n->be.peer_mode), CONFIG_E_PEER,
				 "peer mode", val, "responder, sink or source", e);
	case K_RATE:
		ret = cdev_uint(p, k, val, 1, NET_PEER_RATE_MAX, "1 to 10000000 frames per second",
				&v, e);
		n->be.rate = (uint32_t)v;
		return ret;
	case K_SIZE:
		ret = cdev_uint(p, k, val, NET_PEER_SIZE_MIN, NET_PEER_SIZE_MAX, "60 to 1514 bytes",
				&v, e);
		n->be.size = (uint32_t)v;
		return ret;
	default: /* K_PATH */
		if (!val[0] || strlen(val) >= NET_PATH_MAX)
			return cdev_err(p, false, e, "bad path '%.100s': 1 to 99 characters", val);
		snprintf(n->be.path, sizeof(n->be.path), "%s", val);
		return 0;
	}
}

int cdev_end_net(struct config_dev *p, struct error *e)
{
	struct virtio_net_opts *n = &p->d->net;
	enum net_be_kind k = n->be.kind;
	uint32_t s = p->seen;
	if (!(s & SEEN(K_BACKEND)))
		return cdev_err(p, true, e, "backend=tap, backend=vhost, backend=peer or "
				"backend=socket is required");
	if ((s & SEEN(K_IFNAME)) && !tap_like(k))
		return cdev_err(p, true, e, "ifname= is for backend=tap and backend=vhost");
	if (k == NET_BE_VHOST && n->queues != 1)
		return cdev_err(p, true, e, "backend=vhost drives one queue pair: drop queues=");
	if (k == NET_BE_VHOST &&
	    (p->d->irq.poll_us || p->d->limit.bytes_per_s || p->d->limit.ops_per_s ||
	     ((s & SEEN(K_COALESCE)) && p->d->irq.coalesce_us)))
		return cdev_err(p, true, e, "poll=, coalesce=, bps= and ops= need msivm on the data "
				"path; backend=vhost leaves it to the kernel");
	if (!!(s & SEEN(K_PATH)) != (k == NET_BE_SOCKET))
		return cdev_err(p, true, e, (s & SEEN(K_PATH)) ? "path= is for backend=socket"
				: "backend=socket needs path=P");
	bool source_opt = s & (SEEN(K_RATE) | SEEN(K_SIZE));
	if (((s & SEEN(K_PEER)) || source_opt) && k != NET_BE_PEER)
		return cdev_err(p, true, e, "peer=, rate= and size= are for backend=peer");
	if (source_opt && n->be.peer_mode != NET_PEER_SOURCE)
		return cdev_err(p, true, e, "rate= and size= need peer=source");
	uint32_t mtu = n->mtu ? n->mtu : VIRTIO_NET_MTU_DEFAULT;
	if (n->be.peer_mode == NET_PEER_SOURCE && n->be.size > mtu + 14)
		return cdev_err(p, true, e, "size= is larger than the MTU allows (mtu + 14 bytes)");
	n->be.nqueues = tap_like(k) ? n->queues : 1;
	return 0;
}
