/* Config devices: one key table for the four virtio devices, value checks, cross-key checks. */
#include "config/config_dev_keys.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/parse.h"

#define T_RNG (1u << VM_DEV_RNG)
#define T_BLK (1u << VM_DEV_BLK)
#define T_CON (1u << VM_DEV_CONSOLE)
#define T_NET (1u << VM_DEV_NET)
#define T_ALL (T_RNG | T_BLK | T_CON | T_NET)

/* readonly, num_queues and tap are cloud-hypervisor's spellings (aliases). */
static const struct dev_key dev_keys[] = {
	{ "path", K_PATH, CONFIG_STRING, T_BLK | T_NET },
	{ "ro", K_RO, CONFIG_FLAG, T_BLK },
	{ "readonly", K_READONLY, CONFIG_FLAG, T_BLK },
	{ "backend", K_BACKEND, CONFIG_STRING, T_NET },
	{ "tap", K_TAP, CONFIG_STRING, T_NET },
	{ "ifname", K_IFNAME, CONFIG_STRING, T_NET },
	{ "peer", K_PEER, CONFIG_STRING, T_NET },
	{ "rate", K_RATE, CONFIG_UINT, T_NET },
	{ "size", K_SIZE, CONFIG_UINT, T_NET },
	{ "mac", K_MAC, CONFIG_STRING, T_NET },
	{ "queues", K_QUEUES, CONFIG_UINT, T_BLK | T_NET },
	{ "num_queues", K_NUM_QUEUES, CONFIG_UINT, T_BLK | T_NET },
	{ "mtu", K_MTU, CONFIG_UINT, T_NET },
	{ "engine", K_ENGINE, CONFIG_STRING, T_BLK },
	{ "out", K_OUT, CONFIG_STRING, T_CON },
	{ "in", K_IN, CONFIG_STRING, T_CON },
	{ "socket", K_SOCKET, CONFIG_STRING, T_CON },
	{ "max", K_MAX, CONFIG_SIZE, T_CON },
	{ "latency", K_LATENCY, CONFIG_UINT, T_RNG },
	{ "source", K_SOURCE, CONFIG_STRING, T_RNG },
	{ "irq", K_IRQ, CONFIG_STRING, T_ALL },
	{ "vectors", K_VECTORS, CONFIG_UINT, T_ALL },
	{ "irqpath", K_IRQPATH, CONFIG_STRING, T_ALL },
	{ "poll", K_POLL, CONFIG_UINT, T_ALL },
	{ "coalesce", K_COALESCE, CONFIG_UINT_WORD, T_ALL },
	{ "bps", K_BPS, CONFIG_SIZE, T_RNG | T_BLK | T_NET },
	{ "ops", K_OPS, CONFIG_UINT, T_RNG | T_BLK | T_NET },
};
#define NKEYS (sizeof(dev_keys) / sizeof(dev_keys[0]))

const char *config_dev_type_name(enum vm_device_type t)
{
	static const char *const names[] = {
		[VM_DEV_RNG] = "rng", [VM_DEV_BLK] = "disk", [VM_DEV_CONSOLE] = "console",
		[VM_DEV_NET] = "net",
	};
	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "device";
}

/* A message about one key (`cross` false: prefixed in a file only, as the command line
 * names the value) or about the device as a whole (prefixed with where it was given). */
int cdev_err(const struct config_dev *p, bool cross, struct error *e, const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!p->arg)
		return error_set(e, -EINVAL, "%s: %s", p->name, msg);
	if (cross)
		return error_set(e, -EINVAL, "%s %.100s: %s", p->name, p->arg, msg);
	return error_set(e, -EINVAL, "%s", msg);
}

int config_dev_begin(struct vm_config *vm, enum vm_device_type t, const char *name,
		     const char *arg, struct config_dev *p, struct error *e)
{
	if (vm->ndevices == VM_MAX_DEVICES)
		return error_set(e, -E2BIG, "too many devices (at most %d)", VM_MAX_DEVICES);
	struct vm_device_spec *d = &vm->devices[vm->ndevices++];
	memset(d, 0, sizeof(*d));
	d->type = t;
	d->irq = (struct virtio_pci_config){ .mode = IRQ_MODE_MSIX, .vectors = -1,
					     .path = IRQ_PATH_IRQFD,
					     .coalesce_us = t == VM_DEV_BLK ? VIRTIO_PCI_COALESCE_DEFAULT_US : 0 };
	d->blk = (struct virtio_blk_opts){ .queues = 0, .engine = BLK_ENGINE_AUTO }; /* 0: one per vCPU */
	d->console.max_out = VIRTIO_CONSOLE_OUT_MAX;
	d->net = (struct virtio_net_opts){ .queues = 1, .be = { .nqueues = 1, .rate = 1000,
		.size = 1024, .peer_mode = NET_PEER_RESPONDER } };
	*p = (struct config_dev){ .d = d, .name = name, .arg = arg };
	return 0;
}

/* The key `key` of this device type, or NULL with a message that names it (as "key=val"
 * on the command line) and suggests the nearest key when one is close. */
static const struct dev_key *find_key(const struct config_dev *p, const char *key,
				      const char *val, struct error *e)
{
	const char *names[NKEYS];
	for (size_t i = 0; i < NKEYS; i++) {
		bool mine = dev_keys[i].types & (1u << p->d->type);
		if (mine && !strcmp(dev_keys[i].name, key))
			return &dev_keys[i];
		names[i] = mine ? dev_keys[i].name : NULL;
	}
	char hint[64];
	config_hint(key, names, NKEYS, "", hint, sizeof(hint));
	if (p->arg)
		cdev_err(p, false, e, "unknown device option '%.100s%s%.100s' for %s%s", key,
			 val ? "=" : "", val ? val : "", p->name, hint);
	else
		cdev_err(p, false, e, "unknown key '%.100s'%s", key, hint);
	return NULL;
}

int config_dev_kind(const struct config_dev *p, const char *key, enum config_kind *kind,
		    struct error *e)
{
	const struct dev_key *k = find_key(p, key, NULL, e);
	if (!k)
		return -EINVAL;
	*kind = k->kind;
	return 0;
}

/* An enumerated value: parsed by its module, refused with the spellings and a suggestion. */
int cdev_enum(const struct config_dev *p, int parsed, enum config_enum which,
	      const char *what, const char *val, const char *use, struct error *e)
{
	char hint[64];
	if (parsed == 0)
		return 0;
	return cdev_err(p, false, e, "bad %s '%.100s': use %s%s", what, val, use,
			config_enum_hint(which, val, hint, sizeof(hint)));
}

/* A number in [min, max] for key k, or the message "bad KEY 'VAL': use RANGE". */
int cdev_uint(const struct config_dev *p, const struct dev_key *k, const char *val,
	      uint64_t min, uint64_t max, const char *range, uint64_t *out, struct error *e)
{
	if (parse_uint(val, min, max, out))
		return cdev_err(p, false, e, "bad %s '%.100s': use %s", k->name, val, range);
	return 0;
}

/* A disk path into a fixed buffer of `size` bytes. */
static int set_path(const struct config_dev *p, const struct dev_key *k, const char *val,
		    char *dst, size_t size, struct error *e)
{
	if (strlen(val) >= size)
		return cdev_err(p, false, e, "%s %s= is longer than %zu bytes", p->name, k->name,
				size - 1);
	snprintf(dst, size, "%s", val);
	return 0;
}

static int set_flag(const struct config_dev *p, const struct dev_key *k, const char *val,
		    bool *out, struct error *e)
{
	if (!val || !strcmp(val, "on"))
		*out = true;
	else if (!strcmp(val, "off"))
		*out = false;
	else
		return cdev_err(p, false, e, "bad %s '%.100s': use %s, %s=on or %s=off", k->name, val,
				k->name, k->name, k->name);
	return 0;
}

int config_dev_set(struct config_dev *p, const char *key, const char *val, struct error *e)
{
	const struct dev_key *k = find_key(p, key, val, e);
	if (!k)
		return -EINVAL;
	if (!val && k->kind != CONFIG_FLAG)
		return cdev_err(p, false, e, "device option '%s' needs a value (%s=...)", key, key);
	p->seen |= SEEN(k->id);
	struct vm_device_spec *d = p->d;
	uint64_t v = 0;
	int ret = 0;
	switch (k->id) {
	case K_IRQ:
		return cdev_enum(p, irq_mode_parse(val, &d->irq.mode), CONFIG_E_IRQ, "irq mode", val,
				 "msix, msix-shared, msi or intx", e);
	case K_VECTORS:
		ret = cdev_uint(p, k, val, 0, MSIX_MAX_VECTORS, "0 to 64", &v, e);
		d->irq.vectors = (int)v;
		return ret;
	case K_IRQPATH:
		return cdev_enum(p, irq_path_parse(val, &d->irq.path), CONFIG_E_IRQPATH, "irqpath",
				 val, "irqfd or signal-msi", e);
	case K_POLL:
		ret = cdev_uint(p, k, val, 0, VIRTIO_PCI_POLL_MAX_US, "0 to 1000 us", &v, e);
		d->irq.poll_us = (uint32_t)v;
		return ret;
	case K_COALESCE:
		if (!strcmp(val, "off") || !strcmp(val, "on")) {
			d->irq.coalesce_us = val[1] == 'n' ? VIRTIO_PCI_COALESCE_DEFAULT_US : 0;
			return 0;
		}
		ret = cdev_uint(p, k, val, 1, VIRTIO_PCI_COALESCE_MAX_US, "on, off or 1 to 10000 us", &v, e);
		d->irq.coalesce_us = (uint32_t)v;
		return ret;
	case K_BPS:
		if (parse_size(val, &v) || v == 0)
			return cdev_err(p, false, e, "bad bps '%.100s': use bytes per second such as 50M",
					val);
		d->limit.bytes_per_s = v;
		return 0;
	case K_OPS:
		ret = cdev_uint(p, k, val, 1, 100000000, "requests per second, 1 to 1e8", &v, e);
		d->limit.ops_per_s = v;
		return ret;
	case K_LATENCY:
		if (parse_uint(val, 10, 1000000, &v))
			return cdev_err(p, false, e, "bad latency period '%.100s': use 10 to 1000000 us",
					val);
		d->rng_latency_us = (uint32_t)v;
		return 0;
	case K_SOURCE:
		return cdev_enum(p, virtio_rng_source_parse(val, &d->rng_source), CONFIG_E_RNG_SOURCE,
				 "rng source", val, "drbg or getrandom", e);
	case K_RO:
	case K_READONLY:
		return set_flag(p, k, val, &d->blk.ro, e);
	case K_ENGINE:
		return cdev_enum(p, blk_engine_parse(val, &d->blk.engine), CONFIG_E_ENGINE, "engine",
				 val, "uring or sync", e);
	case K_OUT:
	case K_IN:
	case K_SOCKET: {
		char *dst = k->id == K_OUT ? d->console.out_path
			    : k->id == K_IN ? d->console.in_path : d->console.sock_path;
		if (!val[0] || strlen(val) >= VIRTIO_CONSOLE_PATH_MAX)
			return cdev_err(p, false, e, "%s %s=: needs a file name of at most 4095 bytes",
					p->name, key);
		snprintf(dst, VIRTIO_CONSOLE_PATH_MAX, "%s", val);
		return 0;
	}
	case K_MAX:
		if (parse_size(val, &v))
			return cdev_err(p, false, e, "bad console max '%.100s': use a size such as 64M, "
					"or 0 for no cap", val);
		d->console.max_out = v;
		return 0;
	default:
		break;
	}
	if (d->type == VM_DEV_NET)
		return cdev_set_net(p, k, val, e);
	if (k->id == K_PATH)
		return set_path(p, k, val, d->blk.path, sizeof(d->blk.path), e);
	ret = cdev_uint(p, k, val, 1, VIRTIO_BLK_MAX_QUEUES, "1 to 8", &v, e); /* queues */
	d->blk.queues = (uint16_t)v;
	return ret;
}

int config_dev_end(struct config_dev *p, struct error *e)
{
	struct vm_device_spec *d = p->d;
	if ((p->seen & SEEN(K_SOCKET)) && (p->seen & (SEEN(K_OUT) | SEEN(K_IN))))
		return cdev_err(p, true, e, "socket= carries the console both ways: drop out= and in=");
	if ((p->seen & SEEN(K_VECTORS)) && d->irq.vectors == 0) {
		if (!(p->seen & SEEN(K_IRQ)))
			d->irq.mode = IRQ_MODE_INTX; /* QEMU's spelling of a device without MSI-X */
		else if (d->irq.mode == IRQ_MODE_MSIX || d->irq.mode == IRQ_MODE_MSIX_SHARED)
			return cdev_err(p, true, e, "vectors=0 means no MSI-X, which irq=%s needs: use "
					"irq=intx or irq=msi for a device without MSI-X, or vectors=1 "
					"to 64", irq_mode_name(d->irq.mode));
	}
	if (d->type == VM_DEV_NET)
		return cdev_end_net(p, e);
	if (d->type != VM_DEV_BLK)
		return 0;
	struct virtio_blk_opts *b = &d->blk;
	if (!b->path[0])
		return cdev_err(p, true, e, "path=FILE is required");
	if (access(b->path, b->ro ? R_OK : R_OK | W_OK))
		return error_set(e, -errno, "cannot open disk image '%.200s': %s%s", b->path,
				 strerror(errno), !b->ro && errno == EACCES ? " (add ,ro for read-only)"
									    : "");
	return 0;
}

int config_dev_parse(struct vm_config *vm, enum vm_device_type t, const char *name,
		     const char *arg, bool cli, struct error *e)
{
	struct config_dev p;
	int ret = config_dev_begin(vm, t, name, cli ? arg : NULL, &p, e);
	if (ret)
		return ret;
	char *buf = strdup(arg);
	if (!buf)
		return error_set(e, -ENOMEM, "out of memory");
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (eq)
			*eq++ = 0;
		ret = config_dev_set(&p, tok, eq, e);
	}
	free(buf);
	return ret ? ret : config_dev_end(&p, e);
}
