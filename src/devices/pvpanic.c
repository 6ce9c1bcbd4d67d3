/* pvpanic: a guest's panic event on port 0x505 -> the VM's stop request (and a log line). */
#include "devices/pvpanic.h"

#include <string.h>

#include "util/log.h"

static void pvpanic_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	memset(data, 0, len);
	((uint8_t *)data)[0] = PVPANIC_PANICKED | PVPANIC_CRASH_LOADED;
}

static void pvpanic_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct pvpanic *p = opaque;
	uint8_t v = ((const uint8_t *)data)[0];
	if (v & PVPANIC_CRASH_LOADED && p->crash_loaded++ == 0)
		log_warn("pvpanic: the guest panicked and runs its crash kernel (kdump)");
	if (v & ~(PVPANIC_PANICKED | PVPANIC_CRASH_LOADED))
		log_debug("pvpanic: unknown event bits 0x%x ignored", v);
	if (v & PVPANIC_PANICKED) {
		log_err("pvpanic: the guest panicked");
		p->on_panic(p->opaque);
	}
}

const struct bus_ops pvpanic_ops = {
	.read = pvpanic_read,
	.write = pvpanic_write,
};
