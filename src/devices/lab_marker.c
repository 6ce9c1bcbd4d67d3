/* Lab marker port: guest milestone write -> host monotonic timestamp. */
#include "devices/lab_marker.h"

#include <stdbool.h>
#include <time.h>

static void marker_write(void *opaque, uint64_t offset, const void *data, uint32_t len)
{
	struct lab_marker *m = opaque;
	uint8_t id = ((const uint8_t *)data)[0];
	if (offset != 0 || id >= LAB_MARKER_MAX)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec - m->origin_ns;
	uint64_t zero = 0;
	__atomic_compare_exchange_n(&m->first_ns[id], &zero, now ? now : 1, false, __ATOMIC_RELAXED,
				    __ATOMIC_RELAXED);
	__atomic_add_fetch(&m->count[id], 1, __ATOMIC_RELAXED);
	if (m->on_mark)
		m->on_mark(m->opaque, id);
}

const struct bus_ops lab_marker_ops = {
	.write = marker_write,
};
