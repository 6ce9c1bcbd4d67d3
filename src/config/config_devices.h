/* Config devices: --rng/--disk/--console/--net values (option strings or file objects) into device specs. */
#ifndef MSIVM_CONFIG_CONFIG_DEVICES_H
#define MSIVM_CONFIG_CONFIG_DEVICES_H

#include <stdbool.h>
#include <stdint.h>

#include "config/run_config.h"

/* One device being read, key by key: the transport's keys here, the type's own through its
 * entry in the device-type table (devices/device_type.h). */
struct config_dev {
	struct vm_device_spec *d;
	const struct device_type *type;
	const char *name;   /* for messages: "--disk" on the command line, "FILE: disk[0]" in a file */
	const char *arg;    /* the option string on the command line; NULL in a file */
	uint32_t seen;      /* the transport keys given (internal) */
	struct device_opts o; /* the type's keys given, and how its last refusal is worded */
};

/* Adds a device of type t to vm with its defaults and starts reading it into *p (name and
 * arg as in struct config_dev, kept by pointer). Returns 0, or -E2BIG with a message when
 * vm already has VM_MAX_DEVICES. */
int config_dev_begin(struct vm_config *vm, enum vm_device_type t, const char *name,
		     const char *arg, struct config_dev *p, struct error *e);

/* What value `key` takes on this device. Returns 0, or -EINVAL with a message naming the
 * unknown key (and the nearest known one, when one is close). */
int config_dev_kind(const struct config_dev *p, const char *key, enum config_kind *kind,
		    struct error *e);

/* Sets `key` to `val` (NULL: the key alone, as "ro"; flags also take on and off). Returns 0
 * or -EINVAL with a message naming the key and the accepted values. */
int config_dev_set(struct config_dev *p, const char *key, const char *val, struct error *e);

/* Checks what needs every key (irq with vectors, then the type's own checks: disk path,
 * net backend and the keys it allows, ...). Returns 0 or -errno with a message. */
int config_dev_end(struct config_dev *p, struct error *e);

/* Adds a device from one option string "key=value,key,..." ("" takes every default): begin,
 * set, end. name is "--disk" on the command line (cli true: messages quote arg), "FILE:
 * disk[0]" in a file. Returns 0 or -errno with a message. */
int config_dev_parse(struct vm_config *vm, enum vm_device_type t, const char *name,
		     const char *arg, bool cli, struct error *e);

/* A rate limit's bucket, msivm's spelling of Firecracker's {size, refill_time, one_time_burst}:
 * "SIZE[/MS][+BURST]", SIZE tokens every MS ms (1000 when not given: SIZE per second), BURST
 * tokens once; bytes (true) take sizes such as 50M, ops plain numbers (1 to 1e8 per second
 * alone). "off" (when off_ok) is no limit. Returns 0 or -EINVAL. */
int rate_bucket_parse(const char *s, bool bytes, bool off_ok, struct rate_bucket_opts *o);

/* The spelling rate_bucket_parse reads back ("off" for no limit); returns buf or a constant. */
#define RATE_BUCKET_TEXT_MAX 80
const char *rate_bucket_text(const struct rate_bucket_opts *o, bool bytes,
			     char buf[RATE_BUCKET_TEXT_MAX]);

#endif
