/* VFIO passthrough as a device type: --device path=/sys/bus/pci/devices/BDF, its host side opened and its PCI function built. */
#include "devices/device_type.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vfio/vfio_dev.h"
#include "vfio/vfio_host.h"

/* KVM memory slots of passed-through BARs: above guest RAM's (vmm/vm.c uses 0..), a block of
 * areas per device. */
#define VFIO_SLOT_BASE 32
#define VFIO_SLOTS_PER_DEVICE (PCI_NUM_BARS * (VFIO_DEV_MAX_AREAS + 2))

enum { K_PATH, K_ID, K_RELAY, K_ROM };

static const struct device_key vfio_keys[] = {
	{ "path", DEVICE_KEY_STRING, K_PATH },
	{ "id", DEVICE_KEY_STRING, K_ID },
	{ "relay", DEVICE_KEY_FLAG, K_RELAY },
	{ "rom", DEVICE_KEY_FLAG, K_ROM },
	{ NULL, 0, 0 },
};

struct vfio_device {
	struct vfio_host host;
	struct vfio_dev dev;
	bool host_open;
	int vm_fd;
};

static int vfio_set(struct device_opts *o, const struct device_key *k, const char *val,
		    struct error *e)
{
	struct vfio_opts *v = &o->spec->vfio;
	if (k->id == K_RELAY)
		return device_opt_flag(o, k, val, &v->relay, e);
	if (k->id == K_ROM)
		return device_opt_flag(o, k, val, &v->rom, e);
	char *dst = k->id == K_PATH ? v->path : v->id;
	size_t max = k->id == K_PATH ? sizeof(v->path) : sizeof(v->id);
	if (strlen(val) >= max || !val[0])
		return device_opt_refuse(o, DEVICE_MSG_KEY, e, "%s %s= must be 1 to %zu bytes",
					 o->name, k->name, max - 1);
	snprintf(dst, max, "%s", val);
	return 0;
}

static int vfio_check(struct device_opts *o, struct error *e)
{
	const struct vm_device_spec *d = o->spec;
	if (!d->vfio.path[0])
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "path=/sys/bus/pci/devices/"
					 "DDDD:BB:DD.F is required (the host device, bound to vfio-pci)");
	if (d->irq.mode == IRQ_MODE_MSIX_SHARED)
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "irq=msix-shared is virtio's: a "
					 "passed-through device takes irq=msix, msi or intx");
	if (d->irq.poll_us || d->irq.coalesce_us || d->irq.vectors >= 0 ||
	    d->irq.path != IRQ_PATH_IRQFD)
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "vectors=, poll=, coalesce= and "
					 "irqpath= are virtio's: a passed-through device's interrupts "
					 "go from the device to KVM by irqfd, its vectors are its own");
	if (d->vfio.relay && d->irq.mode != IRQ_MODE_MSIX)
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "relay=on relays MSI-X interrupts: "
					 "it takes irq=msix (the default)");
	return 0;
}

static const char *vfio_spec_print(const struct vm_device_spec *d, json_t *o)
{
	if (json_object_set_new(o, "path", json_string(d->vfio.path)))
		return "path";
	if (json_object_set_new(o, "id", d->vfio.id[0] ? json_string(d->vfio.id) : json_null()))
		return "id";
	if (json_object_set_new(o, "relay", json_boolean(d->vfio.relay)))
		return "relay";
	if (json_object_set_new(o, "rom", json_boolean(d->vfio.rom)))
		return "rom";
	return NULL;
}

static void vfio_free(struct vfio_device *v)
{
	vfio_dev_destroy(&v->dev);
	if (v->host_open)
		vfio_host_close(&v->host);
	free(v);
}

static void *vfio_create(const struct device_env *env, const struct vm_device_spec *spec,
			 unsigned index, struct virtio_pci **pci, struct error *err)
{
	struct vfio_device *v = calloc(1, sizeof(*v));
	if (!v) {
		error_set(err, -ENOMEM, "out of memory for a VFIO device");
		return NULL;
	}
	v->vm_fd = env->vm_fd;
	struct vfio_dev_desc desc;
	if (vfio_host_open(&v->host, spec->vfio.path, env->mem, env->vm_fd, &desc, err)) {
		free(v);
		return NULL;
	}
	v->host_open = true;
	char name[32];
	if (spec->vfio.id[0])
		snprintf(name, sizeof(name), "%s", spec->vfio.id);
	else
		snprintf(name, sizeof(name), "vfio%u", index);
	if (vfio_dev_init(&v->dev, name, &vfio_host_ops, &v->host, &desc, spec->irq.mode,
			  env->routes, env->mmio, env->window,
			  VFIO_SLOT_BASE + index * VFIO_SLOTS_PER_DEVICE, err)) {
		vfio_free(v);
		return NULL;
	}
	if (spec->vfio.rom && vfio_rom_setup(&v->dev, desc.rom_size, err)) {
		vfio_free(v);
		return NULL;
	}
	if (spec->vfio.relay && vfio_relay_start(&v->dev, env->loop, err)) {
		vfio_free(v);
		return NULL;
	}
	log_info("%s: %s passed through (IOMMU group %d), irq=%s%s%s%s%s", name, v->host.bdf,
		 v->host.group_id, irq_mode_name(spec->irq.mode), v->dev.has_msix ? ", MSI-X" : "",
		 v->dev.has_msi ? ", MSI" : "", v->dev.func.rom.size ? ", expansion ROM" : "",
		 spec->vfio.relay ? "; MSI-X relayed by msivm's I/O thread (relay=on, a lab mode)" : "");
	*pci = NULL;
	return v;
}

static void vfio_destroy(void *dev) { vfio_free(dev); }

static struct pci_func *vfio_func(void *dev) { return &((struct vfio_device *)dev)->dev.func; }

static int vfio_attach_intx(void *dev, uint32_t gsi)
{
	struct vfio_device *v = dev;
	return vfio_dev_attach_intx(&v->dev, v->vm_fd, gsi);
}

static const char *kind_name(enum vfio_irq_kind k)
{
	static const char *const names[] = { "none", "intx", "msi", "msix" };
	return names[k];
}

static void vfio_print(const void *dev, FILE *out)
{
	const struct vfio_device *v = dev;
	const struct vfio_dev *d = &v->dev;
	const struct vfio_dev_stats *s = &d->stats;
	fprintf(out, "  %s (%s): interrupts by %s%s; trapped BAR accesses %" PRIu64 " reads, %" PRIu64
		" writes (MSI-X table/PBA %" PRIu64 "); KVM slots set %" PRIu64 "; device errors %"
		PRIu64 "%s\n", d->name, v->host.bdf, kind_name(d->active),
		d->relay.on ? " (MSI-X relayed by msivm: relay=on)" : "", s->bar_reads,
		s->bar_writes, s->msix_accesses, s->slots_set, s->device_errors,
		d->broken ? "; the device stopped answering" : "");
	if (s->cfg_reads || s->cfg_writes)
		fprintf(out, "    config registers of the device's own (%u bytes): %" PRIu64
			" reads, %" PRIu64 " writes\n", d->cfg_passthrough_bytes, s->cfg_reads,
			s->cfg_writes);
	if (d->rom_len)
		fprintf(out, "    expansion ROM (%u bytes): guest reads %" PRIu64 ", writes dropped %"
			PRIu64 "\n", d->rom_len, d->func.rom.reads, d->func.rom.writes_dropped);
	for (uint16_t i = 0; d->has_msix && i < d->msix.nvec; i++) {
		const struct msix_vec_stats *vs = &d->msix.stats[i];
		if (vs->irqfd || vs->pended || vs->replayed)
			fprintf(out, "    msix%u: relayed by msivm %" PRIu64 ", pended while masked %"
				PRIu64 ", replayed at unmask %" PRIu64 "\n", i, vs->irqfd, vs->pended,
				vs->replayed);
	}
	for (uint32_t i = 0; d->has_msi && i < (1u << d->msi.log2_capable); i++)
		if (d->msi.delivered[i] || d->msi.pended[i] || d->msi.replayed[i])
			fprintf(out, "    msi%u: signalled by msivm %" PRIu64 ", pended while masked %"
				PRIu64 ", replayed at unmask %" PRIu64 "\n", i, d->msi.delivered[i],
				d->msi.pended[i], d->msi.replayed[i]);
}

static void vfio_json(const void *dev, json_t *dj)
{
	const struct vfio_device *v = dev;
	const struct vfio_dev *d = &v->dev;
	const struct vfio_dev_stats *s = &d->stats;
	json_t *vecs = json_array();
	uint64_t relayed = 0;
	for (uint16_t i = 0; d->has_msix && i < d->msix.nvec; i++) {
		const struct msix_vec_stats *vs = &d->msix.stats[i];
		relayed += vs->irqfd;
		json_array_append_new(vecs, json_pack("{s:s,s:i,s:I,s:I,s:I}", "source", "msix",
						       "vector", i, "relayed", (json_int_t)vs->irqfd,
						       "pended", (json_int_t)vs->pended, "replayed",
						       (json_int_t)vs->replayed));
	}
	/* MSI: the device's messages go by irqfd; msivm's own signals (msi_signal) count as
	 * relayed, which only a bug would make nonzero */
	for (uint32_t i = 0; d->has_msi && i < (1u << d->msi.log2_capable); i++) {
		relayed += d->msi.delivered[i];
		json_array_append_new(vecs, json_pack("{s:s,s:i,s:I,s:I,s:I}", "source", "msi",
						       "vector", (int)i, "relayed",
						       (json_int_t)d->msi.delivered[i], "pended",
						       (json_int_t)d->msi.pended[i], "replayed",
						       (json_int_t)d->msi.replayed[i]));
	}
	json_object_set_new(dj, "name", json_string(d->name));
	json_object_set_new(dj, "host", json_string(v->host.bdf));
	json_object_set_new(dj, "irq", json_string(kind_name(d->active)));
	json_object_set_new(dj, "vectors", vecs);
	json_object_set_new(dj, "relayed", json_integer((json_int_t)relayed));
	json_object_set_new(dj, "relay", json_boolean(d->relay.on));
	json_object_set_new(dj, "bar_reads", json_integer((json_int_t)s->bar_reads));
	json_object_set_new(dj, "bar_writes", json_integer((json_int_t)s->bar_writes));
	json_object_set_new(dj, "msix_accesses", json_integer((json_int_t)s->msix_accesses));
	json_object_set_new(dj, "slots_set", json_integer((json_int_t)s->slots_set));
	json_object_set_new(dj, "config_passthrough_bytes", json_integer(d->cfg_passthrough_bytes));
	json_object_set_new(dj, "config_reads", json_integer((json_int_t)s->cfg_reads));
	json_object_set_new(dj, "config_writes", json_integer((json_int_t)s->cfg_writes));
	json_object_set_new(dj, "device_errors", json_integer((json_int_t)s->device_errors));
	json_object_set_new(dj, "broken", json_boolean(d->broken));
	json_object_set_new(dj, "rom_size", json_integer((json_int_t)d->rom_len));
	json_object_set_new(dj, "rom_reads", json_integer((json_int_t)d->func.rom.reads));
	json_object_set_new(dj, "rom_writes_dropped",
			    json_integer((json_int_t)d->func.rom.writes_dropped));
}

const struct device_type vfio_device_type = {
	.name = "vfio",
	.usage = "pass a host PCI device through (VFIO); OPTS: path=/sys/bus/pci/\n"
		 "                     devices/DDDD:BB:DD.F (bound to vfio-pci, alone in its\n"
		 "                     IOMMU group), id=NAME, irq=msix|msi|intx (the most the\n"
		 "                     guest is offered; default msix), relay=on (lab/diagnostic:\n"
		 "                     msivm's I/O thread relays each MSI-X interrupt, not irqfd),\n"
		 "                     rom=on (offer the device's expansion ROM at 0x30, read-only)\n",
	.keys = vfio_keys,
	.spec_set = vfio_set,
	.spec_check = vfio_check,
	.spec_print = vfio_spec_print,
	.create = vfio_create,
	.destroy = vfio_destroy,
	.pci_func = vfio_func,
	.attach_intx = vfio_attach_intx,
	.print_stats = vfio_print,
	.stats_json = vfio_json,
};
