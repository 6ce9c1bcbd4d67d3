/* Debug-exit port: guest write -> VM stop request with the written status. */
#include "devices/debug_exit.h"

#include "util/log.h"

static void debug_exit_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	const struct debug_exit *d = opaque;
	int status = ((const uint8_t *)data)[0];
	if (d->qemu_status)
		status = ((status << 1) | 1) & 0xff;
	log_debug("debug-exit: guest wrote %d", status);
	d->request_exit(d->opaque, status);
}

const struct bus_ops debug_exit_ops = {
	.write = debug_exit_write,
};
