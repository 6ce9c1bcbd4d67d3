/* Bus: a sorted range map (port or MMIO) that routes one guest access to one device. */
#ifndef MSIVM_BUS_BUS_H
#define MSIVM_BUS_BUS_H

#include <pthread.h>
#include <stdint.h>

#include "util/log.h"

/* A device's handlers. `offset` is relative to the range base and the bus
 * guarantees offset + len <= range length and 1 <= len <= 8. Handlers are
 * called without any bus lock held, so they may (un)register ranges. Both
 * hooks are optional: a missing read reads as all-ones, a missing write is
 * dropped. */
struct bus_ops {
	void (*read)(void *opaque, uint64_t offset, void *data, uint32_t len);
	void (*write)(void *opaque, uint64_t offset, const void *data, uint32_t len);
};

struct bus_range {
	uint64_t base;
	uint64_t len;
	const struct bus_ops *ops;
	void *opaque;
	const char *name;
};

struct bus {
	const char *name; /* "pio" or "mmio", for log lines */
	pthread_rwlock_t lock;
	struct bus_range *ranges; /* sorted by base, never overlapping */
	uint32_t count, capacity;
	uint64_t unclaimed; /* accesses nobody claimed */
	pthread_mutex_t rl_lock;
	struct ratelimit rl;
};

/* Initialises an empty bus. Returns 0 or -errno. */
int bus_init(struct bus *bus, const char *name);
/* Frees the range table; the devices themselves belong to their owners. */
void bus_destroy(struct bus *bus);

/* Claims [base, base+len) for a device. Returns 0, -EINVAL for a zero length or
 * a range that wraps past 2^64, -EEXIST if it overlaps a claimed range, or
 * -ENOMEM. `ops` and `name` must outlive the registration. */
int bus_register(struct bus *bus, uint64_t base, uint64_t len,
		 const struct bus_ops *ops, void *opaque, const char *name);

/* Releases the range that starts at `base` and belongs to `opaque`.
 * Returns 0 or -ENOENT. */
int bus_unregister(struct bus *bus, uint64_t base, void *opaque);

/* Copies the range containing `addr` into *out. Returns 0 or -ENOENT. */
int bus_lookup(struct bus *bus, uint64_t addr, struct bus_range *out);

/* Dispatches a guest read of `len` (1..8) bytes at `addr`. An access that no
 * range fully contains reads as all-ones, is counted and logged (rate-limited).
 * Returns 0 if a device handled it, -ENOENT otherwise. */
int bus_read(struct bus *bus, uint64_t addr, void *data, uint32_t len);

/* Dispatches a guest write; an unclaimed write is dropped, counted and
 * logged. Returns 0 if a device handled it, -ENOENT otherwise. */
int bus_write(struct bus *bus, uint64_t addr, const void *data, uint32_t len);

#endif
