/* Firecracker's PATCH /drives/{id}: drive id -> the disk's place among the VM's devices -> vm_device_replace. */
#include "fc/fc_drive.h"

#include <errno.h>
#include <string.h>

#include "fc/fc_config.h"
#include "util/log.h"
#include "vmm/vm.h"
#include "vmm/vm_control.h"

/* The index in vm->devs of the VM's disk number `disk` (counted in PCI order), or -1. */
static int disk_device(const struct vm *vm, int disk)
{
	for (uint32_t i = 0; i < vm->ndevs; i++)
		if (vm->cfg.devices[i].type == VM_DEV_BLK && disk-- == 0)
			return (int)i;
	return -1;
}

int fc_drive_patch(struct fc_vmm *fc, struct api_target *t, const json_t *body, struct error *e)
{
	const char *id = json_string_value(json_object_get(body, "drive_id"));
	const json_t *path = json_object_get(body, "path_on_host"),
		     *rl = json_object_get(body, "rate_limiter");
	int disk = fc_config_drive_index(fc->doc, id);
	if (disk < 0)
		return error_set(e, -ENOENT, "Invalid block device ID: %.64s (no such drive)", id);
	if (rl && (json_object_get(rl, "bandwidth") || json_object_get(rl, "ops")))
		return error_set(e, -EOPNOTSUPP, "drive %.64s: msivm cannot change a drive's rate "
				 "limiter while the VM runs (give it before InstanceStart)", id);
	if (!path)
		return 0;
	pthread_mutex_lock(&t->lock);
	int ret, dev = t->vm ? disk_device(t->vm, disk) : -1;
	if (!t->vm)
		ret = error_set(e, -EAGAIN, "the VM is between boots: try again");
	else if (dev < 0)
		ret = error_set(e, -ENOENT, "drive %.64s: no such disk in the running VM", id);
	else
		ret = vm_device_replace(t->vm, (uint32_t)dev, json_string_value(path), e);
	pthread_mutex_unlock(&t->lock);
	if (ret == -ESHUTDOWN)
		return error_set(e, ret, "the VM is stopping");
	if (ret)
		return ret;
	log_info("firecracker: drive %s: %s opened again (disk %d)", id, json_string_value(path),
		 disk);
	/* The staged document follows: GET /vm/config shows the path the drive has now. */
	size_t i;
	json_t *d;
	json_array_foreach(json_object_get(fc->doc, "drives"), i, d)
		if (!strcmp(json_string_value(json_object_get(d, "drive_id")), id))
			json_object_set(d, "path_on_host", (json_t *)path);
	return 0;
}
