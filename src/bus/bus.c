/* Bus: sorted range map with overlap checks; the single exit -> device hop. */
#include "bus/bus.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int bus_init(struct bus *bus, const char *name)
{
	memset(bus, 0, sizeof(*bus));
	bus->name = name;
	if (pthread_rwlock_init(&bus->lock, NULL))
		return -ENOMEM;
	if (pthread_mutex_init(&bus->rl_lock, NULL)) {
		pthread_rwlock_destroy(&bus->lock);
		return -ENOMEM;
	}
	return 0;
}

void bus_destroy(struct bus *bus)
{
	free(bus->ranges);
	bus->ranges = NULL;
	bus->count = bus->capacity = 0;
	pthread_mutex_destroy(&bus->rl_lock);
	pthread_rwlock_destroy(&bus->lock);
}

/* Index of the first range whose base is > addr (caller holds the lock). */
static uint32_t upper_bound(const struct bus *bus, uint64_t addr)
{
	uint32_t lo = 0, hi = bus->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (bus->ranges[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Range containing addr, or NULL (caller holds the lock). */
static const struct bus_range *find(const struct bus *bus, uint64_t addr)
{
	uint32_t i = upper_bound(bus, addr);
	if (i == 0)
		return NULL;
	const struct bus_range *r = &bus->ranges[i - 1];
	return addr - r->base < r->len ? r : NULL;
}

int bus_register(struct bus *bus, uint64_t base, uint64_t len,
		 const struct bus_ops *ops, void *opaque, const char *name)
{
	if (len == 0 || base + len - 1 < base)
		return -EINVAL;
	uint64_t last = base + len - 1;
	int ret = 0;

	pthread_rwlock_wrlock(&bus->lock);
	uint32_t i = upper_bound(bus, last);
	/* ranges[i-1] is the last range starting at or before `last`. */
	if (i > 0) {
		const struct bus_range *prev = &bus->ranges[i - 1];
		if (prev->base + (prev->len - 1) >= base) {
			ret = -EEXIST;
			goto out;
		}
	}
	if (bus->count == bus->capacity) {
		uint32_t cap = bus->capacity ? bus->capacity * 2 : 16;
		struct bus_range *n = realloc(bus->ranges, cap * sizeof(*n));
		if (!n) {
			ret = -ENOMEM;
			goto out;
		}
		bus->ranges = n;
		bus->capacity = cap;
	}
	memmove(&bus->ranges[i + 1], &bus->ranges[i], (bus->count - i) * sizeof(*bus->ranges));
	bus->ranges[i] = (struct bus_range){
		.base = base, .len = len, .ops = ops, .opaque = opaque, .name = name,
	};
	bus->count++;
out:
	pthread_rwlock_unlock(&bus->lock);
	return ret;
}

int bus_unregister(struct bus *bus, uint64_t base, void *opaque)
{
	int ret = -ENOENT;
	pthread_rwlock_wrlock(&bus->lock);
	uint32_t i = upper_bound(bus, base);
	if (i > 0 && bus->ranges[i - 1].base == base && bus->ranges[i - 1].opaque == opaque) {
		memmove(&bus->ranges[i - 1], &bus->ranges[i], (bus->count - i) * sizeof(*bus->ranges));
		bus->count--;
		ret = 0;
	}
	pthread_rwlock_unlock(&bus->lock);
	return ret;
}

int bus_lookup(struct bus *bus, uint64_t addr, struct bus_range *out)
{
	pthread_rwlock_rdlock(&bus->lock);
	const struct bus_range *r = find(bus, addr);
	if (r)
		*out = *r;
	pthread_rwlock_unlock(&bus->lock);
	return r ? 0 : -ENOENT;
}

/* Finds the range fully containing [addr, addr+len) and copies it, so the
 * handler runs without the lock. Devices live as long as the VM. */
static int claim(struct bus *bus, uint64_t addr, uint32_t len, struct bus_range *out)
{
	if (len == 0 || len > 8 || addr + len - 1 < addr)
		return -ENOENT;
	pthread_rwlock_rdlock(&bus->lock);
	const struct bus_range *r = find(bus, addr);
	int ok = r && len <= r->len - (addr - r->base); /* find() gave addr - base < len */
	if (ok)
		*out = *r;
	pthread_rwlock_unlock(&bus->lock);
	return ok ? 0 : -ENOENT;
}

static void unclaimed(struct bus *bus, const char *dir, uint64_t addr, uint32_t len)
{
	pthread_mutex_lock(&bus->rl_lock);
	bus->unclaimed++;
	log_ratelimited(&bus->rl, LOG_INFO, "%s: unclaimed %s of %u bytes at 0x%" PRIx64,
			bus->name, dir, len, addr);
	pthread_mutex_unlock(&bus->rl_lock);
}

int bus_read(struct bus *bus, uint64_t addr, void *data, uint32_t len)
{
	struct bus_range r;
	if (claim(bus, addr, len, &r)) {
		memset(data, 0xff, len > 8 ? 8 : len);
		unclaimed(bus, "read", addr, len);
		return -ENOENT;
	}
	if (r.ops->read)
		r.ops->read(r.opaque, addr - r.base, data, len);
	else
		memset(data, 0xff, len);
	return 0;
}

int bus_write(struct bus *bus, uint64_t addr, const void *data, uint32_t len)
{
	struct bus_range r;
	if (claim(bus, addr, len, &r)) {
		unclaimed(bus, "write", addr, len);
		return -ENOENT;
	}
	if (r.ops->write)
		r.ops->write(r.opaque, addr - r.base, data, len);
	return 0;
}
