/* Firecracker's configuration document (its --config-file shape, which the staging API builds too) -> checks -> msivm's run_config. */
#ifndef MSIVM_FC_FC_CONFIG_H
#define MSIVM_FC_FC_CONFIG_H

#include <jansson.h>

#include "config/run_config.h"
#include "util/error.h"

/* Checks the value of one section of the document ("boot-source", "drives", ...: an array
 * section takes the array, or one item of it when `item` is true, as a PUT /drives/ID body).
 * Sections msivm does not implement (balloon, mmds-config, cpu-config, pmem, memory-hotplug)
 * are refused with a message that says so. Returns 0 or -EINVAL with a message. */
int fc_config_check_section(const char *section, const json_t *v, bool item, struct error *e);

/* Checks a whole document (a --config-file): an object of known sections, each checked, drive
 * and interface ids unique, at most one root drive. Returns 0 or -EINVAL with a message. */
int fc_config_check(const json_t *doc, struct error *e);

/* Firecracker's defaults on an initialised run_config: 128 MiB, one vCPU, vCPU threads named
 * "fc_vcpu N", SIGTERM stops at once (no power-button grace), a guest reset ends the process. */
void fc_config_defaults(struct run_config *c);

/* Translates a checked document into c (after fc_config_defaults) through the same setters as
 * msivm's command line and --config: boot-source, machine-config, drives (the root drive
 * first, then the others in order: drive N of the document is the guest's disk N), network
 * interfaces (tap), vsock, entropy, serial. A boot_args "pci=off" or "acpi=off" is dropped
 * (msivm's devices are on PCI, described by ACPI) and the log says so once. The logger and
 * metrics are the caller's. Does not call run_config_finish. Returns 0 or -errno with a
 * message worded for a fault_message. */
int fc_config_build(const json_t *doc, struct run_config *c, struct error *e);

/* The index of drive `id` among the document's drives in the guest's order (the root drive
 * first), or -1. */
int fc_config_drive_index(const json_t *doc, const char *id);

/* A checked RateLimiter `rl` (NULL: nothing) applied to o as Firecracker applies an update:
 * a bucket not given stays as it is, one of size or refill_time 0 is no limit, any other is
 * {size, refill_time ms, one_time_burst}. */
void fc_rate_limit_apply(const json_t *rl, struct rate_limit_opts *o);

#endif
