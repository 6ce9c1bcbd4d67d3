/* Guest memory: the host mapping of guest RAM and the checked gpa -> host translation. */
#ifndef MSIVM_CORE_GUEST_MEM_H
#define MSIVM_CORE_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GUEST_MEM_MAX_REGIONS 2

struct guest_mem_region {
	uint64_t gpa;
	uint64_t size;
	uint8_t *host;
};

struct guest_mem {
	uint8_t *host;   /* one host mapping holding every region back to back */
	uint64_t size;   /* total RAM in bytes */
	uint32_t nregions;
	struct guest_mem_region regions[GUEST_MEM_MAX_REGIONS];
	bool owned;      /* host was mmap'd by guest_mem_alloc */
};

/* Lays `size` bytes of RAM out around the hole [hole_start, hole_end) over the
 * caller's buffer `host` (which must hold `size` bytes). Used by tests with
 * plain malloc'd memory. Returns 0 or -EINVAL. */
int guest_mem_init(struct guest_mem *gm, void *host, uint64_t size,
		   uint64_t hole_start, uint64_t hole_end);

/* Like guest_mem_init, but maps anonymous memory itself. Returns 0 or -errno. */
int guest_mem_alloc(struct guest_mem *gm, uint64_t size, uint64_t hole_start, uint64_t hole_end);

/* Like guest_mem_alloc, over the file `fd` (at least `size` bytes) mapped shared: what the
 * guest writes lands in the file. fd -1: anonymous, as guest_mem_alloc. Returns 0 or -errno. */
int guest_mem_map_file(struct guest_mem *gm, int fd, uint64_t size, uint64_t hole_start,
		       uint64_t hole_end);

/* Unmaps memory mapped by guest_mem_alloc; a no-op for caller-owned memory. */
void guest_mem_free(struct guest_mem *gm);

/* Host pointer for guest range [gpa, gpa+len), or NULL unless the whole range
 * lies inside one RAM region. Overflow-safe for any gpa and len from a guest. */
void *gm_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len);

/* True if [gpa, gpa+len) lies inside one RAM region. */
static inline bool gm_contains(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	return gm_ptr(gm, gpa, len) != NULL;
}

#endif
