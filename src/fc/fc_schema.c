/* Firecracker's JSON bodies: swagger definitions as field tables, checked strictly before anything is translated. */
#include "fc/fc_schema.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define DESER "An error occurred when deserializing the json body of a request: "

static const char *const cache_types[] = { "Unsafe", "Writeback", NULL };
static const char *const io_engines[] = { "Sync", "Async", NULL };
static const char *const cpu_templates[] = { "C3", "T2", "T2S", "T2CL", "T2A", "V1N1", "None",
					     NULL };
static const char *const huge_pages[] = { "None", "Transparent", "2M", NULL };
static const char *const actions[] = { "FlushMetrics", "InstanceStart", "SendCtrlAltDel", NULL };
static const char *const vm_states[] = { "Paused", "Resumed", NULL };
static const char *const snapshot_types[] = { "Full", "Diff", NULL };
static const char *const backend_types[] = { "File", "Uffd", NULL };

static const struct fc_schema token_bucket = { "TokenBucket", (const struct fc_field[]){
	{ .name = "size", .type = FC_UINT, .required = true, .min = 0 },
	{ .name = "refill_time", .type = FC_UINT, .required = true, .min = 0 },
	{ .name = "one_time_burst", .type = FC_UINT, .required = false, .min = 0 },
	{ 0 } } };

static const struct fc_schema rate_limiter = { "RateLimiter", (const struct fc_field[]){
	{ .name = "bandwidth", .type = FC_OBJECT, .required = false, .sub = &token_bucket },
	{ .name = "ops", .type = FC_OBJECT, .required = false, .sub = &token_bucket },
	{ 0 } } };

const struct fc_schema fc_boot_source = { "BootSource", (const struct fc_field[]){
	{ .name = "kernel_image_path", .type = FC_STRING, .required = true },
	{ .name = "boot_args", .type = FC_STRING, .required = false },
	{ .name = "initrd_path", .type = FC_STRING, .required = false },
	{ 0 } } };

#define MACHINE_FIELDS(req)                                                        \
	{ .name = "vcpu_count", .type = FC_UINT, .required = req, .min = 1, .max = 32 },                       \
	{ .name = "mem_size_mib", .type = FC_UINT, .required = req, .min = 1, .max = 1 << 24 },                \
	{ .name = "smt", .type = FC_BOOL, .required = false },                                                 \
	{ .name = "track_dirty_pages", .type = FC_BOOL, .required = false },                                   \
	{ .name = "cpu_template", .type = FC_WORD, .required = false, .words = cpu_templates },                \
	{ .name = "huge_pages", .type = FC_WORD, .required = false, .words = huge_pages },                     \
	{ 0 }

const struct fc_schema fc_machine_config = { "MachineConfiguration",
					     (const struct fc_field[]){ MACHINE_FIELDS(true) } };
const struct fc_schema fc_machine_config_patch = { "MachineConfiguration",
						   (const struct fc_field[]){ MACHINE_FIELDS(false) } };

const struct fc_schema fc_drive = { "Drive", (const struct fc_field[]){
	{ .name = "drive_id", .type = FC_STRING, .required = true },
	{ .name = "is_root_device", .type = FC_BOOL, .required = true },
	{ .name = "partuuid", .type = FC_STRING, .required = false },
	{ .name = "cache_type", .type = FC_WORD, .required = false, .words = cache_types },
	{ .name = "is_read_only", .type = FC_BOOL, .required = false },
	{ .name = "path_on_host", .type = FC_STRING, .required = false },
	{ .name = "rate_limiter", .type = FC_OBJECT, .required = false, .sub = &rate_limiter },
	{ .name = "io_engine", .type = FC_WORD, .required = false, .words = io_engines },
	{ .name = "socket", .type = FC_STRING, .required = false },
	{ 0 } } };

const struct fc_schema fc_partial_drive = { "PartialDrive", (const struct fc_field[]){
	{ .name = "drive_id", .type = FC_STRING, .required = true },
	{ .name = "path_on_host", .type = FC_STRING, .required = false },
	{ .name = "rate_limiter", .type = FC_OBJECT, .required = false, .sub = &rate_limiter },
	{ 0 } } };

const struct fc_schema fc_network_interface = { "NetworkInterface", (const struct fc_field[]){
	{ .name = "iface_id", .type = FC_STRING, .required = true },
	{ .name = "host_dev_name", .type = FC_STRING, .required = true },
	{ .name = "guest_mac", .type = FC_STRING, .required = false },
	{ .name = "mtu", .type = FC_UINT, .required = false, .min = 68, .max = 65535 },
	{ .name = "rx_rate_limiter", .type = FC_OBJECT, .required = false, .sub = &rate_limiter },
	{ .name = "tx_rate_limiter", .type = FC_OBJECT, .required = false, .sub = &rate_limiter },
	{ 0 } } };

const struct fc_schema fc_partial_network_interface = { "PartialNetworkInterface",
							(const struct fc_field[]){
	{ .name = "iface_id", .type = FC_STRING, .required = true },
	{ .name = "rx_rate_limiter", .type = FC_OBJECT, .required = false, .sub = &rate_limiter },
	{ .name = "tx_rate_limiter", .type = FC_OBJECT, .required = false, .sub = &rate_limiter },
	{ 0 } } };

const struct fc_schema fc_vsock = { "Vsock", (const struct fc_field[]){
	{ .name = "guest_cid", .type = FC_UINT, .required = true, .min = 3, .max = 0xffffffffLL },
	{ .name = "uds_path", .type = FC_STRING, .required = true },
	{ .name = "vsock_id", .type = FC_STRING, .required = false }, /* deprecated, still sent (Kata: "root") */
	{ 0 } } };

const struct fc_schema fc_logger = { "Logger", (const struct fc_field[]){
	{ .name = "level", .type = FC_STRING, .required = false }, /* case-insensitive: checked by its reader */
	{ .name = "log_path", .type = FC_STRING, .required = false },
	{ .name = "show_level", .type = FC_BOOL, .required = false },
	{ .name = "show_log_origin", .type = FC_BOOL, .required = false },
	{ .name = "module", .type = FC_STRING, .required = false },
	{ 0 } } };

const struct fc_schema fc_metrics = { "Metrics", (const struct fc_field[]){
	{ .name = "metrics_path", .type = FC_STRING, .required = true },
	{ 0 } } };

const struct fc_schema fc_entropy = { "EntropyDevice", (const struct fc_field[]){
	{ .name = "rate_limiter", .type = FC_OBJECT, .required = false, .sub = &rate_limiter },
	{ 0 } } };

const struct fc_schema fc_serial = { "SerialDevice", (const struct fc_field[]){
	{ .name = "serial_out_path", .type = FC_STRING, .required = false },
	{ .name = "rate_limiter", .type = FC_OBJECT, .required = false, .sub = &token_bucket },
	{ 0 } } };

const struct fc_schema fc_action = { "InstanceActionInfo", (const struct fc_field[]){
	{ .name = "action_type", .type = FC_WORD, .required = true, .words = actions },
	{ 0 } } };

const struct fc_schema fc_vm_state = { "Vm", (const struct fc_field[]){
	{ .name = "state", .type = FC_WORD, .required = true, .words = vm_states },
	{ 0 } } };

const struct fc_schema fc_snapshot_create = { "SnapshotCreateParams", (const struct fc_field[]){
	{ .name = "mem_file_path", .type = FC_STRING, .required = true },
	{ .name = "snapshot_path", .type = FC_STRING, .required = true },
	{ .name = "snapshot_type", .type = FC_WORD, .required = false, .words = snapshot_types },
	{ .name = "version", .type = FC_STRING, .required = false }, /* older clients send it; ignored, as Firecracker does */
	{ 0 } } };

static const struct fc_schema memory_backend = { "MemoryBackend", (const struct fc_field[]){
	{ .name = "backend_type", .type = FC_WORD, .required = true, .words = backend_types },
	{ .name = "backend_path", .type = FC_STRING, .required = true },
	{ 0 } } };

static const struct fc_schema network_override = { "NetworkOverride", (const struct fc_field[]){
	{ .name = "iface_id", .type = FC_STRING, .required = true },
	{ .name = "host_dev_name", .type = FC_STRING, .required = true },
	{ 0 } } };

static const struct fc_schema vsock_override = { "VsockOverride", (const struct fc_field[]){
	{ .name = "uds_path", .type = FC_STRING, .required = true },
	{ 0 } } };

const struct fc_schema fc_snapshot_load = { "SnapshotLoadParams", (const struct fc_field[]){
	{ .name = "snapshot_path", .type = FC_STRING, .required = true },
	{ .name = "mem_file_path", .type = FC_STRING, .required = false },
	{ .name = "mem_backend", .type = FC_OBJECT, .required = false, .sub = &memory_backend },
	{ .name = "enable_diff_snapshots", .type = FC_BOOL, .required = false },
	{ .name = "track_dirty_pages", .type = FC_BOOL, .required = false },
	{ .name = "resume_vm", .type = FC_BOOL, .required = false },
	{ .name = "network_overrides", .type = FC_ARRAY, .required = false, .sub = &network_override },
	{ .name = "vsock_override", .type = FC_OBJECT, .required = false, .sub = &vsock_override },
	{ .name = "clock_realtime", .type = FC_BOOL, .required = false },
	{ 0 } } };

int fc_word_index(const char *const *words, const char *s, bool nocase)
{
	for (int i = 0; words[i]; i++)
		if (nocase ? !strcasecmp(words[i], s) : !strcmp(words[i], s))
			return i;
	return -1;
}

static const struct fc_field *find(const struct fc_schema *s, const char *name)
{
	for (const struct fc_field *f = s->fields; f->name; f++)
		if (!strcmp(f->name, name))
			return f;
	return NULL;
}

/* "`a`, `b`, `c`": what serde lists after "expected one of". */
static void list_names(const struct fc_field *f, char *out, size_t n, bool words_of)
{
	size_t used = 0;
	out[0] = 0;
	for (int i = 0; (words_of ? f->words[i] : f[i].name) && used < n; i++) {
		int w = snprintf(out + used, n - used, "%s`%s`", i ? ", " : "",
				 words_of ? f->words[i] : f[i].name);
		used += w > 0 ? (size_t)w : 0;
	}
}

static int check_value(const struct fc_field *f, const json_t *v, struct error *e)
{
	char names[400];
	switch (f->type) {
	case FC_STRING:
		if (json_is_string(v))
			return 0;
		return error_set(e, -EINVAL, DESER "invalid type for `%s`: expected a string", f->name);
	case FC_BOOL:
		if (json_is_boolean(v))
			return 0;
		return error_set(e, -EINVAL, DESER "invalid type for `%s`: expected a boolean", f->name);
	case FC_UINT: {
		if (!json_is_integer(v))
			return error_set(e, -EINVAL, DESER "invalid type for `%s`: expected an integer",
					 f->name);
		long long x = json_integer_value(v);
		if (x < f->min || (f->max && x > f->max))
			return error_set(e, -EINVAL, DESER "invalid value %lld for `%s`: expected %lld "
					 "to %lld", x, f->name, f->min, f->max ? f->max : (long long)INT64_MAX);
		return 0;
	}
	case FC_WORD:
		if (json_is_string(v) && fc_word_index(f->words, json_string_value(v), false) >= 0)
			return 0;
		list_names(f, names, sizeof(names), true);
		return error_set(e, -EINVAL, DESER "unknown variant for `%s`: expected one of %s",
				 f->name, names);
	case FC_OBJECT:
		return fc_schema_check(f->sub, v, e);
	case FC_ARRAY: {
		if (!json_is_array(v))
			return error_set(e, -EINVAL, DESER "invalid type for `%s`: expected a sequence",
					 f->name);
		size_t i;
		const json_t *item;
		json_array_foreach(v, i, item) {
			int ret = fc_schema_check(f->sub, item, e);
			if (ret)
				return ret;
		}
		return 0;
	}
	}
	return -EINVAL;
}

int fc_schema_check(const struct fc_schema *s, const json_t *v, struct error *e)
{
	char names[400];
	if (!json_is_object(v))
		return error_set(e, -EINVAL, DESER "invalid type: expected struct %s", s->name);
	const char *key;
	const json_t *val;
	json_object_foreach((json_t *)v, key, val) {
		const struct fc_field *f = find(s, key);
		if (!f) {
			list_names(s->fields, names, sizeof(names), false);
			return error_set(e, -EINVAL, DESER "unknown field `%.64s`, expected one of %s",
					 key, names);
		}
		int ret = check_value(f, val, e);
		if (ret)
			return ret;
	}
	for (const struct fc_field *f = s->fields; f->name; f++)
		if (f->required && !json_object_get(v, f->name))
			return error_set(e, -EINVAL, DESER "missing field `%s`", f->name);
	return 0;
}
