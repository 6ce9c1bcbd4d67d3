/* --print-config: settings -> a jansson tree in key-table order -> indented text. */
#include "config/config_print.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_devices.h"
#include "config/config_names.h"
#include "util/parse.h"

/* Builds one object; a value jansson refuses (a string that is not UTF-8, no memory)
 * marks the whole print as failed and names the key. */
struct printer {
	const char *bad;
};

static void put(struct printer *pr, json_t *o, const char *key, json_t *v)
{
	if ((!v || json_object_set_new(o, key, v)) && !pr->bad) /* set_new frees v on failure */
		pr->bad = key;
}

/* ops=: a plain rate as the integer it is, Firecracker's bucket as its text, none as null
 * (or "off" where that is the word). */
static json_t *ops_json(const struct rate_bucket_opts *b, bool off_word)
{
	char buf[RATE_BUCKET_TEXT_MAX];
	if (!b->size)
		return off_word ? json_string("off") : json_null();
	if (b->refill_ms == 1000 && !b->one_time_burst)
		return json_integer((json_int_t)b->size);
	return json_string(rate_bucket_text(b, false, buf));
}

static json_t *uint_or_null(uint64_t v) { return v ? json_integer((json_int_t)v) : json_null(); }

static void put_irq(struct printer *pr, json_t *o, const struct virtio_pci_config *irq)
{
	put(pr, o, "irq", json_string(config_enum_name(CONFIG_E_IRQ, irq->mode)));
	put(pr, o, "vectors", irq->vectors >= 0 ? json_integer(irq->vectors) : json_null());
	put(pr, o, "irqpath", json_string(config_enum_name(CONFIG_E_IRQPATH, irq->path)));
	put(pr, o, "poll", uint_or_null(irq->poll_us));
	put(pr, o, "coalesce", irq->coalesce_us ? json_integer(irq->coalesce_us) : json_string("off"));
}

/* One device: its type's own keys, then the transport's. */
static json_t *device_json(struct printer *pr, const struct vm_device_spec *d)
{
	const struct device_type *type = device_type_get(d->type);
	json_t *o = json_object();
	if (!o || !type)
		return o;
	const char *bad = type->spec_print ? type->spec_print(d, o) : NULL;
	if (bad && !pr->bad)
		pr->bad = bad;
	put_irq(pr, o, &d->irq);
	char buf[RATE_BUCKET_TEXT_MAX];
	if (type->rate_limit) {
		put(pr, o, "bps", d->limit.bytes.size ? json_string(rate_bucket_text(&d->limit.bytes,
				true, buf)) : json_null());
		put(pr, o, "ops", ops_json(&d->limit.ops, false));
	}
	if (d->type == VM_DEV_NET && d->rx_limit_own) {
		put(pr, o, "rx-bps", json_string(rate_bucket_text(&d->rx_limit.bytes, true, buf)));
		put(pr, o, "rx-ops", ops_json(&d->rx_limit.ops, true));
	}
	return o;
}

static json_t *devices_json(struct printer *pr, const struct vm_config *vm,
			    enum vm_device_type t)
{
	json_t *list = json_array();
	for (uint32_t i = 0; list && i < vm->ndevices; i++) {
		if (vm->devices[i].type != t)
			continue;
		json_t *d = device_json(pr, &vm->devices[i]);
		if (!d || json_array_append_new(list, d))
			pr->bad = pr->bad ? pr->bad : device_type_option(t);
	}
	return list;
}

static json_t *value_json(struct printer *pr, const struct run_config *c,
			  const struct config_key *k)
{
	if (k->get)
		return k->get(c);
	if (k->kind == CONFIG_DEVICES)
		return devices_json(pr, &c->vm, k->dev);
	const char *field = (const char *)c + k->off;
	if (k->kind == CONFIG_FLAG)
		return json_boolean(*(const bool *)field);
	const char *s = *(char *const *)field;
	return s || k->def ? json_string(s ? s : k->def) : json_null();
}

int config_print_devices(json_t *root, const struct vm_config *vm)
{
	struct printer pr = { NULL };
	size_t n;
	const struct config_key *keys = config_keys(&n);
	for (size_t i = 0; i < n; i++)
		if (keys[i].kind == CONFIG_DEVICES && !keys[i].get)
			put(&pr, root, keys[i].name, devices_json(&pr, vm, keys[i].dev));
	return pr.bad ? -EINVAL : 0;
}

char *config_print(const struct run_config *c, struct error *e)
{
	struct printer pr = { NULL };
	json_t *root = json_object();
	size_t n;
	const struct config_key *keys = config_keys(&n);
	for (size_t i = 0; root && i < n; i++)
		put(&pr, root, keys[i].name, value_json(&pr, c, &keys[i]));
	char *text = root && !pr.bad ? json_dumps(root, JSON_INDENT(2)) : NULL;
	json_decref(root);
	char *out = NULL;
	if (text && asprintf(&out, "%s\n", text) < 0)
		out = NULL;
	free(text);
	if (!out && pr.bad)
		error_set(e, -EINVAL, "cannot print the configuration: the value of '%s' is not valid "
			  "UTF-8 (JSON text must be)", pr.bad);
	else if (!out)
		error_set(e, -ENOMEM, "out of memory");
	return out;
}
