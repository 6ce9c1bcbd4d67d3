/* Device options: a device type's own keys, read one at a time into its spec, with the value checks they share. */
#ifndef MSIVM_DEVICES_DEVICE_OPTS_H
#define MSIVM_DEVICES_DEVICE_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

struct vm_device_spec;

/* What a key's value is (a config file checks the JSON type by it). */
enum device_key_kind {
	DEVICE_KEY_STRING,
	DEVICE_KEY_UINT,
	DEVICE_KEY_SIZE,      /* "64M" or a number */
	DEVICE_KEY_FLAG,      /* the key alone, or =on / =off */
};

/* One key of a device type (irq=, vectors=, ... and bps=, ops= are every device's, read by
 * the configuration itself). id is the type's own number for it, below 32. */
struct device_key {
	const char *name;
	enum device_key_kind kind;
	unsigned id;
};

/* How the configuration words a refusal: a bad value of one key (the command line quotes the
 * value, a file names the key), a problem of the device as a whole (prefixed with the
 * option string or the file's place), or a complete message (a file that cannot be opened). */
enum device_msg { DEVICE_MSG_KEY, DEVICE_MSG_WHOLE, DEVICE_MSG_AS_IS };

/* One device's options being read. */
struct device_opts {
	struct vm_device_spec *spec;
	const char *name;     /* "--disk" or "FILE: disk[0]", for messages that name the option */
	uint32_t seen;        /* bit id: the type's key `id` was given */
	enum device_msg msg;  /* set with a refusal */
};

#define DEVICE_SEEN(id) (1u << (id))

/* A refusal worded as `how` says. Returns -EINVAL. */
int device_opt_refuse(struct device_opts *o, enum device_msg how, struct error *e,
		      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A number in [min, max] for key k into *out, or -EINVAL with "bad KEY 'VAL': use RANGE". */
int device_opt_uint(struct device_opts *o, const struct device_key *k, const char *val,
		    uint64_t min, uint64_t max, const char *range, uint64_t *out, struct error *e);

/* One of names[0..n) (value i is names[i]; NULL: no spelling) into *out, or -EINVAL with "bad
 * WHAT 'VAL': use USE" and the nearest spelling when one is close. */
int device_opt_word(struct device_opts *o, const char *what, const char *val,
		    const char *const *names, size_t n, const char *use, unsigned *out,
		    struct error *e);

/* A flag: the key alone (val NULL) or "on" sets it, "off" clears it. Returns 0 or -EINVAL. */
int device_opt_flag(struct device_opts *o, const struct device_key *k, const char *val,
		    bool *out, struct error *e);

#endif
