/* Guest memory: RAM regions around the MMIO hole and bounds-checked translation. */
#include "core/guest_mem.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

int guest_mem_init(struct guest_mem *gm, void *host, uint64_t size,
		   uint64_t hole_start, uint64_t hole_end)
{
	if (!host || size == 0 || hole_end < hole_start)
		return -EINVAL;
	memset(gm, 0, sizeof(*gm));
	gm->host = host;
	gm->size = size;
	uint64_t low = size < hole_start ? size : hole_start;
	gm->regions[gm->nregions++] = (struct guest_mem_region){ 0, low, gm->host };
	if (size > low)
		gm->regions[gm->nregions++] =
			(struct guest_mem_region){ hole_end, size - low, gm->host + low };
	return 0;
}

int guest_mem_alloc(struct guest_mem *gm, uint64_t size, uint64_t hole_start, uint64_t hole_end)
{
	return guest_mem_map_file(gm, -1, size, hole_start, hole_end);
}

int guest_mem_map_file(struct guest_mem *gm, int fd, uint64_t size, uint64_t hole_start,
		       uint64_t hole_end)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       fd < 0 ? MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE : MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	/* Guest memory stays out of core dumps (the guest's secrets are not msivm's). */
	(void)madvise(p, size, MADV_DONTDUMP);
	int ret = guest_mem_init(gm, p, size, hole_start, hole_end);
	if (ret) {
		munmap(p, size);
		return ret;
	}
	gm->owned = true;
	return 0;
}

void guest_mem_free(struct guest_mem *gm)
{
	if (gm->owned && gm->host)
		munmap(gm->host, gm->size);
	gm->host = NULL;
	gm->nregions = 0;
}

void *gm_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	for (uint32_t i = 0; i < gm->nregions; i++) {
		const struct guest_mem_region *r = &gm->regions[i];
		if (gpa < r->gpa)
			continue;
		uint64_t off = gpa - r->gpa;
		if (off >= r->size || len > r->size - off)
			continue;
		return r->host + off;
	}
	return NULL;
}
