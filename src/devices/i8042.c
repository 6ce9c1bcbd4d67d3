/* i8042: guest reset pulse on the command port -> a reset request to the VM. */
#include "devices/i8042.h"

#include <string.h>

static void i8042_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	memset(data, 0, len); /* data: nothing; status: input and output buffers empty */
}

static void i8042_command_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct i8042 *kbc = opaque;
	uint8_t cmd = ((const uint8_t *)data)[0];
	if ((cmd & 0xf0u) == I8042_CMD_PULSE && !(cmd & I8042_OUT_RESET)) {
		kbc->sink.request(kbc->sink.opaque, POWER_RESET, "i8042 reset pulse");
		return;
	}
	atomic_fetch_add(&kbc->ignored, 1);
}

const struct bus_ops i8042_data_ops = {
	.read = i8042_read,
};

const struct bus_ops i8042_command_ops = {
	.read = i8042_read,
	.write = i8042_command_write,
};
