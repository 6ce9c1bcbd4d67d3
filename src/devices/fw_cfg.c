/* fw_cfg: selector write -> item bytes (signature, id, RAM size, vCPU counts) read one at a time from the data port. */
#include "devices/fw_cfg.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "util/log.h"

int fw_cfg_init(struct fw_cfg *fw, uint64_t ram_size, uint16_t ncpus)
{
	memset(fw, 0, sizeof(*fw));
	fw->ram_size = ram_size;
	fw->ncpus = ncpus;
	return -pthread_mutex_init(&fw->lock, NULL);
}

void fw_cfg_destroy(struct fw_cfg *fw)
{
	pthread_mutex_destroy(&fw->lock);
}

/* The item of `key` into buf (up to 8 bytes, little-endian). Returns its length, 0: none. */
static uint32_t item(const struct fw_cfg *fw, uint16_t key, uint8_t buf[8])
{
	uint64_t v;
	uint32_t len;
	switch (key) {
	case FW_CFG_SIGNATURE:
		memcpy(buf, "QEMU", 4);
		return 4;
	case FW_CFG_ID:        v = 1;            len = 4; break;
	case FW_CFG_RAM_SIZE:  v = fw->ram_size; len = 8; break;
	case FW_CFG_NOGRAPHIC: v = 1;            len = 2; break;
	case FW_CFG_NB_CPUS:
	case FW_CFG_MAX_CPUS:  v = fw->ncpus;    len = 2; break;
	default:
		return 0;
	}
	for (uint32_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(v >> (8 * i));
	return len;
}

static void fw_cfg_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	struct fw_cfg *fw = opaque;
	memset(data, 0, len);
	if (offset != 1 || len != 1)
		return;
	pthread_mutex_lock(&fw->lock);
	uint8_t buf[8];
	uint32_t n = item(fw, fw->selector, buf);
	if (fw->offset < n)
		*(uint8_t *)data = buf[fw->offset];
	if (fw->offset < UINT32_MAX)
		fw->offset++;
	pthread_mutex_unlock(&fw->lock);
}

static void fw_cfg_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct fw_cfg *fw = opaque;
	pthread_mutex_lock(&fw->lock);
	if (offset == 0 && len <= 2) {
		uint16_t sel = 0;
		memcpy(&sel, data, len);
		fw->selector = sel;
		fw->offset = 0;
	} else {
		fw->writes_ignored++;
		log_ratelimited(&fw->rl, LOG_WARN, "fw_cfg: guest wrote %u bytes at port 0x%" PRIx64
				" (the device is read-only; selector: 16-bit write at 0x%x); ignored",
				len, FW_CFG_PORT + offset, FW_CFG_PORT);
	}
	pthread_mutex_unlock(&fw->lock);
}

const struct bus_ops fw_cfg_ops = {
	.read = fw_cfg_read,
	.write = fw_cfg_write,
};
