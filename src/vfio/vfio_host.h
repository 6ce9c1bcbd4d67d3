/* VFIO host side: the type1 container, the device's group and fd, guest RAM mapped for its DMA, and the kernel ops. */
#ifndef MSIVM_VFIO_VFIO_HOST_H
#define MSIVM_VFIO_VFIO_HOST_H

#include <stdint.h>

#include "core/guest_mem.h"
#include "util/error.h"
#include "vfio/vfio_dev.h"

#define VFIO_HOST_NREGIONS 8   /* BARs 0-5, ROM, config */

struct vfio_host {
	int container, group, device;
	int vm_fd;
	char bdf[32];
	int group_id;
	uint64_t region_off[VFIO_HOST_NREGIONS]; /* each region's offset in the device fd */
	uint64_t region_size[VFIO_HOST_NREGIONS];
	const struct guest_mem *mem;
	uint32_t dma_mapped;       /* guest_mem regions mapped for DMA, from the first */
};

/* Opens the device at `path` (/sys/bus/pci/devices/DDDD:BB:DD.F) for passthrough: checks it
 * is bound to vfio-pci, alone in its IOMMU group, behind an IOMMU with interrupt remapping;
 * sets up the type1 container; gets the device fd and fills desc (regions with their
 * sparse-mmap areas, interrupt counts, reset); maps every region of `mem` for the device's
 * DMA (IOVA = guest physical address). `vm_fd` is the VM's (KVM slots for BAR areas).
 * Returns 0 or -errno with one message saying what to do; on error nothing is left open. */
int vfio_host_open(struct vfio_host *h, const char *path, const struct guest_mem *mem,
		   int vm_fd, struct vfio_dev_desc *desc, struct error *err);

/* Unmaps the DMA mappings (in the order they were made), closes the device, the group and
 * the container. Safe on a partial open and twice. */
void vfio_host_close(struct vfio_host *h);

/* The ops over a vfio_host (ctx is the struct vfio_host). */
extern const struct vfio_dev_ops vfio_host_ops;

#endif
