/* virtio-rng as a device type: built from its spec (source, latency mode, rate limit), counted for --stats. */
#include "devices/device_type.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

static void *rng_create(const struct device_env *env, const struct vm_device_spec *spec,
			unsigned index, struct virtio_pci **pci, struct error *err)
{
	struct virtio_rng *r = calloc(1, sizeof(*r));
	if (!r) {
		error_set(err, -ENOMEM, "out of memory for virtio-rng");
		return NULL;
	}
	int ret = virtio_rng_init(r, index, spec->rng_source, &spec->irq, env->mem, env->vm_fd,
				  env->routes, env->loop, env->mmio, env->window, err);
	if (!ret && spec->rng_latency_us)
		ret = virtio_rng_set_latency(r, spec->rng_latency_us, env->tsc_offset, env->loop, err);
	if (!ret)
		ret = virtio_rng_set_limit(r, &spec->limit, env->loop, err);
	if (ret) {
		virtio_rng_destroy(r);
		free(r);
		return NULL;
	}
	*pci = &r->pci;
	return r;
}

static void rng_destroy(void *dev)
{
	virtio_rng_destroy(dev);
	free(dev);
}

static void rng_print(const void *dev, FILE *out)
{
	const struct virtio_rng *r = dev;
	const struct vpci_irq_stats *s = &r->pci.stats;
	fprintf(out, "  %s: %" PRIu64 " requests, %" PRIu64 " kicks (%" PRIu64 " by MMIO exit), %"
		PRIu64 " ISR reads, %" PRIu64 " interrupts suppressed by the driver\n", r->name,
		r->requests, s->kicks, s->kicks_mmio, s->isr_reads, s->suppressed);
}

static void rng_json(const void *dev, json_t *dj)
{
	const struct virtio_rng *r = dev;
	json_object_set_new(dj, "requests", json_integer((json_int_t)r->requests));
	json_object_set_new(dj, "bytes", json_integer((json_int_t)r->bytes));
	json_object_set_new(dj, "source", json_string(r->source == VIRTIO_RNG_DRBG ? "drbg" : "getrandom"));
	json_object_set_new(dj, "source_calls", json_integer((json_int_t)r->pool_refills));
	if (r->period_us) {
		json_object_set_new(dj, "latency_period_us", json_integer(r->period_us));
		json_object_set_new(dj, "ticks", json_integer((json_int_t)r->ticks));
		json_object_set_new(dj, "ticks_idle", json_integer((json_int_t)r->ticks_idle));
	}
}

const struct device_type rng_device_type = {
	.name = "rng",
	.create = rng_create,
	.destroy = rng_destroy,
	.print_stats = rng_print,
	.stats_json = rng_json,
};
