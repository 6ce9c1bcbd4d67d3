/* Lab marker port: the probe guest writes milestone ids to port 0xf8; msivm timestamps them. */
#ifndef MSIVM_DEVICES_LAB_MARKER_H
#define MSIVM_DEVICES_LAB_MARKER_H

#include <stdint.h>

#include "bus/bus.h"

#define LAB_MARKER_PORT 0xf8
#define LAB_MARKER_SIZE 4
#define LAB_MARKER_MAX  16

/* Milestones the probe guest reports. */
enum lab_marker_id {
	LAB_MARK_READY = 1,      /* first virtio request completed: "boot to ready" */
	LAB_MARK_WORK_START = 2, /* workload starts */
	LAB_MARK_WORK_END = 3,   /* workload ends */
};

struct lab_marker {
	/* Called on every marker write, on the writing vCPU's thread (optional). */
	void (*on_mark)(void *opaque, unsigned id);
	void *opaque;
	uint64_t origin_ns;               /* CLOCK_MONOTONIC of VM creation */
	uint64_t first_ns[LAB_MARKER_MAX]; /* ns after origin of the first write of each id; 0: never */
	uint64_t count[LAB_MARKER_MAX];
};

/* A write of any width records id = low byte (ids >= 16 are ignored).
 * Reads return all-ones. Writes are atomic per field (several vCPUs). */
extern const struct bus_ops lab_marker_ops;

#endif
