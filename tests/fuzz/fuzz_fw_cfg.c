/* Fuzz target: fw_cfg's ports (selector writes of any width and offset, data reads and writes) against a model of its items. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devices/fw_cfg.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fz_quiet();
	return 0;
}

/* The model: the byte `off` of item `key` for RAM `ram` and `cpus` vCPUs. */
static uint8_t model(uint16_t key, uint32_t off, uint64_t ram, uint16_t cpus)
{
	uint64_t v;
	uint32_t len;
	switch (key) {
	case FW_CFG_SIGNATURE: return off < 4 ? (uint8_t)"QEMU"[off] : 0;
	case FW_CFG_ID:        v = 1; len = 4; break;
	case FW_CFG_RAM_SIZE:  v = ram; len = 8; break;
	case FW_CFG_NOGRAPHIC: v = 1; len = 2; break;
	case FW_CFG_NB_CPUS:
	case FW_CFG_MAX_CPUS:  v = cpus; len = 2; break;
	default: return 0;
	}
	return off < len ? (uint8_t)(v >> (8 * off)) : 0;
}

/* Input: u64 RAM size, u16 vCPUs, then ops of 4 bytes: u8 kind (bit 0: read/write, bits 1-2:
 * offset 0 or 1, bits 3-5: length 1-8 (the bus allows what fits the range)), u16 value, u8 pad. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_in in = { data, size };
	uint64_t ram = fz_u64(&in);
	uint16_t cpus = fz_u16(&in);
	struct fw_cfg fw;
	if (fw_cfg_init(&fw, ram, cpus))
		abort();
	uint16_t key = 0;
	uint64_t off = 0;
	for (unsigned n = 0; in.left >= 4 && n < 4096; n++) {
		uint8_t kind = fz_u8(&in);
		uint16_t val = fz_u16(&in);
		(void)fz_u8(&in);
		uint64_t o = (kind >> 1) & 1;
		uint32_t len = 1 + ((kind >> 3) & 7);
		if (o + len > FW_CFG_SIZE)
			len = (uint32_t)(FW_CFG_SIZE - o); /* the bus keeps accesses inside the range */
		uint8_t buf[8];
		memset(buf, 0xa5, sizeof(buf));
		if (kind & 1) {
			memcpy(buf, &val, len < 2 ? len : 2);
			fw_cfg_ops.write(&fw, o, buf, len);
			if (o == 0) {
				key = len == 1 ? (uint8_t)val : val;
				off = 0;
			}
		} else {
			fw_cfg_ops.read(&fw, o, buf, len);
			if (o == 1 && len == 1) {
				FZ_CHECK(buf[0] == (off < UINT32_MAX ? model(key, (uint32_t)off, ram, cpus) : 0));
				off++;
			} else {
				for (uint32_t i = 0; i < len; i++)
					FZ_CHECK(buf[i] == 0);
			}
		}
	}
	fw_cfg_destroy(&fw);
	return 0;
}
