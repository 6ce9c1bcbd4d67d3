/* VM statistics: interrupts per device, vector and delivery path, and VM exits by reason, as text or JSON. */
#ifndef MSIVM_VMM_VM_STATS_H
#define MSIVM_VMM_VM_STATS_H

#include <jansson.h>
#include <stdio.h>

#include "util/error.h"

struct vm;

/* Prints a /proc/interrupts-like table of every virtio device's vectors
 * (delivered by irqfd, pended while masked, replayed on unmask, dropped;
 * INTx asserts and resamples) and the VM exits by reason summed over the
 * vCPUs (KVM binary stats). Call after vm_run returned, before vm_destroy. */
void vm_stats_print(struct vm *vm, FILE *out);

/* Writes the same figures as JSON to `out` (opened by the caller before any
 * jail; `name` is its path for messages). Returns 0 or -errno with a message. */
int vm_stats_write_json(struct vm *vm, FILE *out, const char *name, struct error *err);

/* The JSON object vm_stats_write_json writes (new reference). While the VM
 * runs (the API's GET /metrics) the counters are read as their owner
 * threads update them: each value is whole, the set is no snapshot. */
json_t *vm_stats_json(struct vm *vm);

/* The lab marker's hook (port 0xf8, vm->marker.on_mark; opaque is the vm): at the guest's
 * workload start and end marks, records the counters the stats JSON's "workload" object
 * subtracts (KVM exits, msivm's own exits, ISR reads, CPU time of the vCPU and I/O threads).
 * Other marks change nothing. Runs on the vCPU thread that wrote the port. */
void vm_stats_mark(void *opaque, unsigned id);

#endif
