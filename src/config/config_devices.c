/* Config devices: the keys every device takes (interrupts, polling, coalescing, rate limits), the rest through the device-type table. */
#include "config/config_devices.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_names.h"
#include "util/parse.h"
#include "util/suggest.h"

enum tkey { K_IRQ, K_VECTORS, K_IRQPATH, K_POLL, K_COALESCE, K_BPS, K_OPS, K_RX_BPS, K_RX_OPS };

/* The transport's keys: every device type takes them (bps= and ops= where it is rate_limit,
 * rx-bps= and rx-ops= on a NIC). */
struct tkey_def {
	const char *name;
	enum tkey id;
	enum config_kind kind;
};

static const struct tkey_def tkeys[] = {
	{ "irq", K_IRQ, CONFIG_STRING },
	{ "vectors", K_VECTORS, CONFIG_UINT },
	{ "irqpath", K_IRQPATH, CONFIG_STRING },
	{ "poll", K_POLL, CONFIG_UINT },
	{ "coalesce", K_COALESCE, CONFIG_UINT_WORD },
	{ "bps", K_BPS, CONFIG_SIZE },
	{ "ops", K_OPS, CONFIG_UINT_WORD },
	{ "rx-bps", K_RX_BPS, CONFIG_SIZE },
	{ "rx-ops", K_RX_OPS, CONFIG_UINT_WORD },
};
#define NTKEYS (sizeof(tkeys) / sizeof(tkeys[0]))
#define NAMES_MAX 48 /* a type's keys and the transport's, for "did you mean" */
#define SEEN(id) (1u << (id))

/* A message about one key (`whole` false: prefixed in a file only, as the command line
 * names the value) or about the device as a whole (prefixed with where it was given). */
__attribute__((format(printf, 4, 5)))
static int cdev_err(const struct config_dev *p, bool whole, struct error *e, const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!p->arg)
		return error_set(e, -EINVAL, "%s: %s", p->name, msg);
	if (whole)
		return error_set(e, -EINVAL, "%s %.100s: %s", p->name, p->arg, msg);
	return error_set(e, -EINVAL, "%s", msg);
}

/* A refusal from the type's own hooks, worded as it asked. */
static int worded(const struct config_dev *p, int ret, struct error *e)
{
	if (!ret || !e || p->o.msg == DEVICE_MSG_AS_IS)
		return ret;
	char msg[ERROR_MSG_MAX];
	snprintf(msg, sizeof(msg), "%s", e->msg);
	cdev_err(p, p->o.msg == DEVICE_MSG_WHOLE, e, "%s", msg);
	return ret;
}

int config_dev_begin(struct vm_config *vm, enum vm_device_type t, const char *name,
		     const char *arg, struct config_dev *p, struct error *e)
{
	const struct device_type *type = device_type_get(t);
	if (!type)
		return error_set(e, -EINVAL, "unknown device type %d", (int)t);
	if (vm->ndevices == VM_MAX_DEVICES)
		return error_set(e, -E2BIG, "too many devices (at most %d)", VM_MAX_DEVICES);
	struct vm_device_spec *d = &vm->devices[vm->ndevices++];
	memset(d, 0, sizeof(*d));
	d->type = t;
	d->irq = (struct virtio_pci_config){ .mode = IRQ_MODE_MSIX, .vectors = -1,
					     .path = IRQ_PATH_IRQFD };
	if (type->spec_init)
		type->spec_init(d);
	*p = (struct config_dev){ .d = d, .type = type, .name = name, .arg = arg,
				  .o = { .spec = d, .name = name } };
	return 0;
}

/* Key `key` of this device: one of its type's (*dk) or of the transport's (*tk); else -EINVAL
 * with a message that names it (as "key=val" on the command line) and suggests the nearest. */
static int find_key(const struct config_dev *p, const char *key, const char *val,
		    const struct device_key **dk, const struct tkey_def **tk, struct error *e)
{
	const char *names[NAMES_MAX];
	size_t n = 0;
	*dk = NULL;
	*tk = NULL;
	for (const struct device_key *k = p->type->keys; k && k->name; k++) {
		if (!strcmp(k->name, key)) {
			*dk = k;
			return 0;
		}
		if (n < NAMES_MAX)
			names[n++] = k->name;
	}
	for (size_t i = 0; i < NTKEYS; i++) {
		if ((tkeys[i].id == K_BPS || tkeys[i].id == K_OPS) && !p->type->rate_limit)
			continue;
		if ((tkeys[i].id == K_RX_BPS || tkeys[i].id == K_RX_OPS) && p->d->type != VM_DEV_NET)
			continue;
		if (!strcmp(tkeys[i].name, key)) {
			*tk = &tkeys[i];
			return 0;
		}
		if (n < NAMES_MAX)
			names[n++] = tkeys[i].name;
	}
	char hint[64];
	suggest_hint(key, names, n, "", hint, sizeof(hint));
	if (p->arg)
		return cdev_err(p, false, e, "unknown device option '%.100s%s%.100s' for %s%s", key,
				val ? "=" : "", val ? val : "", p->name, hint);
	return cdev_err(p, false, e, "unknown key '%.100s'%s", key, hint);
}

int config_dev_kind(const struct config_dev *p, const char *key, enum config_kind *kind,
		    struct error *e)
{
	const struct device_key *dk;
	const struct tkey_def *tk;
	int ret = find_key(p, key, NULL, &dk, &tk, e);
	if (ret)
		return ret;
	if (tk) {
		*kind = tk->kind;
		return 0;
	}
	switch (dk->kind) {
	case DEVICE_KEY_UINT: *kind = CONFIG_UINT; break;
	case DEVICE_KEY_SIZE: *kind = CONFIG_SIZE; break;
	case DEVICE_KEY_FLAG: *kind = CONFIG_FLAG; break;
	default: *kind = CONFIG_STRING; break;
	}
	return 0;
}

/* An enumerated value of the transport: parsed by its module, refused with the spellings and
 * a suggestion. */
static int cdev_enum(const struct config_dev *p, int parsed, enum config_enum which,
		     const char *what, const char *val, const char *use, struct error *e)
{
	char hint[64];
	if (parsed == 0)
		return 0;
	return cdev_err(p, false, e, "bad %s '%.100s': use %s%s", what, val, use,
			config_enum_hint(which, val, hint, sizeof(hint)));
}

/* A number in [min, max] for key k, or the message "bad KEY 'VAL': use RANGE". */
static int cdev_uint(const struct config_dev *p, const struct tkey_def *k, const char *val,
		     uint64_t min, uint64_t max, const char *range, uint64_t *out, struct error *e)
{
	if (parse_uint(val, min, max, out))
		return cdev_err(p, false, e, "bad %s '%.100s': use %s", k->name, val, range);
	return 0;
}

int rate_bucket_parse(const char *s, bool bytes, bool off_ok, struct rate_bucket_opts *o)
{
	if (off_ok && !strcmp(s, "off")) {
		*o = (struct rate_bucket_opts){ 0 };
		return 0;
	}
	char size[40], ms[24] = "1000", burst[40] = "0";
	size_t n = strcspn(s, "/+");
	if (n == 0 || n >= sizeof(size))
		return -EINVAL;
	memcpy(size, s, n);
	size[n] = 0;
	const char *rest = s + n;
	if (*rest == '/') {
		size_t m = strcspn(++rest, "+");
		if (m == 0 || m >= sizeof(ms))
			return -EINVAL;
		memcpy(ms, rest, m);
		ms[m] = 0;
		rest += m;
	}
	if (*rest == '+' && snprintf(burst, sizeof(burst), "%s", rest + 1) >= (int)sizeof(burst))
		return -EINVAL;
	else if (*rest && *rest != '+')
		return -EINVAL;
	uint64_t sz, t, b;
	bool plain = !strchr(s, '/') && !strchr(s, '+');
	int bad = bytes ? parse_size(size, &sz) || parse_size(burst, &b)
			: parse_uint(size, 1, plain ? 100000000 : INT64_MAX, &sz) ||
			  parse_uint(burst, 0, INT64_MAX, &b);
	if (bad || sz == 0 || sz > INT64_MAX || b > INT64_MAX ||
	    parse_uint(ms, 1, 1000ULL * 1000 * 3600, &t))
		return -EINVAL;
	*o = (struct rate_bucket_opts){ .size = sz, .refill_ms = t, .one_time_burst = b };
	return 0;
}

const char *rate_bucket_text(const struct rate_bucket_opts *o, bool bytes,
			     char buf[RATE_BUCKET_TEXT_MAX])
{
	char sz[SIZE_TEXT_MAX], b[SIZE_TEXT_MAX];
	if (!o->size)
		return "off";
	if (bytes) {
		size_text(o->size, sz);
		size_text(o->one_time_burst, b);
	} else {
		snprintf(sz, sizeof(sz), "%llu", (unsigned long long)o->size);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)o->one_time_burst);
	}
	int n = snprintf(buf, RATE_BUCKET_TEXT_MAX, "%s", sz);
	if (o->refill_ms != 1000)
		n += snprintf(buf + n, RATE_BUCKET_TEXT_MAX - (size_t)n, "/%llu",
			      (unsigned long long)o->refill_ms);
	if (o->one_time_burst)
		snprintf(buf + n, RATE_BUCKET_TEXT_MAX - (size_t)n, "+%s", b);
	return buf;
}

static int set_transport_key(struct config_dev *p, const struct tkey_def *k, const char *val,
			     struct error *e)
{
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
	case K_RX_BPS:
		if (k->id == K_RX_BPS)
			d->rx_limit_own = true;
		if (rate_bucket_parse(val, true, k->id == K_RX_BPS, k->id == K_BPS ? &d->limit.bytes
								   : &d->rx_limit.bytes))
			return cdev_err(p, false, e, "bad %s '%.100s': use bytes per second such as "
					"50M, or SIZE/MS[+BURST] (SIZE bytes every MS ms, BURST bytes "
					"once)%s", k->name, val, k->id == K_RX_BPS ? ", or off" : "");
		return 0;
	default: /* K_OPS, K_RX_OPS */
		if (k->id == K_RX_OPS)
			d->rx_limit_own = true;
		if (rate_bucket_parse(val, false, k->id == K_RX_OPS, k->id == K_OPS ? &d->limit.ops
								    : &d->rx_limit.ops))
			return cdev_err(p, false, e, "bad %s '%.100s': use requests per second, 1 to "
					"1e8, or N/MS[+BURST] (N requests every MS ms, BURST once)%s",
					k->name, val, k->id == K_RX_OPS ? ", or off" : "");
		return 0;
	}
}

int config_dev_set(struct config_dev *p, const char *key, const char *val, struct error *e)
{
	const struct device_key *dk;
	const struct tkey_def *tk;
	int ret = find_key(p, key, val, &dk, &tk, e);
	if (ret)
		return ret;
	if (!val && !(dk && dk->kind == DEVICE_KEY_FLAG))
		return cdev_err(p, false, e, "device option '%s' needs a value (%s=...)", key, key);
	if (tk) {
		p->seen |= SEEN(tk->id);
		return set_transport_key(p, tk, val, e);
	}
	p->o.seen |= DEVICE_SEEN(dk->id);
	p->o.msg = DEVICE_MSG_KEY;
	return worded(p, p->type->spec_set(&p->o, dk, val, e), e);
}

int config_dev_end(struct config_dev *p, struct error *e)
{
	struct vm_device_spec *d = p->d;
	if ((p->seen & SEEN(K_VECTORS)) && d->irq.vectors == 0) {
		if (!(p->seen & SEEN(K_IRQ)))
			d->irq.mode = IRQ_MODE_INTX; /* QEMU's spelling of a device without MSI-X */
		else if (d->irq.mode == IRQ_MODE_MSIX || d->irq.mode == IRQ_MODE_MSIX_SHARED)
			return cdev_err(p, true, e, "vectors=0 means no MSI-X, which irq=%s needs: use "
					"irq=intx or irq=msi for a device without MSI-X, or vectors=1 "
					"to 64", irq_mode_name(d->irq.mode));
	}
	if (!p->type->spec_check)
		return 0;
	p->o.msg = DEVICE_MSG_KEY;
	return worded(p, p->type->spec_check(&p->o, e), e);
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
