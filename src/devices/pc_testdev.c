/* pc-testdev: guest port/MMIO access -> scratch register, host page re-protection (KVM drops its mapping) or an IRQ line level. */
#include "devices/pc_testdev.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>

#include "util/log.h"

#define PAGE 4096u

int pc_testdev_init(struct pc_testdev *d, const struct guest_mem *mem, struct irq_line irq)
{
	memset(d, 0, sizeof(*d));
	d->mem = mem;
	d->irq = irq;
	return -pthread_mutex_init(&d->lock, NULL);
}

void pc_testdev_destroy(struct pc_testdev *d)
{
	pthread_mutex_destroy(&d->lock);
}

static void ioport_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	struct pc_testdev *d = opaque;
	pthread_mutex_lock(&d->lock);
	uint32_t v = d->ioport_data;
	pthread_mutex_unlock(&d->lock);
	uint8_t bytes[4];
	memcpy(bytes, &v, 4); /* x86: little-endian */
	memset(data, 0, len);
	if (offset + len <= 4)
		memcpy(data, bytes + offset, len);
}

static void ioport_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct pc_testdev *d = opaque;
	if (offset + len > 4)
		return; /* the bus keeps accesses inside the 4-port range */
	pthread_mutex_lock(&d->lock);
	uint8_t bytes[4];
	memcpy(bytes, &d->ioport_data, 4);
	memcpy(bytes + offset, data, len);
	memcpy(&d->ioport_data, bytes, 4);
	pthread_mutex_unlock(&d->lock);
}

static void refuse(struct pc_testdev *d, const char *what, uint64_t offset, uint32_t len)
{
	pthread_mutex_lock(&d->lock);
	d->bad++;
	log_ratelimited(&d->rl, LOG_WARN, "pc-testdev: %s: %u-byte access at offset 0x%" PRIx64
			" refused", what, len, offset);
	pthread_mutex_unlock(&d->lock);
}

static void zero_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	memset(data, 0, len);
}

static void flush_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct pc_testdev *d = opaque;
	if (offset != 0 || len != 4) {
		refuse(d, "flush page (port 0xe4 takes 32-bit writes)", offset, len);
		return;
	}
	uint32_t addr;
	memcpy(&addr, data, 4);
	uint64_t page = addr & ~(uint64_t)(PAGE - 1);
	uint8_t *host = gm_ptr(d->mem, page, PAGE);
	if (!host) {
		refuse(d, "flush page: the address is not guest RAM", page, len);
		return;
	}
	/* Write-protecting the page invalidates it in KVM's MMU (an MMU notifier); it stays
	 * readable for msivm's own threads meanwhile. */
	if (mprotect(host, PAGE, PROT_READ) || mprotect(host, PAGE, PROT_READ | PROT_WRITE)) {
		refuse(d, "flush page: mprotect failed", page, len);
		return;
	}
	pthread_mutex_lock(&d->lock);
	d->flushes++;
	pthread_mutex_unlock(&d->lock);
}

/* A wider write is split into byte writes to consecutive lines, as QEMU does for a region of
 * byte-sized registers (kvm-unit-tests' realmode test sets IRQ 11 with an outl to 0x200b). */
static void irq_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct pc_testdev *d = opaque;
	if (offset >= PC_TESTDEV_IRQ_LINES || len > PC_TESTDEV_IRQ_LINES - offset) {
		refuse(d, "IRQ line (ports 0x2000-0x2017)", offset, len);
		return;
	}
	for (uint32_t i = 0; i < len && d->irq.set_level; i++)
		d->irq.set_level(d->irq.opaque, (uint32_t)(offset + i),
				 ((const uint8_t *)data)[i] != 0);
}

static void iomem_read(void *opaque, uint64_t offset, void *data, uint32_t len)
{
	struct pc_testdev *d = opaque;
	memset(data, 0, len);
	if (offset + len > PC_TESTDEV_IOMEM_LEN)
		return;
	pthread_mutex_lock(&d->lock);
	memcpy(data, d->iomem + offset, len);
	pthread_mutex_unlock(&d->lock);
}

static void iomem_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct pc_testdev *d = opaque;
	if (offset + len > PC_TESTDEV_IOMEM_LEN)
		return;
	pthread_mutex_lock(&d->lock);
	memcpy(d->iomem + offset, data, len);
	pthread_mutex_unlock(&d->lock);
}

const struct bus_ops pc_testdev_ioport_ops = { .read = ioport_read, .write = ioport_write };
const struct bus_ops pc_testdev_flush_ops = { .read = zero_read, .write = flush_write };
const struct bus_ops pc_testdev_irq_ops = { .read = zero_read, .write = irq_write };
const struct bus_ops pc_testdev_iomem_ops = { .read = iomem_read, .write = iomem_write };
