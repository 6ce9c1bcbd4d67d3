/* virtio-vsock as a device type: its options (cid=, backend=unix with path=, or backend=vhost), the device from its spec, counted for --stats. */
#include "devices/device_type.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_CID, K_PATH, K_BACKEND };

static const struct device_key vsock_keys[] = {
	{ "cid", DEVICE_KEY_UINT, K_CID },
	{ "path", DEVICE_KEY_STRING, K_PATH },
	{ "backend", DEVICE_KEY_STRING, K_BACKEND },
	{ NULL, 0, 0 },
};

static const char *const backends[] = { "unix", "vhost" };

static int vsock_set(struct device_opts *o, const struct device_key *k, const char *val,
		     struct error *e)
{
	struct virtio_vsock_opts *v = &o->spec->vsock;
	unsigned w;
	switch (k->id) {
	case K_CID:
		return device_opt_uint(o, k, val, VSOCK_CID_MIN, VSOCK_CID_MAX, "3 to 4294967294",
				       &v->cid, e);
	case K_PATH:
		if (!val[0] || strlen(val) >= sizeof(v->path))
			return device_opt_refuse(o, DEVICE_MSG_KEY, e, "bad path '%.100s': a unix socket "
						 "path of 1 to %zu bytes", val, sizeof(v->path) - 1);
		snprintf(v->path, sizeof(v->path), "%s", val);
		return 0;
	default: { /* K_BACKEND */
		int r = device_opt_word(o, "backend", val, backends, 2, "unix or vhost", &w, e);
		if (r)
			return r;
		v->backend = w ? VSOCK_BE_VHOST : VSOCK_BE_UNIX;
		return 0;
	}
	}
}

static int vsock_check(struct device_opts *o, struct error *e)
{
	if (!(o->seen & DEVICE_SEEN(K_CID)))
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "cid=N (the guest's context id, 3 "
					 "or more) is required");
	bool path = o->seen & DEVICE_SEEN(K_PATH);
	if (o->spec->vsock.backend == VSOCK_BE_UNIX && !path)
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "path=P (the host's unix socket) is "
					 "required with backend=unix");
	if (o->spec->vsock.backend == VSOCK_BE_VHOST && path)
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "path= is for backend=unix: with "
					 "backend=vhost the host reaches the guest by AF_VSOCK at its cid");
	return 0;
}

static const char *vsock_spec_print(const struct vm_device_spec *d, json_t *o)
{
	json_object_set_new(o, "cid", json_integer((json_int_t)d->vsock.cid));
	if (d->vsock.backend == VSOCK_BE_VHOST) {
		json_object_set_new(o, "backend", json_string("vhost"));
		return NULL;
	}
	if (json_object_set_new(o, "path", json_string(d->vsock.path)))
		return "path";
	json_object_set_new(o, "backend", json_string("unix"));
	return NULL;
}

static void *vsock_create(const struct device_env *env, const struct vm_device_spec *spec,
			  unsigned index, struct virtio_pci **pci, struct error *err)
{
	struct virtio_vsock *v = calloc(1, sizeof(*v));
	if (!v) {
		error_set(err, -ENOMEM, "out of memory for virtio-vsock");
		return NULL;
	}
	if (virtio_vsock_init(v, index, &spec->vsock, &spec->irq, env->mem, env->vm_fd,
			      env->routes, env->loop, env->mmio, env->window, err)) {
		virtio_vsock_destroy(v);
		free(v);
		return NULL;
	}
	*pci = &v->pci;
	return v;
}

static void vsock_destroy(void *dev)
{
	virtio_vsock_destroy(dev);
	free(dev);
}

static void vsock_print(const void *dev, FILE *out)
{
	const struct virtio_vsock *v = dev;
	const struct virtio_vsock_stats *s = &v->stats;
	if (v->vhost) {
		fprintf(out, "  %s: cid %" PRIu64 ", vhost-vsock (the kernel moves the data); %" PRIu64
			" kicks (%" PRIu64 " by MMIO exit)\n", v->name, v->cid, v->pci.stats.kicks,
			v->pci.stats.kicks_mmio);
		return;
	}
	fprintf(out, "  %s: cid %" PRIu64 ", %s; connections %" PRIu64 " from the guest, %" PRIu64
		" from the host, %" PRIu64 " refused; %" PRIu64 " bytes to the host, %" PRIu64
		" to the guest; %" PRIu64 " bad packets, %" PRIu64 " resets sent, %" PRIu64
		" transport resets; %" PRIu64 " kicks (%" PRIu64 " by MMIO exit)\n", v->name, v->cid,
		v->path, s->conns_guest, s->conns_host, s->refused, s->bytes_to_host,
		s->bytes_to_guest, s->bad_packets, s->resets, v->transport_resets, v->pci.stats.kicks,
		v->pci.stats.kicks_mmio);
}

static void vsock_json(const void *dev, json_t *dj)
{
	const struct virtio_vsock *v = dev;
	const struct virtio_vsock_stats *s = &v->stats;
	json_object_set_new(dj, "cid", json_integer((json_int_t)v->cid));
	json_object_set_new(dj, "backend", json_string(v->vhost ? "vhost" : "unix"));
	if (v->vhost)
		return;
	json_object_set_new(dj, "connections_from_guest", json_integer((json_int_t)s->conns_guest));
	json_object_set_new(dj, "connections_from_host", json_integer((json_int_t)s->conns_host));
	json_object_set_new(dj, "refused", json_integer((json_int_t)s->refused));
	json_object_set_new(dj, "bytes_to_host", json_integer((json_int_t)s->bytes_to_host));
	json_object_set_new(dj, "bytes_to_guest", json_integer((json_int_t)s->bytes_to_guest));
	json_object_set_new(dj, "bad_packets", json_integer((json_int_t)s->bad_packets));
	json_object_set_new(dj, "resets", json_integer((json_int_t)s->resets));
	json_object_set_new(dj, "transport_resets", json_integer((json_int_t)v->transport_resets));
}

const struct device_type vsock_device_type = {
	.name = "vsock",
	.usage = "add a virtio-vsock device; OPTS:\n"
		 "                     cid=N (the guest's context id, 3 or more), backend=unix (the\n"
		 "                     default: hybrid, as Firecracker's) with path=P (a new unix\n"
		 "                     socket: a client writes \"CONNECT <port>\\n\", reads \"OK <n>\\n\"\n"
		 "                     and then talks to the guest's port; the guest's connections to\n"
		 "                     host port Q reach the unix socket P_Q), or backend=vhost (the\n"
		 "                     kernel's vhost-vsock: the host's AF_VSOCK reaches cid N), and\n"
		 "                     every device's keys (below)\n",
	.keys = vsock_keys,
	.spec_set = vsock_set,
	.spec_check = vsock_check,
	.spec_print = vsock_spec_print,
	.create = vsock_create,
	.destroy = vsock_destroy,
	.print_stats = vsock_print,
	.stats_json = vsock_json,
};
