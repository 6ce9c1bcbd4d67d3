/* virtio-blk as a device type: its options (image, queues, engine), image backend and device from its spec, counted for --stats, resized on SIGUSR2. */
#include "devices/device_type.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"

/* readonly and num_queues are cloud-hypervisor's spellings. */
enum { K_PATH, K_RO, K_READONLY, K_QUEUES, K_NUM_QUEUES, K_ENGINE };

static const struct device_key blk_keys[] = {
	{ "path", DEVICE_KEY_STRING, K_PATH },
	{ "ro", DEVICE_KEY_FLAG, K_RO },
	{ "readonly", DEVICE_KEY_FLAG, K_READONLY },
	{ "queues", DEVICE_KEY_UINT, K_QUEUES },
	{ "num_queues", DEVICE_KEY_UINT, K_NUM_QUEUES },
	{ "engine", DEVICE_KEY_STRING, K_ENGINE },
	{ NULL, 0, 0 },
};

static void blk_spec_init(struct vm_device_spec *d)
{
	d->blk = (struct virtio_blk_opts){ .queues = 0, .engine = BLK_ENGINE_AUTO }; /* 0: per vCPU */
	d->irq.coalesce_us = VIRTIO_PCI_COALESCE_DEFAULT_US; /* disks only: see README */
}

static int blk_set(struct device_opts *o, const struct device_key *k, const char *val,
		   struct error *e)
{
	struct virtio_blk_opts *b = &o->spec->blk;
	uint64_t v = 0;
	unsigned w = 0;
	int ret;
	switch (k->id) {
	case K_PATH:
		if (strlen(val) >= sizeof(b->path))
			return device_opt_refuse(o, DEVICE_MSG_KEY, e, "%s %s= is longer than %zu bytes",
						 o->name, k->name, sizeof(b->path) - 1);
		snprintf(b->path, sizeof(b->path), "%s", val);
		return 0;
	case K_RO:
	case K_READONLY:
		return device_opt_flag(o, k, val, &b->ro, e);
	case K_ENGINE:
		ret = device_opt_word(o, "engine", val, blk_engine_names, BLK_ENGINE_N,
				      "uring or sync", &w, e);
		b->engine = (enum blk_engine)w;
		return ret;
	default: /* K_QUEUES, K_NUM_QUEUES */
		ret = device_opt_uint(o, k, val, 1, VIRTIO_BLK_MAX_QUEUES, "1 to 8", &v, e);
		b->queues = (uint16_t)v;
		return ret;
	}
}

static int blk_check(struct device_opts *o, struct error *e)
{
	const struct virtio_blk_opts *b = &o->spec->blk;
	if (!b->path[0])
		return device_opt_refuse(o, DEVICE_MSG_WHOLE, e, "path=FILE is required");
	if (access(b->path, b->ro ? R_OK : R_OK | W_OK)) {
		int err = errno;
		o->msg = DEVICE_MSG_AS_IS;
		return error_set(e, -err, "cannot open disk image '%.200s': %s%s", b->path,
				 strerror(err), b->ro ? "" : err == EROFS
				 ? " (the file system is read-only: add ,ro to the disk, as in "
				   "--disk path=FILE,ro)"
				 : err == EACCES ? " (add ,ro for read-only)" : "");
	}
	/* A file nobody may write (mode 0444) that root could open read-write anyway: as QEMU and
	 * cloud-hypervisor, msivm does what it is told (read-write), but says so once. */
	struct stat st;
	if (!b->ro && !stat(b->path, &st) && S_ISREG(st.st_mode) && !(st.st_mode & 0222))
		log_warn("disk image '%.200s' has mode %04o (nobody may write it) but is opened "
			 "read-write, as root may: add ,ro to keep it unwritten", b->path,
			 (unsigned)(st.st_mode & 07777));
	return 0;
}

/* A disk without queues= gets one request queue per vCPU, at most VIRTIO_BLK_MAX_QUEUES (as
 * QEMU since 5.2): each vCPU then submits and completes on its own queue. */
static void blk_spec_finish(struct vm_device_spec *d, uint32_t ncpus)
{
	uint32_t n = ncpus < VIRTIO_BLK_MAX_QUEUES ? ncpus : VIRTIO_BLK_MAX_QUEUES;
	if (d->blk.queues == 0)
		d->blk.queues = (uint16_t)(n ? n : 1);
}

static const char *blk_spec_print(const struct vm_device_spec *d, json_t *o)
{
	const char *engine = blk_engine_names[d->blk.engine];
	if (json_object_set_new(o, "path", json_string(d->blk.path)))
		return "path";
	json_object_set_new(o, "ro", json_boolean(d->blk.ro));
	json_object_set_new(o, "queues", json_integer(d->blk.queues));
	json_object_set_new(o, "engine", engine ? json_string(engine) : json_null());
	return NULL;
}

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

/* The same file still (a path opened again whose inode did not change) is measured again;
 * another file is opened (a bind mount over the path, a new path) and swapped in. Either way
 * the driver gets a configuration-change interrupt. */
static int blk_replace(void *dev, const struct vm_device_spec *spec, const char *path,
		       struct error *err)
{
	struct virtio_blk *b = dev;
	struct stat now, was;
	if (stat(path, &now))
		return error_set(err, -errno, "cannot open disk image '%s': %s", path, strerror(errno));
	if (!fstat(b->be->fd, &was) && was.st_dev == now.st_dev && was.st_ino == now.st_ino) {
		pthread_mutex_lock(&b->pci.lock);
		int ret = blk_backend_refresh_size(b->be);
		if (ret >= 0)
			virtio_pci_config_changed(&b->pci);
		pthread_mutex_unlock(&b->pci.lock);
		return ret < 0 ? error_set(err, ret, "disk image '%s': cannot read its size: %s", path,
					   strerror(-ret)) : 0;
	}
	const struct virtio_blk_opts *o = &spec->blk;
	struct blk_open_cfg oc = { .path = path, .ro = o->ro, .engine = o->engine,
				   .depth = (unsigned)o->queues * VIRTIO_BLK_QUEUE_SIZE };
	struct blk_backend *be, *old = NULL;
	int ret = blk_backend_open(&be, &oc, err);
	if (ret)
		return ret;
	ret = virtio_blk_swap_backend(b, be, &old, err);
	blk_backend_close(ret ? be : old);
	return ret;
}

static int blk_update_limit(void *dev, const struct vm_device_spec *spec, struct error *err)
{
	return virtio_blk_update_limit(dev, &spec->limit, err);
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
	.usage = "add a virtio-blk disk; OPTS: path=FILE (raw image, a multiple of\n"
		 "                     512 bytes) and optionally ro (or readonly=on|off), queues=N\n"
		 "                     (1-8, default one per vCPU; or num_queues=N), engine=uring|sync\n"
		 "                     (default: uring if available), bps=SIZE, ops=N and every\n"
		 "                     device's keys (below)\n",
	.keys = blk_keys,
	.rate_limit = true,
	.spec_init = blk_spec_init,
	.spec_set = blk_set,
	.spec_check = blk_check,
	.spec_finish = blk_spec_finish,
	.spec_print = blk_spec_print,
	.create = blk_create,
	.destroy = blk_destroy,
	.print_stats = blk_print,
	.stats_json = blk_json,
	.host_event = blk_host_event,
	.replace = blk_replace,
	.update_limit = blk_update_limit,
};
