/* The device-type table: one line per kind of device (adding a device type = its files + a line here). */
#include "devices/device_type.h"

static const struct device_type *const table[VM_DEV_NTYPES] = {
	[VM_DEV_RNG] = &rng_device_type,
	[VM_DEV_BLK] = &blk_device_type,
	[VM_DEV_CONSOLE] = &console_device_type,
	[VM_DEV_NET] = &net_device_type,
};

const struct device_type *device_type_get(enum vm_device_type t)
{
	return (unsigned)t < VM_DEV_NTYPES ? table[t] : NULL;
}
