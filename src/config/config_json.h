/* Config files: a JSON object whose keys are `msivm run`'s long option names, into a run_config. */
#ifndef MSIVM_CONFIG_CONFIG_JSON_H
#define MSIVM_CONFIG_CONFIG_JSON_H

#include <stddef.h>

#include "config/run_config.h"

/* Reads the config file at `path` into c, on top of what c holds: each key given replaces
 * the setting (null keeps it), each device listed is added. Returns 0, or -errno with a
 * message naming the file and, as the case may be, the line and column of malformed JSON,
 * the unknown key (with the nearest known one) or the key whose value is wrong. */
int config_json_load(struct run_config *c, const char *path, struct error *e);

/* The same from `len` bytes of JSON text; `origin` names it in messages. */
int config_json_read(struct run_config *c, const char *text, size_t len, const char *origin,
		     struct error *e);

/* --restore's value (state=FILE[,mem=FILE][,copy][,paused][,tap=NAME]...), or a config file's
 * "restore": reads and checks the snapshot's state file, keeps it in c->restore_root, and reads
 * its configuration into c (the keys of the process that took it, such as serial, api-socket,
 * log and stats files, left out); mem= defaults to the RAM file a --mem-file snapshot left;
 * tap=NAME gives the Nth NIC on a tap its own. Returns 0 or -errno with a message naming the
 * file and the problem. */
int config_restore_load(struct run_config *c, const char *arg, struct error *e);

/* Whether `key` is a host option a restore may set (serial, api-socket, log-file ...), as
 * opposed to the VM's own configuration, which comes from the snapshot. */
bool config_restore_host_key(const char *key);

#endif
