/* virtio-net receive filter: CTRL_RX (promiscuous, all-multicast) and CTRL_MAC (table, address) commands -> which destinations reach the driver. */
#include <endian.h>
#include <string.h>

#include "devices/virtio_net_int.h"
#include "util/log.h"

/*
 * After a reset the device is promiscuous, as QEMU's is: a driver that never
 * sends CTRL_RX commands sees every frame. Linux sends PROMISC, ALLMULTI and
 * a MAC TABLE_SET whenever its receive mode changes. Broadcast is always
 * accepted; a table longer than VIRTIO_NET_MAC_TABLE_MAX entries makes its
 * class (unicast or multicast) accepted whole instead of failing the command.
 */

void vnet_filter_reset(struct vnet_filter *f)
{
	memset(f, 0, sizeof(*f));
	f->promisc = true;
}

static bool in_table(const uint8_t (*t)[6], uint32_t n, const uint8_t *mac)
{
	for (uint32_t i = 0; i < n; i++)
		if (!memcmp(t[i], mac, 6))
			return true;
	return false;
}

bool vnet_filter_accepts(const struct virtio_net *n, const uint8_t *dst)
{
	const struct vnet_filter *f = &n->filter;
	if (!vnet_has(n, VIRTIO_NET_F_CTRL_RX) || f->promisc)
		return true;
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	if (!memcmp(dst, bcast, 6))
		return true;
	if (dst[0] & 1)
		return f->allmulti || f->multi_overflow || in_table(f->multi, f->n_multi, dst);
	return !memcmp(dst, n->mac, 6) || f->uni_overflow || in_table(f->uni, f->n_uni, dst);
}

/* One table of TABLE_SET at data[*off]: le32 entries, then 6 bytes each. */
static bool read_table(const uint8_t *data, uint32_t len, uint32_t *off, uint8_t (*t)[6],
		       uint32_t *n, bool *overflow)
{
	uint32_t entries;
	if (len - *off < 4)
		return false;
	memcpy(&entries, data + *off, 4);
	entries = le32toh(entries);
	*off += 4;
	if (entries > (len - *off) / 6)
		return false;
	*overflow = entries > VIRTIO_NET_MAC_TABLE_MAX;
	*n = *overflow ? 0 : entries;
	memcpy(t, data + *off, (size_t)*n * 6);
	*off += entries * 6;
	return true;
}

uint8_t vnet_filter_command(struct virtio_net *n, uint8_t cls, uint8_t cmd, const uint8_t *data,
			    uint32_t len)
{
	struct vnet_filter *f = &n->filter;
	if (cls == VIRTIO_NET_CTRL_RX) {
		if (!vnet_has(n, VIRTIO_NET_F_CTRL_RX) || len != 1 ||
		    (cmd != VIRTIO_NET_CTRL_RX_PROMISC && cmd != VIRTIO_NET_CTRL_RX_ALLMULTI))
			goto bad;
		bool on = data[0] != 0;
		if (cmd == VIRTIO_NET_CTRL_RX_PROMISC)
			f->promisc = on;
		else
			f->allmulti = on;
		return VIRTIO_NET_OK;
	}
	if (cls == VIRTIO_NET_CTRL_MAC && cmd == VIRTIO_NET_CTRL_MAC_ADDR_SET) {
		if (!vnet_has(n, VIRTIO_NET_F_CTRL_MAC_ADDR) || len != 6 || (data[0] & 1))
			goto bad; /* a multicast address is no station address */
		if (memcmp(n->mac, data, 6))
			n->pci.config_generation++; /* the config's mac changed (4.1.4.3.1) */
		memcpy(n->mac, data, 6);
		return VIRTIO_NET_OK;
	}
	if (cls == VIRTIO_NET_CTRL_MAC && cmd == VIRTIO_NET_CTRL_MAC_TABLE_SET) {
		struct vnet_filter nf = *f; /* all or nothing */
		uint32_t off = 0;
		if (!vnet_has(n, VIRTIO_NET_F_CTRL_RX) ||
		    !read_table(data, len, &off, nf.uni, &nf.n_uni, &nf.uni_overflow) ||
		    !read_table(data, len, &off, nf.multi, &nf.n_multi, &nf.multi_overflow) ||
		    off != len)
			goto bad;
		*f = nf;
		return VIRTIO_NET_OK;
	}
bad:
	log_ratelimited(&n->rl, LOG_WARN, "%s: control class %u command %u with %u data bytes "
			"refused (not negotiated or malformed)", n->name, cls, cmd, len);
	return VIRTIO_NET_ERR;
}
