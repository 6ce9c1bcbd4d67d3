/* Config device keys: what config_devices.c and config_net.c share (not for other modules). */
#ifndef MSIVM_CONFIG_CONFIG_DEV_KEYS_H
#define MSIVM_CONFIG_CONFIG_DEV_KEYS_H

#include "config/config_devices.h"
#include "config/config_names.h"

enum dev_key_id {
	K_IRQ, K_VECTORS, K_IRQPATH, K_BPS, K_OPS, K_LATENCY, K_PATH, K_RO, K_READONLY, K_QUEUES,
	K_NUM_QUEUES, K_ENGINE, K_OUT, K_IN, K_SOCKET, K_MAX, K_BACKEND, K_TAP, K_IFNAME, K_MAC, K_MTU,
	K_PEER, K_RATE, K_SIZE, K_SOURCE, K_POLL, K_COALESCE,
};

struct dev_key {
	const char *name;
	enum dev_key_id id;
	enum config_kind kind;
	unsigned types;
};

#define SEEN(id) (1u << (id))

/* A message about one key (`cross` false: prefixed in a file only, as the command line
 * names the value) or about the device as a whole (prefixed with where it was given).
 * Returns -EINVAL. */
int cdev_err(const struct config_dev *p, bool cross, struct error *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* An enumerated value: `parsed` is what its module's parse function returned; a refusal
 * lists the spellings (`use`) and the nearest one. Returns 0 or -EINVAL. */
int cdev_enum(const struct config_dev *p, int parsed, enum config_enum which,
		    const char *what, const char *val, const char *use, struct error *e);

/* A number in [min, max] for key k into *out, or -EINVAL with "bad KEY 'VAL': use RANGE". */
int cdev_uint(const struct config_dev *p, const struct dev_key *k, const char *val,
		    uint64_t min, uint64_t max, const char *range, uint64_t *out, struct error *e);

/* The keys of --net (config_net.c): set one, check them all. Return 0 or -EINVAL. */
int cdev_set_net(struct config_dev *p, const struct dev_key *k, const char *val,
		       struct error *e);
int cdev_end_net(struct config_dev *p, struct error *e);

#endif
