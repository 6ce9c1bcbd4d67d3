/* Test support: a virtio driver's side of the common configuration, for device tests without a guest. */
#ifndef MSIVM_TESTS_FAKE_DRIVER_H
#define MSIVM_TESTS_FAKE_DRIVER_H

#include <endian.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "virtio/virtio_pci.h"
#include "virtio/virtio_pci_common.h"

/* Common-configuration write/read, under the transport lock as BAR0 would take it. */
static inline void vdrv_write(struct virtio_pci *t, uint64_t off, uint64_t v, uint32_t len)
{
	pthread_mutex_lock(&t->lock);
	vpci_common_write(t, off, &v, len);
	pthread_mutex_unlock(&t->lock);
}

static inline uint64_t vdrv_read(struct virtio_pci *t, uint64_t off, uint32_t len)
{
	uint64_t v = 0;
	pthread_mutex_lock(&t->lock);
	vpci_common_read(t, off, &v, len);
	pthread_mutex_unlock(&t->lock);
	return v;
}

/* Device-specific configuration read (little-endian). */
static inline uint64_t vdrv_config(struct virtio_pci *t, uint32_t off, uint32_t len)
{
	uint64_t v = 0;
	pthread_mutex_lock(&t->lock);
	t->ops->config_read(t->opaque, off, &v, len);
	pthread_mutex_unlock(&t->lock);
	return le64toh(v);
}

/* Reset, ACKNOWLEDGE, DRIVER: where a driver reads the device's configuration
 * before it picks features (3.1.1 step 4, 2.5.1). */
static inline void vdrv_acknowledge(struct virtio_pci *t)
{
	vdrv_write(t, VPCI_STATUS, 0, 1);
	vdrv_write(t, VPCI_STATUS, VIRTIO_STATUS_ACK, 1);
	vdrv_write(t, VPCI_STATUS, VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER, 1);
}

/* Reset, ACKNOWLEDGE, DRIVER, then every offered feature but `drop`, and
 * FEATURES_OK. Returns the features the device offered; the caller checks
 * that FEATURES_OK stuck. */
static inline uint64_t vdrv_negotiate(struct virtio_pci *t, uint64_t drop)
{
	vdrv_acknowledge(t);
	vdrv_write(t, VPCI_DFSELECT, 0, 4);
	uint64_t offered = vdrv_read(t, VPCI_DF, 4);
	vdrv_write(t, VPCI_DFSELECT, 1, 4);
	offered |= vdrv_read(t, VPCI_DF, 4) << 32;
	uint64_t want = offered & ~drop;
	vdrv_write(t, VPCI_GFSELECT, 0, 4);
	vdrv_write(t, VPCI_GF, (uint32_t)want, 4);
	vdrv_write(t, VPCI_GFSELECT, 1, 4);
	vdrv_write(t, VPCI_GF, want >> 32, 4);
	vdrv_write(t, VPCI_STATUS,
		   VIRTIO_STATUS_ACK | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK, 1);
	return offered;
}

/* Programs queue q's size and ring addresses and enables it. */
static inline void vdrv_enable_queue(struct virtio_pci *t, uint16_t q, uint16_t size,
				     uint64_t desc, uint64_t avail, uint64_t used)
{
	vdrv_write(t, VPCI_Q_SELECT, q, 2);
	vdrv_write(t, VPCI_Q_SIZE, size, 2);
	vdrv_write(t, VPCI_Q_DESC_LO, desc, 8);
	vdrv_write(t, VPCI_Q_DRIVER_LO, avail, 8);
	vdrv_write(t, VPCI_Q_DEVICE_LO, used, 8);
	vdrv_write(t, VPCI_Q_ENABLE, 1, 2);
}

/* BAR0 accesses exactly as the guest makes them (through the bus handler). */
static inline uint64_t vdrv_bar0_read(struct virtio_pci *t, uint64_t off, uint32_t len)
{
	uint64_t v = 0;
	t->func.bars[0].ops->read(t->func.bars[0].opaque, off, &v, len);
	return v;
}

static inline void vdrv_bar0_write(struct virtio_pci *t, uint64_t off, uint64_t v, uint32_t len)
{
	t->func.bars[0].ops->write(t->func.bars[0].opaque, off, &v, len);
}

/* Runs an event loop until *stop (for a device's completions on its own thread). */
static inline void vdrv_run_loop(struct evloop *l, atomic_bool *stop)
{
	while (!atomic_load(stop))
		if (evloop_run_once(l, 10) < 0)
			break;
}

/* Waits up to 5 s for the used index at `used_idx` (host pointer) to reach `want`. */
static inline bool vdrv_wait_used_idx(const uint8_t *used_idx, uint16_t want)
{
	for (int i = 0; i < 5000; i++) {
		if (__atomic_load_n((const uint16_t *)used_idx, __ATOMIC_ACQUIRE) == want)
			return true;
		usleep(1000);
	}
	return false;
}

#endif
