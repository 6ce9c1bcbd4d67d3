/* virtio-rng as a device type: its options and the device built from its spec (source, latency mode, rate limit), counted for --stats. */
#include "devices/device_type.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "util/parse.h"

enum { K_LATENCY, K_SOURCE };

static const struct device_key rng_keys[] = {
	{ "latency", DEVICE_KEY_UINT, K_LATENCY },
	{ "source", DEVICE_KEY_STRING, K_SOURCE },
	{ NULL, 0, 0 },
};

static int rng_set(struct device_opts *o, const struct device_key *k, const char *val,
		   struct error *e)
{
	struct vm_device_spec *d = o->spec;
	uint64_t v;
	unsigned w;
	if (k->id == K_SOURCE) {
		int ret = device_opt_word(o, "rng source", val, virtio_rng_source_names,
					  VIRTIO_RNG_NSOURCES, "drbg or getrandom", &w, e);
		d->rng_source = (enum virtio_rng_source)w;
		return ret;
	}
	if (parse_uint(val, 10, 1000000, &v))
		return device_opt_refuse(o, DEVICE_MSG_KEY, e, "bad latency period '%.100s': use 10 "
					 "to 1000000 us", val);
	d->rng_latency_us = (uint32_t)v;
	return 0;
}

static const char *rng_spec_print(const struct vm_device_spec *d, json_t *o)
{
	if (json_object_set_new(o, "latency", d->rng_latency_us ? json_integer(d->rng_latency_us)
								 : json_null()))
		return "latency";
	if (json_object_set_new(o, "source", json_string(virtio_rng_source_names[d->rng_source])))
		return "source";
	return NULL;
}

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
	.usage = "add a virtio-rng device; OPTS: latency=US (complete one buffer\n"
		 "                     every US with a TSC stamp), source=drbg|getrandom (a CTR_DRBG\n"
		 "                     seeded by the kernel, the default, or the kernel's\n"
		 "                     getrandom for every byte), bps=SIZE, ops=N and every\n"
		 "                     device's keys (below), or \"\"\n",
	.keys = rng_keys,
	.rate_limit = true,
	.spec_set = rng_set,
	.spec_print = rng_spec_print,
	.create = rng_create,
	.destroy = rng_destroy,
	.print_stats = rng_print,
	.stats_json = rng_json,
};
