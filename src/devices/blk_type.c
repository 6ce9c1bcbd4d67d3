/* virtio-blk as a device type: image backend and device from its spec, counted for --stats, resized on SIGUSR2. */
#include "devices/device_type.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

static void *blk_create(const struct device_env *env, const struct vm_device_spec *spec,
			unsigned index, struct virtio_pci **pci, struct error *err)
{
	const struct virtio_blk_opts *o = &spec->blk;
	struct blk_open_cfg oc = { .path = o->path, .ro = o->ro, .engine = o->engine,
				   .depth = (unsigned)o->queues * VIRTIO_BLK_QUEUE_SIZE };
	struct blk_backend *be;
	if (blk_backend_open(&be, &oc, err))
		return NULL;
	struct virtio_blk *b = calloc(1, sizeof(*b));
	if (!b) {
		blk_backend_close(be);
		error_set(err, -ENOMEM, "out of memory for virtio-blk");
		return NULL;
	}
	int ret = virtio_blk_init(b, index, o->queues, be, &spec->irq, env->mem, env->vm_fd,
				  env->routes, env->loop, env->mmio, env->window, err);
	if (!ret)
		ret = virtio_blk_set_limit(b, &spec->limit, env->loop, err);
	if (ret) {
		virtio_blk_destroy(b); /* closes the backend */
		free(b);
		return NULL;
	}
	*pci = &b->pci;
	return b;
}

static void blk_destroy(void *dev)
{
	virtio_blk_destroy(dev);
	free(dev);
}

static const char *const stat_names[VBLK_NSTATS] = {
	"in", "out", "flush", "get_id", "discard", "write_zeroes", "other",
};

static void blk_print(const void *dev, FILE *out)
{
	const struct virtio_blk *b = dev;
	const struct virtio_blk_stats *bs = &b->stats;
	const struct vpci_irq_stats *s = &b->pci.stats;
	uint64_t total = 0;
	for (unsigned i = 0; i < VBLK_NSTATS; i++)
		total += bs->requests[i];
	fprintf(out, "  %s: %" PRIu64 " requests (", b->name, total);
	for (unsigned i = 0; i < VBLK_NSTATS; i++)
		fprintf(out, "%s%s %" PRIu64, i ? ", " : "", stat_names[i], bs->requests[i]);
	fprintf(out, "), %" PRIu64 " bytes read, %" PRIu64 " written, %" PRIu64 " IOERR, %" PRIu64
		" UNSUPP, engine %s; %" PRIu64 " kicks (%" PRIu64 " by MMIO exit), %" PRIu64
		" ISR reads, %" PRIu64 " interrupts suppressed by the driver\n", bs->bytes_read,
		bs->bytes_written, bs->ioerr, bs->unsupp, b->be ? b->be->ops->name : "-", s->kicks,
		s->kicks_mmio, s->isr_reads, s->suppressed);
}

static void blk_json(const void *dev, json_t *dj)
{
	const struct virtio_blk *b = dev;
	const struct virtio_blk_stats *bs = &b->stats;
	json_t *reqs = json_object();
	uint64_t total = 0;
	for (unsigned i = 0; i < VBLK_NSTATS; i++) {
		json_object_set_new(reqs, stat_names[i], json_integer((json_int_t)bs->requests[i]));
		total += bs->requests[i];
	}
	json_object_set_new(dj, "engine", json_string(b->be ? b->be->ops->name : "-"));
	json_object_set_new(dj, "inline_writes", json_boolean(b->be && b->be->inline_writes));
	json_object_set_new(dj, "requests", json_integer((json_int_t)total));
	json_object_set_new(dj, "requests_by_type", reqs);
	json_object_set_new(dj, "bytes", json_integer((json_int_t)(bs->bytes_read + bs->bytes_written)));
	json_object_set_new(dj, "bytes_read", json_integer((json_int_t)bs->bytes_read));
	json_object_set_new(dj, "bytes_written", json_integer((json_int_t)bs->bytes_written));
	json_object_set_new(dj, "ioerr", json_integer((json_int_t)bs->ioerr));
	json_object_set_new(dj, "unsupp", json_integer((json_int_t)bs->unsupp));
}

static int blk_host_event(void *dev, unsigned ev)
{
	if (!(ev & DEVICE_EV_DISKS))
		return -1;
	return virtio_blk_resize(dev) == 1;
}

const struct device_type blk_device_type = {
	.name = "blk",
	.create = blk_create,
	.destroy = blk_destroy,
	.print_stats = blk_print,
	.stats_json = blk_json,
	.host_event = blk_host_event,
};
