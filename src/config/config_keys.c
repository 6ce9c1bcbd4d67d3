/* Config keys: the one list of `msivm run` settings (option names = file keys) and their value checks. */
#include "config/run_config.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "config/config_devices.h"
#include "config/config_names.h"
#include "util/parse.h"

static int set_mem(struct run_config *c, const char *val, struct error *e)
{
	uint64_t v;
	size_t digits = strspn(val, "0123456789");
	int bad = digits && !val[digits] ? parse_uint(val, 0, UINT64_MAX >> 20, &v)
					 : parse_size(val, &v);
	if (bad)
		return error_set(e, -EINVAL, "bad --mem size '%.100s': use a number with K, M or G "
				 "(a bare number is MiB)", val);
	if (digits && !val[digits])
		v *= MiB;
	if (v < GUEST_MEM_MIN || v > GUEST_MEM_MAX || v % (4 * KiB))
		return error_set(e, -EINVAL, "--mem %.100s is out of range: 2M to 1T, a multiple of 4K",
				 val);
	c->vm.mem_size = v;
	return 0;
}

static void store_cpus(struct run_config *c, uint64_t v) { c->vm.ncpus = (uint32_t)v; }
static void store_rt(struct run_config *c, uint64_t v) { c->vm.cpu.rt_prio = (int)v; }
static void store_halt_poll(struct run_config *c, uint64_t v) { c->vm.cpu.halt_poll_ns = (int64_t)v; }
static void store_shutdown_timeout(struct run_config *c, uint64_t v)
{
	c->vm.shutdown_timeout_ms = (uint32_t)v * 1000;
}

/* The integer keys: their range, what a refusal asks for, where the value goes. */
static const struct number {
	const char *key;
	uint64_t min, max;
	const char *use;
	void (*store)(struct run_config *c, uint64_t v);
} numbers[] = {
	{ "cpus", 1, 255, "a number from 1 to 255", store_cpus },
	{ "rt", 1, 99, "a priority from 1 to 99", store_rt },
	{ "halt-poll", 0, 1000000000, "nanoseconds, 0 to 1e9", store_halt_poll },
	{ "shutdown-timeout", 0, 3600, "seconds, 0 to 3600", store_shutdown_timeout },
};

static int set_number(struct run_config *c, const struct config_key *k, const char *val,
		      struct error *e)
{
	for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		uint64_t v;
		if (strcmp(numbers[i].key, k->name))
			continue;
		if (parse_uint(val, numbers[i].min, numbers[i].max, &v))
			return error_set(e, -EINVAL, "bad --%s '%.100s': use %s", k->name, val,
					 numbers[i].use);
		numbers[i].store(c, v);
		return 0;
	}
	return error_set(e, -EINVAL, "--%s: no such number", k->name);
}

static int set_cpuid_hide(struct run_config *c, const char *val, struct error *e)
{
	struct error why;
	if (cpuid_hide_parse(val, &c->vm.cpuid_hide, &why))
		return error_set(e, -EINVAL, "--cpuid-hide: %s", why.msg);
	return 0;
}

/* Kept as "file=FILE", "socket=PATH", "tty" or "off", so that FILE and file=FILE print alike. */
static int set_serial(struct run_config *c, const char *val, struct error *e)
{
	if (!val[0] || !strcmp(val, "file=") || !strcmp(val, "socket="))
		return error_set(e, -EINVAL, "--serial needs FILE, file=FILE, socket=PATH, tty or off");
	if (!strcmp(val, "off") || !strcmp(val, "tty") || !strncmp(val, "file=", 5) ||
	    !strncmp(val, "socket=", 7))
		return config_strset(&c->serial, val, e);
	char *s = NULL;
	if (asprintf(&s, "file=%s", val) < 0)
		return error_set(e, -ENOMEM, "out of memory");
	free(c->serial);
	c->serial = s;
	return 0;
}

enum serial_kind run_config_serial(const struct run_config *c, const char **path)
{
	const char *v = c->serial;
	*path = NULL;
	if (!v)
		return SERIAL_STDOUT;
	if (!strcmp(v, "off"))
		return SERIAL_OFF;
	if (!strcmp(v, "tty"))
		return SERIAL_TTY;
	if (!strncmp(v, "socket=", 7)) {
		*path = v + 7;
		return SERIAL_SOCKET;
	}
	*path = !strncmp(v, "file=", 5) ? v + 5 : v; /* set_serial stores every FILE as file=FILE */
	return SERIAL_FILE;
}

static int set_user(struct run_config *c, const char *val, struct error *e)
{
	return jail_parse_user(val, &c->jail, e);
}

static int set_seccomp(struct run_config *c, const char *val, struct error *e)
{
	char hint[64];
	if (seccomp_mode_parse(val, &c->vm.seccomp))
		return error_set(e, -EINVAL, "bad --seccomp '%.100s': use on, log or off%s", val,
				 config_enum_hint(CONFIG_E_SECCOMP, val, hint, sizeof(hint)));
	return 0;
}

static int set_log_level(struct run_config *c, const char *val, struct error *e)
{
	char hint[64];
	if (log_level_parse(val, &c->log_level))
		return error_set(e, -EINVAL, "bad --log-level '%.100s': use error, warn, info or "
				 "debug%s", val, config_enum_hint(CONFIG_E_LOG_LEVEL, val, hint,
								   sizeof(hint)));
	return 0;
}

static json_t *get_cpuid_hide(const struct run_config *c)
{
	char list[256] = "";
	size_t n = 0;
	for (unsigned i = 0; cpuid_feature_name(i) && n < sizeof(list); i++)
		if (c->vm.cpuid_hide & (1ULL << i))
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? "," : "",
					      cpuid_feature_name(i));
	return json_string(list);
}

static json_t *get_mem(const struct run_config *c)
{
	char buf[SIZE_TEXT_MAX];
	return json_string(size_text(c->vm.mem_size, buf));
}

static json_t *get_cpus(const struct run_config *c) { return json_integer(c->vm.ncpus); }

/* "vcpu0=CPU,...,io=CPU" from the pinning in effect ("": none). */
static json_t *get_cpu_pin(const struct run_config *c)
{
	char spec[2048] = "";
	size_t n = 0;
	for (uint32_t i = 0; i < c->vm.ncpus && n < sizeof(spec); i++)
		if (c->vm.cpu.vcpu_cpu[i] != CPU_UNPINNED)
			n += (size_t)snprintf(spec + n, sizeof(spec) - n, "%svcpu%u=%d", n ? "," : "", i,
					      c->vm.cpu.vcpu_cpu[i]);
	if (c->vm.cpu.io_cpu != CPU_UNPINNED && n < sizeof(spec))
		snprintf(spec + n, sizeof(spec) - n, "%sio=%d", n ? "," : "", c->vm.cpu.io_cpu);
	return json_string(spec);
}

static json_t *get_rt(const struct run_config *c)
{
	return c->vm.cpu.rt_prio ? json_integer(c->vm.cpu.rt_prio) : json_null();
}

static json_t *get_halt_poll(const struct run_config *c)
{
	return c->vm.cpu.halt_poll_ns >= 0 ? json_integer(c->vm.cpu.halt_poll_ns) : json_null();
}

static json_t *get_seccomp(const struct run_config *c)
{
	return json_string(config_enum_name(CONFIG_E_SECCOMP, c->vm.seccomp));
}

/* "UID:GID" as resolved, so that names and ids print alike. */
static json_t *get_user(const struct run_config *c)
{
	if (!c->jail.drop_user)
		return json_null();
	char s[32];
	snprintf(s, sizeof(s), "%u:%u", (unsigned)c->jail.uid, (unsigned)c->jail.gid);
	return json_string(s);
}

static json_t *get_shutdown_timeout(const struct run_config *c)
{
	return json_integer(c->vm.shutdown_timeout_ms / 1000);
}

static json_t *get_log_level(const struct run_config *c)
{
	return json_string(config_enum_name(CONFIG_E_LOG_LEVEL, c->log_level));
}

#define STR(name, field, def) { name, CONFIG_STRING, 0, NULL, NULL, \
				offsetof(struct run_config, field), def }
#define FLAG(name, field) { name, CONFIG_FLAG, 0, NULL, NULL, offsetof(struct run_config, field), NULL }
#define DEV(type, entry, option) { option, CONFIG_DEVICES, type, NULL, NULL, 0, NULL },
#define KEY(name, kind, fn) { name, kind, 0, set_##fn, get_##fn, 0, NULL }
#define NUM(name, fn) { name, CONFIG_UINT, 0, NULL, get_##fn, 0, NULL }

/* The --print-config order: the guest, its devices, the host side, msivm's own output. */
static const struct config_key keys[] = {
	STR("kernel", kernel, NULL),
	STR("initrd", initrd, NULL),
	STR("cmdline", cmdline, ""),
	KEY("cpuid-hide", CONFIG_STRING, cpuid_hide),
	KEY("mem", CONFIG_SIZE, mem),
	STR("mem-file", mem_file, NULL),
	NUM("cpus", cpus),
	{ "serial", CONFIG_STRING, 0, set_serial, NULL, offsetof(struct run_config, serial), NULL },
	FLAG("pit", vm.pit),
	FLAG("testdev", vm.testdev),
	DEVICE_TYPES(DEV) /* one key per device type, in slot order */
	STR("kvm-device", kvm_device, CONFIG_KVM_DEVICE),
	{ "cpu-pin", CONFIG_STRING, 0, NULL, get_cpu_pin, offsetof(struct run_config, cpu_pin), NULL },
	NUM("rt", rt),
	FLAG("dedicated", vm.cpu.dedicated),
	NUM("halt-poll", halt_poll),
	KEY("seccomp", CONFIG_STRING, seccomp),
	KEY("user", CONFIG_STRING, user),
	STR("chroot", chroot, NULL),
	FLAG("no-reboot", no_reboot),
	NUM("shutdown-timeout", shutdown_timeout),
	STR("api-socket", api_socket, NULL),
	FLAG("stats", stats),
	STR("stats-json", stats_json, NULL),
	STR("log-file", log_file, NULL),
	STR("dump-on-crash", dump_dir, NULL),
	KEY("log-level", CONFIG_STRING, log_level),
};

const struct config_key *config_keys(size_t *n)
{
	*n = sizeof(keys) / sizeof(keys[0]);
	return keys;
}

const struct config_key *config_key_find(const char *name)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

int config_set(struct run_config *c, const struct config_key *k, const char *val,
	       struct error *e)
{
	char opt[32];
	switch (k->kind) {
	case CONFIG_DEVICES:
		snprintf(opt, sizeof(opt), "--%s", k->name);
		return config_dev_parse(&c->vm, k->dev, opt, val, true, e);
	case CONFIG_UINT:
		return set_number(c, k, val, e);
	case CONFIG_FLAG:
		if (val && strcmp(val, "on") && strcmp(val, "off"))
			return error_set(e, -EINVAL, "--%s takes no value", k->name);
		*(bool *)((char *)c + k->off) = !val || !strcmp(val, "on");
		return 0;
	default:
		if (k->set)
			return k->set(c, val, e);
		return config_strset((char **)((char *)c + k->off), val, e); /* also cpu-pin */
	}
}
