/* virtio-net as a device type: backend and device from its spec, counted (with the backend's own counters) for --stats. */
#include "devices/device_type.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

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
		ret = virtio_net_set_limit(n, &spec->limit, env->loop, err);
	if (ret) {
		virtio_net_destroy(n); /* closes the backend */
		free(n);
		return NULL;
	}
	*pci = &n->pci;
	return n;
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
	.create = net_create,
	.destroy = net_destroy,
	.print_stats = net_print,
	.stats_json = net_json,
};
