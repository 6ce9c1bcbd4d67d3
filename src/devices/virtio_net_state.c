/* virtio-net snapshot state: what the control queue set (MAC, offloads, queue pairs, RX filter) <-> JSON; vhost refused. */
#include "devices/virtio_net_int.h"

#include <errno.h>
#include <string.h>

#include "util/hex.h"

static json_t *hex_of(const void *p, size_t len)
{
	char text[2 * 6 * VIRTIO_NET_MAC_TABLE_MAX + 1];
	hex_encode(p, len, text);
	return json_string(text);
}

json_t *vnet_state_save(void *opaque, struct error *err)
{
	struct virtio_net *n = opaque;
	if (n->vhost) {
		error_set(err, -EOPNOTSUPP, "%s: backend=vhost cannot be saved yet (the kernel owns "
			  "its rings)", n->name);
		return NULL;
	}
	const struct vnet_filter *f = &n->filter;
	return json_pack("{s:o,s:I,s:b,s:i,s:b,s:b,s:b,s:b,s:o,s:o}", "mac", hex_of(n->mac, 6),
			 "guest_offloads", (json_int_t)n->guest_offloads, "guest_offloads_set",
			 n->guest_offloads_set, "curr_pairs", n->curr_pairs, "promisc", f->promisc,
			 "allmulti", f->allmulti, "uni_overflow", f->uni_overflow, "multi_overflow",
			 f->multi_overflow, "uni", hex_of(f->uni, 6 * (size_t)f->n_uni), "multi",
			 hex_of(f->multi, 6 * (size_t)f->n_multi));
}

/* A MAC table of up to VIRTIO_NET_MAC_TABLE_MAX entries, in hex. */
static int table_load(const json_t *v, uint8_t (*tab)[6], uint32_t *n)
{
	size_t len = json_string_length(v);
	if (!json_is_string(v) || len % 12 || len / 12 > VIRTIO_NET_MAC_TABLE_MAX)
		return -EINVAL;
	*n = (uint32_t)(len / 12);
	return hex_decode(json_string_value(v), len, tab, len / 2);
}

int vnet_state_load(void *opaque, const json_t *o, struct error *err)
{
	struct virtio_net *n = opaque;
	json_int_t offl, pairs;
	int set, promisc, allmulti, uo, mo;
	json_t *mac, *uni, *multi;
	struct vnet_filter f = { 0 };
	uint8_t m[6];
	if (json_unpack((json_t *)o, "{s:o,s:I,s:b,s:I,s:b,s:b,s:b,s:b,s:o,s:o}", "mac", &mac,
			"guest_offloads", &offl, "guest_offloads_set", &set, "curr_pairs", &pairs,
			"promisc", &promisc, "allmulti", &allmulti, "uni_overflow", &uo,
			"multi_overflow", &mo, "uni", &uni, "multi", &multi) ||
	    !json_is_string(mac) || hex_decode(json_string_value(mac), json_string_length(mac), m, 6) ||
	    pairs < 1 || pairs > n->max_pairs || offl < 0 ||
	    table_load(uni, f.uni, &f.n_uni) || table_load(multi, f.multi, &f.n_multi))
		return error_set(err, -EINVAL, "%s: the saved MAC, offloads, queue pairs or filter "
				 "are invalid", n->name);
	memcpy(n->mac, m, 6);
	n->guest_offloads = (uint64_t)offl;
	n->guest_offloads_set = set;
	n->curr_pairs = (uint16_t)pairs;
	f.promisc = promisc;
	f.allmulti = allmulti;
	f.uni_overflow = uo;
	f.multi_overflow = mo;
	n->filter = f;
	vnet_rx_offloads_changed(n);
	return 0;
}
