/* VFIO expansion ROM (rom=on): the device's ROM region read once at setup and served read-only as the function's ROM BAR. */
#include "vfio/vfio_dev.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ROM_CHUNK (64u << 10) /* bytes per region read at setup */

/* The guest's read of the ROM BAR: the content, 0 past it (QEMU's vfio_rom_read does the
 * same for a BAR larger than the ROM region). */
static void rom_read(void *opaque, uint64_t off, void *data, uint32_t len)
{
	const struct vfio_dev *d = opaque;
	memset(data, 0, len);
	if (off < d->rom_len)
		memcpy(data, d->rom + off, d->rom_len - off < len ? d->rom_len - off : len);
}

/* Reads the ROM region into buf in ROM_CHUNK reads (*at: where a read failed). vfio-pci serves
 * the ROM only while the device's memory decode is on (its virtual command register; -EIO
 * otherwise), and vfio_dev_init left it off: on for the read, then back as it was. The device
 * was just reset and bus master is off, so the moment of decode does nothing. */
static int read_rom(struct vfio_dev *d, uint8_t *buf, uint64_t size, uint64_t *at)
{
	uint16_t cmd, on;
	int ret = d->ops->read(d->ctx, VFIO_DEV_CONFIG_REGION, PCI_COMMAND, &cmd, 2);
	if (ret)
		return ret;
	on = cmd | PCI_CMD_MEMORY;
	if ((ret = d->ops->write(d->ctx, VFIO_DEV_CONFIG_REGION, PCI_COMMAND, &on, 2)))
		return ret;
	for (*at = 0; *at < size; *at += ROM_CHUNK) {
		uint32_t n = size - *at < ROM_CHUNK ? (uint32_t)(size - *at) : ROM_CHUNK;
		ret = d->ops->read(d->ctx, VFIO_DEV_ROM_REGION, *at, buf + *at, n);
		if (ret)
			break;
	}
	int back = d->ops->write(d->ctx, VFIO_DEV_CONFIG_REGION, PCI_COMMAND, &cmd, 2);
	return ret ? ret : back;
}

int vfio_rom_setup(struct vfio_dev *d, uint64_t rom_size, struct error *err)
{
	if (!rom_size) {
		log_info("%s: rom=on, but the device has no expansion ROM (VFIO's ROM region is "
			 "empty): the guest sees none (config 0x30 reads 0)", d->name);
		return 0;
	}
	if (rom_size > PCI_ROM_MAX_SIZE)
		return error_set(err, -EFBIG, "%s: rom=on: the device's expansion ROM is %llu bytes, "
				 "over msivm's limit of %u MiB: drop rom=on", d->name,
				 (unsigned long long)rom_size, PCI_ROM_MAX_SIZE >> 20);
	uint8_t *buf = malloc(rom_size);
	if (!buf)
		return error_set(err, -ENOMEM, "%s: out of memory for the expansion ROM", d->name);
	uint64_t at = 0;
	int ret = read_rom(d, buf, rom_size, &at);
	if (ret) {
		free(buf);
		return error_set(err, ret, "%s: rom=on: the device's expansion ROM cannot be read at "
				 "offset 0x%llx (%s; the host kernel reads it only when its header is "
				 "valid): drop rom=on", d->name, (unsigned long long)at, strerror(-ret));
	}
	uint32_t bar = PCI_ROM_MIN_SIZE;
	while (bar < rom_size)
		bar <<= 1;
	ret = pci_func_add_rom(&d->func, bar, rom_read, d, d->name);
	if (ret) {
		free(buf);
		return error_set(err, ret, "%s: the expansion ROM cannot be declared", d->name);
	}
	d->rom = buf;
	d->rom_len = (uint32_t)rom_size;
	log_info("%s: expansion ROM of %u bytes offered (ROM BAR 0x%x bytes)", d->name, d->rom_len,
		 bar);
	return 0;
}

void vfio_rom_release(struct vfio_dev *d)
{
	free(d->rom);
	d->rom = NULL;
	d->rom_len = 0;
}
