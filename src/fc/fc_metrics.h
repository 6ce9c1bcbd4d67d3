/* Firecracker's metrics and logger sinks: files or FIFOs written without blocking; metrics as one JSON object per line in Firecracker's shape. */
#ifndef MSIVM_FC_FC_METRICS_H
#define MSIVM_FC_FC_METRICS_H

#include <jansson.h>

#include "fc/fc.h"
#include "util/log.h"

/* Firecracker's log level (Error, Warning, Info, Debug, Trace, Off; any case) as msivm's: Trace
 * is debug, Off is error. Returns 0 or -EINVAL. */
int fc_log_level(const char *s, enum log_level *out);

/* Opens a checked "metrics" section's metrics_path (fc_open_sink) as fc->metrics_fd; a second
 * one is refused, as Firecracker refuses it. fc->lock held. Returns 0 or -errno with a message. */
int fc_metrics_open(struct fc_vmm *fc, const json_t *metrics, struct error *e);

/* Writes one line: {"utc_timestamp_ms", "block", "block_<drive_id>"..., "net",
 * "net_<iface_id>"..., "vsock", "vcpu"} from the running VM's counters (only the timestamp
 * before it runs). A reader that is not keeping up loses the line, never stalls msivm.
 * fc->lock held. Returns 0 or -errno with a message (no metrics configured). */
int fc_metrics_flush(struct fc_vmm *fc, struct error *e);

/* The API thread's tick (api_target.tick): once the VM runs, a line at once and then every
 * 60 s, as Firecracker flushes its metrics periodically. */
void fc_metrics_tick(struct api_target *t);

/* The metrics object itself (for the flush and the tests), from msivm's statistics JSON
 * `stats` (vm_stats_json; NULL before the VM runs) and the document's drive and interface
 * ids. Returns a new object. */
json_t *fc_metrics_object(const json_t *stats, const json_t *doc, long long utc_ms);

#endif
