/* Config files: JSON text -> checks of keys and value types -> the same setters as the command line. */
/* Link circle, on purpose (config_cli.c, config_json.c, config_restore.c): the command line reads a --config file and a --restore snapshot, a config file may restore a snapshot whose own configuration is a config file (config_json_read), and both spellings of --memory go through config_memory_set. */
#include "config/config_json.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "config/config_cli.h"
#include "config/config_devices.h"
#include "config/config_names.h"
#include "util/file.h"

static const char *type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE: return "true";
	case JSON_FALSE: return "false";
	default: return "null";
	}
}

static const char *kind_name(enum config_kind k)
{
	switch (k) {
	case CONFIG_STRING: return "a string";
	case CONFIG_UINT: return "an integer";
	case CONFIG_SIZE: return "a size (a string such as \"256M\" or an integer)";
	case CONFIG_FLAG: return "true or false";
	case CONFIG_UINT_WORD: return "an integer or a string (\"on\", \"off\")";
	default: return "an array of objects or of option strings";
	}
}

/* The text the command line would give for value v of a key of kind k (*out NULL: a flag
 * set). Returns 0, 1 for null (keep the default) or -EINVAL with a message naming `where`. */
static int value_text(const json_t *v, enum config_kind k, const char *where, char *num,
		      size_t n, const char **out, struct error *e)
{
	if (json_is_null(v))
		return 1;
	if ((k == CONFIG_STRING || k == CONFIG_SIZE || k == CONFIG_UINT_WORD) && json_is_string(v)) {
		*out = json_string_value(v);
		return 0;
	}
	if ((k == CONFIG_UINT || k == CONFIG_SIZE || k == CONFIG_UINT_WORD) && json_is_integer(v)) {
		snprintf(num, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		*out = num;
		return 0;
	}
	if (k == CONFIG_FLAG && json_is_boolean(v)) {
		*out = json_is_true(v) ? NULL : "off";
		return 0;
	}
	return error_set(e, -EINVAL, "%s: expected %s, got %s", where, kind_name(k), type_name(v));
}

/* One device given as an object: every key through the device's own checks. */
static int read_device_object(struct vm_config *vm, enum vm_device_type t, const char *name,
			      json_t *obj, struct error *e)
{
	struct config_dev p;
	int ret = config_dev_begin(vm, t, name, NULL, &p, e);
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) {
		char where[256], num[32];
		const char *val = NULL;
		enum config_kind kind;
		if (ret || (ret = config_dev_kind(&p, key, &kind, e)))
			break;
		snprintf(where, sizeof(where), "%.127s.%.40s", name, key);
		int skip = value_text(v, kind, where, num, sizeof(num), &val, e);
		if (skip < 0)
			return skip;
		if (!skip && (ret = config_dev_set(&p, key, val, e)))
			break;
	}
	return ret ? ret : config_dev_end(&p, e);
}

static int read_devices(struct run_config *c, const struct config_key *k, json_t *list,
			const char *origin, struct error *e)
{
	if (json_is_null(list))
		return 0;
	if (!json_is_array(list))
		return error_set(e, -EINVAL, "%s: %s: expected %s, got %s", origin, k->name,
				 kind_name(k->kind), type_name(list));
	size_t i;
	json_t *item;
	json_array_foreach(list, i, item) {
		char name[128];
		int ret;
		snprintf(name, sizeof(name), "%s: %s[%zu]", origin, k->name, i);
		if (json_is_string(item))
			ret = config_dev_parse(&c->vm, k->dev, name, json_string_value(item), false, e);
		else if (json_is_object(item))
			ret = read_device_object(&c->vm, k->dev, name, item, e);
		else
			ret = error_set(e, -EINVAL, "%s: expected an object or an option string, got %s",
					name, type_name(item));
		if (ret)
			return ret;
	}
	return 0;
}

static int unknown_key(const char *origin, const char *key, struct error *e)
{
	size_t n;
	const struct config_key *keys = config_keys(&n);
	const char *names[64];
	char hint[64];
	for (size_t i = 0; i < n && i < 64; i++)
		names[i] = keys[i].name;
	return error_set(e, -EINVAL, "%s: unknown key '%.100s'%s", origin, key,
			 config_hint(key, names, n < 64 ? n : 64, "", hint, sizeof(hint)));
}

static int read_object(struct run_config *c, json_t *root, const char *origin, struct error *e)
{
	if (!json_is_object(root))
		return error_set(e, -EINVAL, "%s: expected a JSON object of options, got %s", origin,
				 type_name(root));
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v) {
		const struct config_key *k = config_key_find(key);
		if (!k && !strcmp(key, "memory")) { /* --memory's spelling: "size=128M,file=F" */
			struct error why;
			int ret = json_is_string(v) ? config_memory_set(c, json_string_value(v), &why)
						    : error_set(&why, -EINVAL, "memory: expected a string "
								"such as \"128M\" or \"size=128M,file=PATH\" "
								"(or \"mem\": \"128M\"), got %s",
								type_name(v));
			if (ret)
				return error_set(e, ret, "%s: %s", origin, why.msg);
			continue;
		}
		if (!k)
			return unknown_key(origin, key, e);
		if (k->kind == CONFIG_DEVICES) {
			int ret = read_devices(c, k, v, origin, e);
			if (ret)
				return ret;
			continue;
		}
		char where[256], num[32];
		const char *val = NULL;
		snprintf(where, sizeof(where), "%s: %s", origin, key);
		int ret = value_text(v, k->kind, where, num, sizeof(num), &val, e);
		if (ret < 0)
			return ret;
		struct error why;
		if (!ret && (ret = config_set(c, k, val, &why)))
			return error_set(e, ret, "%s: %s", origin, why.msg);
	}
	return 0;
}

int config_json_read(struct run_config *c, const char *text, size_t len, const char *origin,
		     struct error *e)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return error_set(e, -EINVAL, "%.100s:%d:%d: malformed JSON: %s", origin, je.line,
				 je.column, je.text);
	int ret = read_object(c, root, origin, e);
	json_decref(root);
	return ret;
}

/* A file with "restore": the snapshot gives the VM, the file only this run's host options. */
static int read_restore(struct run_config *c, json_t *root, const char *origin, struct error *e)
{
	json_t *r = json_object_get(root, "restore");
	if (!json_is_string(r))
		return error_set(e, -EINVAL, "%s: restore: expected an option string such as "
				 "\"state=FILE,mem=FILE\", got %s", origin, type_name(r));
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v)
		if (strcmp(key, "restore") && !config_restore_host_key(key))
			return error_set(e, -EINVAL, "%s: '%.100s' with restore: the snapshot holds the "
					 "VM's configuration (a restore file gives only host options such "
					 "as serial, api-socket, log-file)", origin, key);
	int ret = config_restore_load(c, json_string_value(r), e);
	if (!ret) {
		json_object_del(root, "restore");
		ret = read_object(c, root, origin, e);
	}
	return ret;
}

int config_json_load(struct run_config *c, const char *path, struct error *e)
{
	struct mapped_file f;
	int ret = file_map(path, "config file", &f, e);
	if (ret)
		return ret;
	json_error_t je;
	json_t *root = json_loadb((const char *)f.data, f.size, JSON_REJECT_DUPLICATES, &je);
	file_unmap(&f);
	if (!root)
		return error_set(e, -EINVAL, "%.100s:%d:%d: malformed JSON: %s", path, je.line,
				 je.column, je.text);
	ret = json_is_object(root) && json_object_get(root, "restore") ? read_restore(c, root, path, e)
								       : read_object(c, root, path, e);
	json_decref(root);
	return ret;
}
