/* The device-type table: built from DEVICE_TYPES (device_type.h), one line per kind of device. */
#include "devices/device_type.h"

#define ENTRY(e, entry, option) [e] = &entry,
static const struct device_type *const table[VM_DEV_NTYPES] = { DEVICE_TYPES(ENTRY) };
#undef ENTRY

#define OPTION(e, entry, option) [e] = option,
static const char *const options[VM_DEV_NTYPES] = { DEVICE_TYPES(OPTION) };
#undef OPTION

const struct device_type *device_type_get(enum vm_device_type t)
{
	return (unsigned)t < VM_DEV_NTYPES ? table[t] : NULL;
}

const char *device_type_option(enum vm_device_type t)
{
	return (unsigned)t < VM_DEV_NTYPES ? options[t] : NULL;
}
