/* Firecracker's PATCH /drives/{id} and /network-interfaces/{id}: the id -> the device's place among the VM's devices -> vm_device_replace and vm_device_set_limit. */
#include "fc/fc_drive.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fc/fc_config.h"
#include "util/log.h"
#include "vmm/vm.h"
#include "vmm/vm_control.h"

/* The index in vm->devs of the VM's device number `k` of type `type` (counted in PCI order),
 * or -1. */
static int device_of(const struct vm *vm, enum vm_device_type type, int k)
{
	for (uint32_t i = 0; i < vm->ndevs; i++)
		if (vm->cfg.devices[i].type == type && k-- == 0)
			return (int)i;
	return -1;
}

/* The item of array section `key` whose `idkey` is `id`, or NULL. */
static json_t *staged(struct fc_vmm *fc, const char *key, const char *idkey, const char *id,
		      int *index)
{
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(fc->doc, key), i, d)
		if (!strcmp(json_string_value(json_object_get(d, idkey)), id)) {
			*index = (int)i;
			return d;
		}
	return NULL;
}

/* The staged document follows a rate limiter's update, bucket by bucket, as given. */
static void stage_limit(json_t *item, const char *key, const json_t *rl)
{
	if (!rl)
		return;
	json_t *now = json_object_get(item, key);
	if (!json_is_object(now)) {
		now = json_object();
		json_object_set_new(item, key, now);
	}
	json_object_update(now, (json_t *)rl);
}

/* The running VM's device `dev` with its limits from the two RateLimiter updates (`rx` for a
 * NIC's receive side), as Firecracker updates them: a bucket not given stays. t->lock held. */
static int set_limits(struct api_target *t, int dev, const json_t *tx, const json_t *rx,
		      struct error *e)
{
	const struct vm_device_spec *spec = &t->vm->cfg.devices[dev];
	struct rate_limit_opts lim = spec->limit,
			       rxl = spec->rx_limit_own ? spec->rx_limit : spec->limit;
	fc_rate_limit_apply(tx, &lim);
	fc_rate_limit_apply(rx, &rxl);
	return vm_device_set_limit(t->vm, (uint32_t)dev, tx ? &lim : NULL,
				   spec->type == VM_DEV_NET && rx ? &rxl : NULL, e);
}

/* t->lock taken: the running VM's device number `k` of `type`, or -errno with a message. */
static int running_device(struct api_target *t, enum vm_device_type type, int k,
			  const char *what, const char *id, struct error *e)
{
	if (!t->vm)
		return error_set(e, -EAGAIN, "the VM is between boots: try again");
	int dev = device_of(t->vm, type, k);
	return dev >= 0 ? dev : error_set(e, -ENOENT, "%s %.64s: not in the running VM", what, id);
}

int fc_drive_patch(struct fc_vmm *fc, struct api_target *t, const json_t *body, struct error *e)
{
	const char *id = json_string_value(json_object_get(body, "drive_id"));
	const json_t *path = json_object_get(body, "path_on_host"),
		     *rl = json_object_get(body, "rate_limiter");
	int disk = fc_config_drive_index(fc->doc, id), pos;
	json_t *item = staged(fc, "drives", "drive_id", id, &pos);
	if (disk < 0 || !item)
		return error_set(e, -ENOENT, "Invalid block device ID: %.64s (no such drive)", id);
	pthread_mutex_lock(&t->lock);
	int ret, dev = running_device(t, VM_DEV_BLK, disk, "drive", id, e);
	ret = dev < 0 ? dev : path ? vm_device_replace(t->vm, (uint32_t)dev, json_string_value(path), e) : 0;
	bool replaced = !ret && path;
	if (replaced)
		log_info("firecracker: drive %s: %s opened again (disk %d)", id,
			 json_string_value(path), disk);
	if (!ret && rl)
		ret = set_limits(t, dev, rl, NULL, e);
	pthread_mutex_unlock(&t->lock);
	if (ret == -ESHUTDOWN)
		return error_set(e, ret, "the VM is stopping");
	/* The staged document follows what applied: GET /vm/config shows the drive as it is. */
	if (replaced)
		json_object_set(item, "path_on_host", (json_t *)path);
	if (!ret && rl) {
		stage_limit(item, "rate_limiter", rl);
		log_info("firecracker: drive %s: rate limiter updated", id);
	}
	return ret;
}

int fc_net_patch(struct fc_vmm *fc, struct api_target *t, const json_t *body, struct error *e)
{
	const char *id = json_string_value(json_object_get(body, "iface_id"));
	const json_t *rx = json_object_get(body, "rx_rate_limiter"),
		     *tx = json_object_get(body, "tx_rate_limiter");
	int k;
	json_t *item = staged(fc, "network-interfaces", "iface_id", id, &k);
	if (!item)
		return error_set(e, -ENOENT, "Invalid network interface ID: %.64s (no such "
				 "interface)", id);
	if (!rx && !tx)
		return 0;
	pthread_mutex_lock(&t->lock);
	int ret, dev = running_device(t, VM_DEV_NET, k, "network interface", id, e);
	ret = dev < 0 ? dev : set_limits(t, dev, tx, rx, e);
	pthread_mutex_unlock(&t->lock);
	if (ret == -ESHUTDOWN)
		return error_set(e, ret, "the VM is stopping");
	if (ret)
		return ret;
	stage_limit(item, "rx_rate_limiter", rx);
	stage_limit(item, "tx_rate_limiter", tx);
	log_info("firecracker: network interface %s: rate limiters updated", id);
	return 0;
}
