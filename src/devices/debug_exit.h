/* Debug-exit port: a guest byte written to port 0xf4 ends the VM with that status. */
#ifndef MSIVM_DEVICES_DEBUG_EXIT_H
#define MSIVM_DEVICES_DEBUG_EXIT_H

#include <stdbool.h>
#include <stdint.h>

#include "bus/bus.h"

#define DEBUG_EXIT_PORT 0xf4
#define DEBUG_EXIT_SIZE 4

/* Unlike QEMU's isa-debug-exit (process status (V << 1) | 1), msivm exits
 * with V itself, so a guest can report 0 as success; `qemu_status` (set by
 * --testdev, for kvm-unit-tests) takes QEMU's convention. */
struct debug_exit {
	void (*request_exit)(void *opaque, int status);
	void *opaque;
	bool qemu_status;
};

/* Handlers for the 4-port range; a write of any width ends the VM with the
 * low byte V of the value (V, or ((V << 1) | 1) & 0xff with qemu_status).
 * Reads return all-ones. */
extern const struct bus_ops debug_exit_ops;

#endif
