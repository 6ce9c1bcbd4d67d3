/* virtio-net as a device type: its options (backends, MAC, queues, MTU, the peer), backend and device from its spec, counted (with the backend's own counters) for --stats. */
#include "devices/device_type.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tap, num_queues are cloud-hypervisor's spellings (tap=NAME: backend=tap,ifname=NAME). */
enum { K_BACKEND, K_TAP, K_IFNAME, K_PEER, K_RATE, K_SIZE, K_MAC, K_QUEUES, K_NUM_QUEUES, K_MTU,
       K_PATH, K_ID };

static const struct device_key net_keys[] = {
	{ "path", DEVICE_KEY_STRING, K_PATH },
	{ "backend", DEVICE_KEY_STRING, K_BACKEND },
	{ "tap", DEVICE_KEY_STRING, K_TAP },
	{ "ifname", DEVICE_KEY_STRING, K_IFNAME },
	{ "peer", DEVICE_KEY_STRING, K_PEER },
	{ "rate", DEVICE_KEY_UINT, K_RATE },
	{ "size", DEVICE_KEY_UINT, K_SIZE },
	{ "mac", DEVICE_KEY_STRING, K_MAC },
	{ "queues", DEVICE_KEY_UINT, K_QUEUES },
	{ "num_queues", DEVICE_KEY_UINT, K_NUM_QUEUES },
	{ "mtu", DEVICE_KEY_UINT, K_MTU },
	{ "id", DEVICE_KEY_STRING, K_ID },
	{ NULL, 0, 0 },
};

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

static void net_spec_init(struct vm_device_spec *d)
{
	d->net = (struct virtio_net_opts){ .queues = 1, .be = { .nqueues = 1, .rate = 1000,
		.size = 1024, .peer_mode = NET_PEER_RESPONDER } };
}

static int net_set(struct device_opts *o, const struct device_key *k, const char *val,
		   struct error *e)
{
	struct virtio_net_opts *n = &o->spec->net;
	uint64_t v = 0;
	unsigned w = 0;
	int ret = 0;
	switch (k->id) {
	case K_BACKEND:
		ret = device_opt_word(o, "backend", val, net_be_kind_names, NET_BE_NKINDS,
				      "tap, vhost, peer or socket", &w, e);
		n->be.kind = (enum net_be_kind)w;
		if (!ret && (o->seen & DEVICE_SEEN(K_TAP)) && !tap_like(n->be.kind))
			return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "tap=NAME means backend=tap "
						 "(or vhost)");
		return ret;
	case K_TAP:
		if ((o->seen & DEVICE_SEEN(K_BACKEND)) && !tap_like(n->be.kind))
			return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "tap=NAME means backend=tap "
						 "(or vhost)");
		if (!(o->seen & DEVICE_SEEN(K_BACKEND)))
			n->be.kind = NET_BE_TAP;
		o->seen |= DEVICE_SEEN(K_BACKEND) | DEVICE_SEEN(K_IFNAME);
		/* fall through */
	case K_IFNAME:
		if (!val[0] || strlen(val) >= NET_IFNAME_MAX || strpbrk(val, "/: \t"))
			return device_opt_refuse(o, DEVICE_MSG_KEY, e, "bad ifname '%.100s': 1 to 15 "
						 "characters, no '/', ':' or blanks", val);
		snprintf(n->be.ifname, sizeof(n->be.ifname), "%s", val);
		return 0;
	case K_ID:
		if (!val[0] || strlen(val) >= sizeof(n->id))
			return device_opt_refuse(o, DEVICE_MSG_KEY, e, "bad id '%.100s': 1 to %zu "
						 "characters", val, sizeof(n->id) - 1);
		snprintf(n->id, sizeof(n->id), "%s", val);
		return 0;
	case K_MAC:
		if (parse_mac(val, n->mac))
			return device_opt_refuse(o, DEVICE_MSG_KEY, e, "bad mac '%.100s': use a unicast "
						 "address such as 52:54:00:12:34:56", val);
		n->mac_set = true;
		return 0;
	case K_QUEUES:
	case K_NUM_QUEUES:
		ret = device_opt_uint(o, k, val, 1, VIRTIO_NET_MAX_PAIRS, "1 to 7 queue pairs", &v, e);
		n->queues = (uint16_t)v;
		return ret;
	case K_MTU:
		ret = device_opt_uint(o, k, val, VIRTIO_NET_MTU_MIN, VIRTIO_NET_MTU_MAX, "68 to 65535",
				      &v, e);
		n->mtu = (uint16_t)v;
		return ret;
	case K_PEER:
		ret = device_opt_word(o, "peer mode", val, net_peer_mode_names, NET_PEER_NMODES,
				      "responder, sink or source", &w, e);
		n->be.peer_mode = (enum net_peer_mode)w;
		return ret;
	case K_RATE:
		ret = device_opt_uint(o, k, val, 1, NET_PEER_RATE_MAX,
				      "1 to 10000000 frames per second", &v, e);
		n->be.rate = (uint32_t)v;
		return ret;
	case K_SIZE:
		ret = device_opt_uint(o, k, val, NET_PEER_SIZE_MIN, NET_PEER_SIZE_MAX,
				      "60 to 1514 bytes", &v, e);
		n->be.size = (uint32_t)v;
		return ret;
	default: /* K_PATH */
		if (!val[0] || strlen(val) >= NET_PATH_MAX)
			return device_opt_refuse(o, DEVICE_MSG_KEY, e, "bad path '%.100s': 1 to 99 "
						 "characters", val);
		snprintf(n->be.path, sizeof(n->be.path), "%s", val);
		return 0;
	}
}

static int net_check(struct device_opts *o, struct error *e)
{
	const struct vm_device_spec *d = o->spec;
	struct virtio_net_opts *n = &o->spec->net;
	enum net_be_kind k = n->be.kind;
	uint32_t s = o->seen;
	if (!(s & DEVICE_SEEN(K_BACKEND)))
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "backend=tap, backend=vhost, "
					 "backend=peer or backend=socket is required");
	if ((s & DEVICE_SEEN(K_IFNAME)) && !tap_like(k))
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "ifname= is for backend=tap and "
					 "backend=vhost");
	if (k == NET_BE_VHOST && n->queues != 1)
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "backend=vhost drives one queue "
					 "pair: drop queues=");
	/* coalesce= is off for a NIC unless given */
	if (k == NET_BE_VHOST && (d->irq.poll_us || rate_limit_set(&d->limit) ||
				  (d->rx_limit_own && rate_limit_set(&d->rx_limit)) ||
				  d->irq.coalesce_us))
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "poll=, coalesce=, bps= and ops= "
					 "need msivm on the data path; backend=vhost leaves it to "
					 "the kernel");
	if (!!(s & DEVICE_SEEN(K_PATH)) != (k == NET_BE_SOCKET))
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "%s", (s & DEVICE_SEEN(K_PATH))
					 ? "path= is for backend=socket" : "backend=socket needs path=P");
	bool source_opt = s & (DEVICE_SEEN(K_RATE) | DEVICE_SEEN(K_SIZE));
	if (((s & DEVICE_SEEN(K_PEER)) || source_opt) && k != NET_BE_PEER)
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "peer=, rate= and size= are for "
					 "backend=peer");
	if (source_opt && n->be.peer_mode != NET_PEER_SOURCE)
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "rate= and size= need peer=source");
	uint32_t mtu = n->mtu ? n->mtu : VIRTIO_NET_MTU_DEFAULT;
	if (n->be.peer_mode == NET_PEER_SOURCE && n->be.size > mtu + 14)
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "size= is larger than the MTU allows "
					 "(mtu + 14 bytes)");
	n->be.nqueues = tap_like(k) ? n->queues : 1;
	return 0;
}

static const char *net_spec_print(const struct vm_device_spec *d, json_t *o)
{
	const struct virtio_net_opts *n = &d->net;
	const struct net_open_cfg *be = &n->be;
	json_object_set_new(o, "backend", json_string(net_be_kind_names[be->kind]));
	if (tap_like(be->kind) &&
	    json_object_set_new(o, "ifname", be->ifname[0] ? json_string(be->ifname) : json_null()))
		return "ifname";
	if (be->kind == NET_BE_SOCKET && json_object_set_new(o, "path", json_string(be->path)))
		return "path";
	if (be->kind == NET_BE_PEER)
		json_object_set_new(o, "peer", json_string(net_peer_mode_names[be->peer_mode]));
	if (be->kind == NET_BE_PEER && be->peer_mode == NET_PEER_SOURCE) {
		json_object_set_new(o, "rate", json_integer(be->rate));
		json_object_set_new(o, "size", json_integer(be->size));
	}
	char mac[18];
	snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", n->mac[0], n->mac[1], n->mac[2],
		 n->mac[3], n->mac[4], n->mac[5]);
	json_object_set_new(o, "mac", n->mac_set ? json_string(mac) : json_null());
	json_object_set_new(o, "queues", json_integer(n->queues));
	json_object_set_new(o, "mtu", n->mtu ? json_integer(n->mtu) : json_null());
	if (json_object_set_new(o, "id", n->id[0] ? json_string(n->id) : json_null()))
		return "id";
	return NULL;
}

static void *net_create(const struct device_env *env, const struct vm_device_spec *spec,
			unsigned index, struct virtio_pci **pci, struct error *err)
{
	const struct virtio_net_opts *o = &spec->net;
	struct net_backend *be;
	if (net_backend_open(&be, &o->be, err))
		return NULL;
	struct virtio_net *n = calloc(1, sizeof(*n));
	if (!n) {
		net_backend_close(be);
		error_set(err, -ENOMEM, "out of memory for virtio-net");
		return NULL;
	}
	int ret = virtio_net_init(n, index, o, be, &spec->irq, env->mem, env->vm_fd, env->routes,
				  env->loop, env->mmio, env->window, err);
	if (!ret)
		ret = virtio_net_set_limit(n, &spec->limit, spec->rx_limit_own ? &spec->rx_limit
										: &spec->limit, env->loop, err);
	if (ret) {
		virtio_net_destroy(n); /* closes the backend */
		free(n);
		return NULL;
	}
	*pci = &n->pci;
	return n;
}

static int net_update_limit(void *dev, const struct vm_device_spec *spec, struct error *err)
{
	struct virtio_net *n = dev;
	if (n->vhost)
		return error_set(err, -EOPNOTSUPP, "%s: backend=vhost leaves the data path to the "
				 "kernel: no rate limit", n->name);
	return virtio_net_update_limit(n, &spec->limit, spec->rx_limit_own ? &spec->rx_limit
									  : &spec->limit, err);
}

static void net_destroy(void *dev)
{
	virtio_net_destroy(dev);
	free(dev);
}

static void net_print(const void *dev, FILE *out)
{
	const struct virtio_net *n = dev;
	const struct virtio_net_stats *ns = &n->stats;
	const struct vpci_irq_stats *s = &n->pci.stats;
	fprintf(out, "  %s: %s; tx %" PRIu64 " frames %" PRIu64 " bytes, rx %" PRIu64 " frames %"
		PRIu64 " bytes; drops", n->name, n->be ? n->be->desc : "-", ns->tx_frames,
		ns->tx_bytes, ns->rx_frames, ns->rx_bytes);
	for (unsigned i = 0; i < VNET_NDROPS; i++)
		fprintf(out, "%s %s %" PRIu64, i ? "," : "", virtio_net_drop_name(i), ns->drops[i]);
	fprintf(out, "; %" PRIu64 " rx stalls, %" PRIu64 " tx headers with unknown flags, control %"
		PRIu64 " ok %" PRIu64 " err; %" PRIu64
		" kicks (%" PRIu64 " by MMIO exit), %" PRIu64 " ISR reads, %" PRIu64
		" interrupts suppressed by the driver\n", ns->rx_stalls, ns->tx_flags_ignored,
		ns->ctrl_ok, ns->ctrl_err, s->kicks, s->kicks_mmio, s->isr_reads, s->suppressed);
	struct net_be_stat bs[NET_BE_MAX_STATS];
	unsigned nb = n->be ? net_backend_stats(n->be, bs, NET_BE_MAX_STATS) : 0;
	if (nb) {
		fprintf(out, "  %s backend:", n->name);
		for (unsigned i = 0; i < nb; i++)
			fprintf(out, "%s %s %" PRIu64, i ? "," : "", bs[i].name, bs[i].value);
		fprintf(out, "\n");
	}
}

static void net_json(const void *dev, json_t *dj)
{
	const struct virtio_net *n = dev;
	const struct virtio_net_stats *ns = &n->stats;
	json_t *drops = json_object(), *bej = json_object();
	json_object_set_new(dj, "backend", json_string(n->be ? n->be->kind : "-"));
	json_object_set_new(dj, "attached", json_string(n->be ? n->be->desc : "-"));
	json_object_set_new(dj, "queue_pairs", json_integer(n->max_pairs));
	json_object_set_new(dj, "tx_frames", json_integer((json_int_t)ns->tx_frames));
	json_object_set_new(dj, "tx_bytes", json_integer((json_int_t)ns->tx_bytes));
	json_object_set_new(dj, "rx_frames", json_integer((json_int_t)ns->rx_frames));
	json_object_set_new(dj, "rx_bytes", json_integer((json_int_t)ns->rx_bytes));
	json_object_set_new(dj, "bytes", json_integer((json_int_t)(ns->tx_bytes + ns->rx_bytes)));
	for (unsigned i = 0; i < VNET_NDROPS; i++)
		json_object_set_new(drops, virtio_net_drop_name(i), json_integer((json_int_t)ns->drops[i]));
	json_object_set_new(dj, "drops", drops);
	json_object_set_new(dj, "rx_stalls", json_integer((json_int_t)ns->rx_stalls));
	json_object_set_new(dj, "ctrl_ok", json_integer((json_int_t)ns->ctrl_ok));
	json_object_set_new(dj, "ctrl_err", json_integer((json_int_t)ns->ctrl_err));
	json_object_set_new(dj, "tx_flags_ignored", json_integer((json_int_t)ns->tx_flags_ignored));
	struct net_be_stat bs[NET_BE_MAX_STATS];
	unsigned nb = n->be ? net_backend_stats(n->be, bs, NET_BE_MAX_STATS) : 0;
	for (unsigned i = 0; i < nb; i++)
		json_object_set_new(bej, bs[i].name, json_integer((json_int_t)bs[i].value));
	json_object_set_new(dj, "backend_stats", bej);
}

const struct device_type net_device_type = {
	.name = "net",
	.usage = "add a virtio-net NIC; OPTS: backend=tap|vhost|peer|socket and\n"
		 "                     optionally mac=52:54:00:12:34:56 (default 52:54:00:12:34:<n>),\n"
		 "                     queues=N (queue pairs, 1-7; or num_queues=N), mtu=N (68-65535,\n"
		 "                     default: the tap's, else 1500), id=NAME (a name a snapshot\n"
		 "                     keeps: Firecracker's iface_id), bps=, ops= (each\n"
		 "                     direction; rx-bps=, rx-ops= (or off) for received frames\n"
		 "                     apart) and every device's keys (below). tap: ifname=NAME\n"
		 "                     (an existing tap, or created: needs CAP_NET_ADMIN; tap=NAME is\n"
		 "                     backend=tap,ifname=NAME). vhost: a tap as for tap whose frames\n"
		 "                     the kernel's vhost-net moves (/dev/vhost-net; one queue pair,\n"
		 "                     no poll=, coalesce=, bps= or ops=). peer: built in, no host\n"
		 "                     network; answers ARP and ping for 10.0.2.2 and echoes UDP\n"
		 "                     port 7; peer=responder|sink|source, rate=N (frames/s) and\n"
		 "                     size=S (bytes, 60-1514) for source. socket: path=P joins two\n"
		 "                     msivm started with the same P (unix datagrams; the first\n"
		 "                     binds P.0 and sends to P.1, the second the reverse)\n",
	.keys = net_keys,
	.rate_limit = true,
	.spec_init = net_spec_init,
	.spec_set = net_set,
	.spec_check = net_check,
	.spec_print = net_spec_print,
	.create = net_create,
	.destroy = net_destroy,
	.update_limit = net_update_limit,
	.print_stats = net_print,
	.stats_json = net_json,
};
