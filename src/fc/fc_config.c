/* Firecracker's configuration document: section checks, then a translation into msivm's run_config through its own setters. */
#include "fc/fc_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "config/config_devices.h"
#include "fc/fc_schema.h"
#include "util/log.h"

/* A section of the document: its definition, whether it is an array of them, and why msivm
 * refuses it when it does. */
struct section {
	const char *name;
	const struct fc_schema *schema;
	bool array;
	const char *refused;
};

static const struct section sections[] = {
	{ "boot-source", &fc_boot_source, false, NULL },
	{ "machine-config", &fc_machine_config, false, NULL },
	{ "drives", &fc_drive, true, NULL },
	{ "network-interfaces", &fc_network_interface, true, NULL },
	{ "vsock", &fc_vsock, false, NULL },
	{ "logger", &fc_logger, false, NULL },
	{ "metrics", &fc_metrics, false, NULL },
	{ "entropy", &fc_entropy, false, NULL },
	{ "serial", &fc_serial, false, NULL },
	{ "balloon", NULL, false, "msivm has no balloon device" },
	{ "mmds-config", NULL, false, "msivm has no MMDS (metadata service)" },
	{ "cpu-config", NULL, false, "msivm has no CPU templates (it hides CPUID features with "
				     "its own --cpuid-hide)" },
	{ "pmem", NULL, true, "msivm has no virtio-pmem device" },
	{ "memory-hotplug", NULL, false, "msivm has no memory hotplug (virtio-mem)" },
};

static const struct section *section_find(const char *name)
{
	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++)
		if (!strcmp(sections[i].name, name))
			return &sections[i];
	return NULL;
}

/* What the definitions allow but msivm does not do: refused, never ignored. */
static int check_supported(const char *section, const json_t *v, struct error *e)
{
	const json_t *x;
	if (!strcmp(section, "machine-config")) {
		x = json_object_get(v, "cpu_template");
		if (x && strcmp(json_string_value(x), "None"))
			return error_set(e, -EINVAL, "cpu_template %s: msivm has no CPU templates",
					 json_string_value(x));
		x = json_object_get(v, "huge_pages");
		if (x && strcmp(json_string_value(x), "None"))
			return error_set(e, -EINVAL, "huge_pages %s: msivm backs guest RAM with "
					 "normal pages only", json_string_value(x));
		if (json_is_true(json_object_get(v, "smt")))
			return error_set(e, -EINVAL, "smt: msivm does not present SMT siblings to the "
					 "guest (give smt false)");
		if (json_is_true(json_object_get(v, "track_dirty_pages")))
			return error_set(e, -EINVAL, "track_dirty_pages: msivm takes full snapshots "
					 "only (no diff snapshots)");
		return 0;
	}
	if (!strcmp(section, "drives")) {
		if (json_object_get(v, "socket"))
			return error_set(e, -EINVAL, "drive %s: socket: msivm has no vhost-user-blk",
					 json_string_value(json_object_get(v, "drive_id")));
		if (!json_object_get(v, "path_on_host"))
			return error_set(e, -EINVAL, "drive %s: path_on_host is required for a "
					 "virtio-block drive",
					 json_string_value(json_object_get(v, "drive_id")));
		return 0;
	}
	if (!strcmp(section, "serial") && json_object_get(v, "rate_limiter"))
		return error_set(e, -EINVAL, "serial: rate_limiter: msivm does not limit the serial "
				 "console's output");
	if (!strcmp(section, "logger") && (x = json_object_get(v, "level")) &&
	    fc_word_index((const char *const[]){ "Error", "Warning", "Warn", "Info", "Debug",
						 "Trace", "Off", NULL },
			  json_string_value(x), true) < 0)
		return error_set(e, -EINVAL, "Invalid level: %.40s (Error, Warning, Info, Debug, "
				 "Trace or Off)", json_string_value(x));
	return 0;
}

int fc_config_check_section(const char *section, const json_t *v, bool item, struct error *e)
{
	const struct section *s = section_find(section);
	if (!s)
		return error_set(e, -EINVAL, "unknown configuration section `%.64s`", section);
	if (s->refused)
		return error_set(e, -EINVAL, "%s: %s", section, s->refused);
	if (!s->array || item) {
		int ret = fc_schema_check(s->schema, v, e);
		return ret ? ret : check_supported(section, v, e);
	}
	if (!json_is_array(v))
		return error_set(e, -EINVAL, "%s: expected an array", section);
	size_t i;
	const json_t *one;
	json_array_foreach(v, i, one) {
		int ret = fc_schema_check(s->schema, one, e);
		if (!ret)
			ret = check_supported(section, one, e);
		if (ret)
			return ret;
	}
	return 0;
}

/* Ids unique within an array section (drive_id, iface_id); at most one root drive. */
static int check_ids(const json_t *list, const char *key, struct error *e)
{
	size_t i, j, roots = 0;
	const json_t *a, *b;
	json_array_foreach(list, i, a) {
		roots += json_is_true(json_object_get(a, "is_root_device"));
		for (j = 0; j < i; j++) {
			b = json_array_get(list, j);
			if (!strcmp(json_string_value(json_object_get(a, key)),
				    json_string_value(json_object_get(b, key))))
				return error_set(e, -EINVAL, "%s %s is given twice", key,
						 json_string_value(json_object_get(a, key)));
		}
	}
	if (roots > 1)
		return error_set(e, -EINVAL, "A root block device already exists!");
	return 0;
}

int fc_config_check(const json_t *doc, struct error *e)
{
	if (!json_is_object(doc))
		return error_set(e, -EINVAL, "the configuration must be a JSON object of sections "
				 "(boot-source, machine-config, drives, ...)");
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)doc, key, v) {
		int ret = fc_config_check_section(key, v, false, e);
		if (ret)
			return ret;
	}
	const json_t *drives = json_object_get(doc, "drives"),
		     *nets = json_object_get(doc, "network-interfaces");
	int ret = drives ? check_ids(drives, "drive_id", e) : 0;
	return ret ? ret : nets ? check_ids(nets, "iface_id", e) : 0;
}

void fc_config_defaults(struct run_config *c)
{
	c->vm.mem_size = 128 * MiB;
	c->vm.ncpus = 1;
	c->vm.fc_thread_names = true;
	c->vm.shutdown_timeout_ms = 0;
	c->no_reboot = true;
}

static int set_key(struct run_config *c, const char *key, const char *val, struct error *e)
{
	const struct config_key *k = config_key_find(key);
	if (!k)
		return error_set(e, -EINVAL, "internal: no key %s", key);
	return config_set(c, k, val, e);
}

/* boot_args without pci=off and acpi=off, plus what a root drive adds (root=, ro|rw). */
static int set_cmdline(struct run_config *c, const char *args, const char *root, bool ro,
		       struct error *e)
{
	size_t n = strlen(args ? args : "") + (root ? strlen(root) : 0) + 32;
	char *out = calloc(1, n), *copy = strdup(args ? args : ""), *save = NULL;
	int ret = out && copy ? 0 : error_set(e, -ENOMEM, "out of memory");
	bool dropped = false;
	for (char *w = ret ? NULL : strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		if (!strcmp(w, "pci=off") || !strcmp(w, "acpi=off")) {
			dropped = true;
			continue;
		}
		strcat(strcat(out, out[0] ? " " : ""), w);
	}
	if (!ret && root)
		snprintf(out + strlen(out), n - strlen(out), "%sroot=%s %s", out[0] ? " " : "", root,
			 ro ? "ro" : "rw");
	if (dropped)
		log_warn("firecracker: boot_args: dropped pci=off and acpi=off (msivm's devices are "
			 "on PCI, found through ACPI)");
	if (!ret)
		ret = set_key(c, "cmdline", out, e);
	free(out);
	free(copy);
	return ret;
}

void fc_rate_limit_apply(const json_t *rl, struct rate_limit_opts *o)
{
	static const char *const buckets[] = { "bandwidth", "ops" };
	struct rate_bucket_opts *to[] = { &o->bytes, &o->ops };
	for (int i = 0; rl && i < 2; i++) {
		const json_t *b = json_object_get(rl, buckets[i]);
		if (!b)
			continue;
		json_int_t size = json_integer_value(json_object_get(b, "size")),
			   ms = json_integer_value(json_object_get(b, "refill_time")),
			   burst = json_integer_value(json_object_get(b, "one_time_burst"));
		if (size <= 0 || ms <= 0) /* Firecracker: no limit on this bucket */
			*to[i] = (struct rate_bucket_opts){ 0 };
		else
			*to[i] = (struct rate_bucket_opts){ (uint64_t)size, (uint64_t)ms,
							    burst > 0 ? (uint64_t)burst : 0 };
	}
}

/* A RateLimiter as msivm's bps= and ops= (or rx-bps= and rx-ops=: `rx`), spelt as
 * SIZE/MS+BURST: Firecracker's bucket exactly. A NIC's receive side is always its own. */
static int set_limit(struct config_dev *p, const json_t *rl, bool rx, struct error *e)
{
	struct rate_limit_opts o = { { 0 }, { 0 } };
	fc_rate_limit_apply(rl, &o);
	char buf[RATE_BUCKET_TEXT_MAX];
	int ret = 0;
	if (rx || o.bytes.size)
		ret = config_dev_set(p, rx ? "rx-bps" : "bps", rate_bucket_text(&o.bytes, true, buf), e);
	if (!ret && (rx || o.ops.size))
		ret = config_dev_set(p, rx ? "rx-ops" : "ops", rate_bucket_text(&o.ops, false, buf), e);
	return ret;
}

static int add_drive(struct run_config *c, const json_t *d, struct error *e)
{
	struct config_dev p;
	const char *id = json_string_value(json_object_get(d, "drive_id"));
	char name[96];
	snprintf(name, sizeof(name), "drive %.64s", id);
	int ret = config_dev_begin(&c->vm, VM_DEV_BLK, name, NULL, &p, e);
	const json_t *engine = json_object_get(d, "io_engine");
	if (!ret)
		ret = config_dev_set(&p, "path", json_string_value(json_object_get(d, "path_on_host")), e);
	if (!ret && json_is_true(json_object_get(d, "is_read_only")))
		ret = config_dev_set(&p, "ro", NULL, e);
	if (!ret && engine)
		ret = config_dev_set(&p, "engine", strcmp(json_string_value(engine), "Async") ? "sync"
										: "uring", e);
	if (!ret)
		ret = set_limit(&p, json_object_get(d, "rate_limiter"), false, e);
	return ret ? ret : config_dev_end(&p, e);
}

/* Drives in the guest's order: the root drive first (Firecracker's), then the others. */
static int add_drives(struct run_config *c, const json_t *drives, const char **root, bool *ro,
		      struct error *e)
{
	size_t i;
	const json_t *d;
	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(drives, i, d) {
			if (json_is_true(json_object_get(d, "is_root_device")) != (pass == 0))
				continue;
			int ret = add_drive(c, d, e);
			if (ret)
				return ret;
			if (pass == 0) {
				const json_t *uuid = json_object_get(d, "partuuid");
				*root = uuid ? json_string_value(uuid) : "/dev/vda";
				*ro = json_is_true(json_object_get(d, "is_read_only"));
			}
		}
	return 0;
}

int fc_config_drive_index(const json_t *doc, const char *id)
{
	const json_t *drives = json_object_get(doc, "drives"), *d;
	size_t i;
	int n = 0;
	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(drives, i, d) {
			if (json_is_true(json_object_get(d, "is_root_device")) != (pass == 0))
				continue;
			if (!strcmp(json_string_value(json_object_get(d, "drive_id")), id))
				return n;
			n++;
		}
	return -1;
}

static int add_net(struct run_config *c, const json_t *n, struct error *e)
{
	struct config_dev p;
	char name[96], num[16];
	snprintf(name, sizeof(name), "network interface %.64s",
		 json_string_value(json_object_get(n, "iface_id")));
	int ret = config_dev_begin(&c->vm, VM_DEV_NET, name, NULL, &p, e);
	const json_t *mac = json_object_get(n, "guest_mac"), *mtu = json_object_get(n, "mtu");
	if (!ret)
		ret = config_dev_set(&p, "backend", "tap", e);
	if (!ret)
		ret = config_dev_set(&p, "ifname", json_string_value(json_object_get(n, "host_dev_name")), e);
	if (!ret) /* a snapshot keeps it: PUT /snapshot/load's network_overrides name it */
		ret = config_dev_set(&p, "id", json_string_value(json_object_get(n, "iface_id")), e);
	if (!ret && mac)
		ret = config_dev_set(&p, "mac", json_string_value(mac), e);
	if (!ret && mtu) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(mtu));
		ret = config_dev_set(&p, "mtu", num, e);
	}
	if (!ret)
		ret = set_limit(&p, json_object_get(n, "tx_rate_limiter"), false, e);
	if (!ret)
		ret = set_limit(&p, json_object_get(n, "rx_rate_limiter"), true, e);
	return ret ? ret : config_dev_end(&p, e);
}

static int add_vsock(struct run_config *c, const json_t *v, struct error *e)
{
	struct config_dev p;
	char num[16];
	snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(json_object_get(v, "guest_cid")));
	int ret = config_dev_begin(&c->vm, VM_DEV_VSOCK, "vsock", NULL, &p, e);
	if (!ret)
		ret = config_dev_set(&p, "cid", num, e);
	if (!ret)
		ret = config_dev_set(&p, "path", json_string_value(json_object_get(v, "uds_path")), e);
	return ret ? ret : config_dev_end(&p, e);
}

static int add_entropy(struct run_config *c, const json_t *v, struct error *e)
{
	struct config_dev p;
	int ret = config_dev_begin(&c->vm, VM_DEV_RNG, "entropy", NULL, &p, e);
	if (!ret)
		ret = set_limit(&p, json_object_get(v, "rate_limiter"), false, e);
	return ret ? ret : config_dev_end(&p, e);
}

int fc_config_build(const json_t *doc, struct run_config *c, struct error *e)
{
	const json_t *boot = json_object_get(doc, "boot-source"),
		     *mc = json_object_get(doc, "machine-config"), *v;
	if (!boot)
		return error_set(e, -EINVAL, "Cannot start microvm without kernel configuration.");
	int ret = set_key(c, "kernel", json_string_value(json_object_get(boot, "kernel_image_path")), e);
	if (!ret && (v = json_object_get(boot, "initrd_path")))
		ret = set_key(c, "initrd", json_string_value(v), e);
	char num[32];
	if (!ret && mc && (v = json_object_get(mc, "vcpu_count"))) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		ret = set_key(c, "cpus", num, e);
	}
	if (!ret && mc && (v = json_object_get(mc, "mem_size_mib"))) {
		snprintf(num, sizeof(num), "%lldM", (long long)json_integer_value(v));
		ret = set_key(c, "mem", num, e);
	}
	const char *root = NULL;
	bool ro = false;
	if (!ret && (v = json_object_get(doc, "drives")))
		ret = add_drives(c, v, &root, &ro, e);
	char rootarg[96];
	if (root && strcmp(root, "/dev/vda")) {
		snprintf(rootarg, sizeof(rootarg), "PARTUUID=%.64s", root);
		root = rootarg;
	}
	if (!ret)
		ret = set_cmdline(c, json_string_value(json_object_get(boot, "boot_args")), root, ro, e);
	size_t i;
	const json_t *n;
	json_array_foreach(json_object_get(doc, "network-interfaces"), i, n)
		if (!ret)
			ret = add_net(c, n, e);
	if (!ret && (v = json_object_get(doc, "vsock")))
		ret = add_vsock(c, v, e);
	if (!ret && (v = json_object_get(doc, "entropy")))
		ret = add_entropy(c, v, e);
	if (!ret && (v = json_object_get(doc, "serial")) && json_object_get(v, "serial_out_path")) {
		char *arg = NULL;
		if (asprintf(&arg, "file=%s", json_string_value(json_object_get(v, "serial_out_path"))) < 0)
			return error_set(e, -ENOMEM, "out of memory");
		ret = set_key(c, "serial", arg, e);
		free(arg);
	}
	return ret;
}
