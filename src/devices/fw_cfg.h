/* fw_cfg: QEMU's firmware configuration ports (0x510 selector, 0x511 data), read-only, the few keys kvm-unit-tests reads. */
#ifndef MSIVM_DEVICES_FW_CFG_H
#define MSIVM_DEVICES_FW_CFG_H

#include <pthread.h>
#include <stdint.h>

#include "bus/bus.h"

#define FW_CFG_PORT 0x510
#define FW_CFG_SIZE 2            /* 0x510: selector (16-bit write), 0x511: data (byte reads) */

/* Keys (QEMU's numbering). Any other key reads as zeros. */
#define FW_CFG_SIGNATURE 0x00    /* "QEMU" */
#define FW_CFG_ID        0x01    /* u32 1: the port interface, no DMA */
#define FW_CFG_RAM_SIZE  0x03    /* u64: guest RAM in bytes */
#define FW_CFG_NOGRAPHIC 0x04    /* u16 1 */
#define FW_CFG_NB_CPUS   0x05    /* u16: vCPUs */
#define FW_CFG_MAX_CPUS  0x0f    /* u16: vCPUs (no hot plug) */

/* The device. The selector and offset are guest state behind `lock` (every vCPU may use the
 * ports at once); the values are fixed when the VM is built. */
struct fw_cfg {
	pthread_mutex_t lock;
	uint16_t selector;
	uint32_t offset;         /* next byte of the selected item */
	uint64_t ram_size;
	uint16_t ncpus;
	uint64_t writes_ignored; /* data-port writes (the device is read-only) */
	struct ratelimit rl;
};

/* Sets up `fw` for a VM of `ram_size` bytes and `ncpus` vCPUs. Returns 0 or -errno. */
int fw_cfg_init(struct fw_cfg *fw, uint64_t ram_size, uint16_t ncpus);
void fw_cfg_destroy(struct fw_cfg *fw);

/* Handlers for [FW_CFG_PORT, +FW_CFG_SIZE): a 1- or 2-byte write at offset 0 selects a key and
 * rewinds it; a byte read at offset 1 returns the item's next byte (0 past its end or for an
 * unknown key); every other access reads as zeros or is dropped (logged, rate-limited). */
extern const struct bus_ops fw_cfg_ops;

#endif
