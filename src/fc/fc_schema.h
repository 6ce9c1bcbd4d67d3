/* Firecracker's JSON bodies: the field tables of its swagger definitions and a strict checker (types, required fields, enums, unknown fields refused). */
#ifndef MSIVM_FC_FC_SCHEMA_H
#define MSIVM_FC_FC_SCHEMA_H

#include <jansson.h>
#include <stdbool.h>

#include "util/error.h"

enum fc_type { FC_STRING, FC_BOOL, FC_UINT, FC_WORD, FC_OBJECT, FC_ARRAY };

struct fc_schema;

/* One field of a definition. */
struct fc_field {
	const char *name;
	enum fc_type type;
	bool required;
	const struct fc_schema *sub;   /* FC_OBJECT: its definition; FC_ARRAY: its items' */
	const char *const *words;      /* FC_WORD: the accepted strings, NULL-terminated */
	long long min, max;            /* FC_UINT: the accepted range (max 0: no upper bound) */
};

/* A definition: its name (swagger's) and fields, up to one with a NULL name. */
struct fc_schema {
	const char *name;
	const struct fc_field *fields;
};

/* The definitions msivm reads (swagger names). */
extern const struct fc_schema fc_boot_source, fc_machine_config, fc_machine_config_patch,
	fc_drive, fc_partial_drive, fc_network_interface, fc_partial_network_interface, fc_vsock,
	fc_logger, fc_metrics, fc_entropy, fc_action, fc_vm_state, fc_snapshot_create,
	fc_snapshot_load, fc_serial;

/* Checks `v` against definition `s`: an object, every required field there, each field of its
 * type and range (nested definitions too), no field `s` does not name. Returns 0 or -EINVAL
 * with a message naming the field, worded as Firecracker's. */
int fc_schema_check(const struct fc_schema *s, const json_t *v, struct error *e);

/* The value of a FC_WORD field whose words are case-insensitive (the logger's level): the
 * index of `s` in `words`, or -1. */
int fc_word_index(const char *const *words, const char *s, bool nocase);

#endif
