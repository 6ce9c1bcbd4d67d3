/* --print-config: a run_config as the JSON a config file holds, in one canonical form. */
#ifndef MSIVM_CONFIG_CONFIG_PRINT_H
#define MSIVM_CONFIG_CONFIG_PRINT_H

#include <jansson.h>

#include "config/run_config.h"

/* The configuration c (after run_config_finish) as JSON text ending in a newline: every key
 * of config_keys() in that order with its effective value (null where the default has no
 * value to name, such as no initrd), every device with each key that applies to it. Equal
 * settings give equal bytes, and config_json_read reads it back to the same settings.
 * Returns a malloc'd string, or NULL with a message (a path that is not UTF-8). */
char *config_print(const struct run_config *c, struct error *e);

/* Replaces the device lists of a printed configuration (config_print's JSON, parsed) with
 * vm's devices, as the running VM has them now (a disk's image replaced, a rate limit
 * changed). Returns 0 or -EINVAL (a value JSON refused). */
int config_print_devices(json_t *root, const struct vm_config *vm);

#endif
