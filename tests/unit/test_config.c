/* Unit tests for the run configuration: option table = file keys, file = command line, round trip, aliases, refusals. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <jansson.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/blk_backend.h"
#include "backends/net_backend.h"
#include "config/config_cli.h"
#include "config/config_devices.h"
#include "config/config_json.h"
#include "config/config_names.h"
#include "config/config_print.h"
#include "vmm/seccomp.h"

#define MAX_ARGS 40

/* A scratch disk image; "@IMG@" in a test's text stands for its path. */
struct fixture {
	char img[64];
};

static int group_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->img, sizeof(f->img), "/tmp/msivm-test-config-XXXXXX");
	int fd = mkstemp(f->img);
	if (fd < 0 || ftruncate(fd, 1 << 20))
		return -1;
	close(fd);
	*state = f;
	return 0;
}

static int group_teardown(void **state)
{
	struct fixture *f = *state;
	unlink(f->img);
	free(f);
	return 0;
}

/* tmpl with every "@IMG@" replaced by the image path (malloc'd). */
static char *subst(void **state, const char *tmpl)
{
	const struct fixture *f = *state;
	char *out = calloc(1, strlen(tmpl) * 2 + 256), *o = out;
	for (const char *p = tmpl; *p;) {
		if (!strncmp(p, "@IMG@", 5)) {
			o += sprintf(o, "%s", f->img);
			p += 5;
		} else {
			*o++ = *p++;
		}
	}
	return out;
}

/* Parses `msivm run` + the space-separated words of `line` ("_" stands for an empty word).
 * Returns 0 or the error code; *e gets the message. */
static int parse_cli(void **state, const char *line, struct run_config *c, struct error *e)
{
	char *copy = subst(state, line), *argv[MAX_ARGS] = { "run" }, *save = NULL;
	int argc = 1;
	for (char *w = strtok_r(copy, " ", &save); w && argc < MAX_ARGS - 1; w = strtok_r(NULL, " ", &save))
		argv[argc++] = strcmp(w, "_") ? w : "";
	argv[argc] = NULL;
	enum config_action action;
	run_config_init(c);
	int ret = config_cli_parse(argc, argv, c, &action, e);
	free(copy);
	return ret;
}

static int parse_file(void **state, const char *json, struct run_config *c, struct error *e)
{
	char *text = subst(state, json);
	run_config_init(c);
	int ret = config_json_read(c, text, strlen(text), "vm.json", e);
	free(text);
	return ret ? ret : run_config_finish(c, e);
}

static char *print_and_free(struct run_config *c)
{
	struct error e;
	char *text = config_print(c, &e);
	if (!text)
		fail_msg("config_print: %s", e.msg);
	run_config_free(c);
	return text;
}

/* parse_cli or parse_file. */
typedef int (*parse_fn)(void **state, const char *text, struct run_config *c, struct error *e);

/* What `parse` makes of text, printed; the test fails if it is refused. */
static char *print_with(void **state, parse_fn parse, const char *text)
{
	struct run_config c;
	struct error e;
	if (parse(state, text, &c, &e))
		fail_msg("'%s' is refused: %s", text, e.msg);
	return print_and_free(&c);
}

/* `parse` refuses text with a message that contains msg. */
static void expect_error_with(void **state, parse_fn parse, const char *text, const char *msg)
{
	struct run_config c;
	struct error e = { "" };
	if (!parse(state, text, &c, &e))
		fail_msg("'%s' was accepted", text);
	if (!strstr(e.msg, msg))
		fail_msg("'%s': message '%s' lacks '%s'", text, e.msg, msg);
	run_config_free(&c);
}

static char *print_cli(void **state, const char *line) { return print_with(state, parse_cli, line); }
static char *print_file(void **state, const char *json) { return print_with(state, parse_file, json); }

static void expect_cli_error(void **state, const char *line, const char *msg)
{
	expect_error_with(state, parse_cli, line, msg);
}

/* The printed text, read back as a file, prints the same bytes. */
static void expect_round_trip(void **state, const char *printed)
{
	char *again = print_file(state, printed);
	assert_string_equal(again, printed);
	free(again);
}

static void expect_same(void **state, const char *line, const char *json)
{
	char *a = print_cli(state, line), *b = print_file(state, json);
	if (strcmp(a, b))
		fail_msg("'%s' and %s print differently:\n%s\n---\n%s", line, json, a, b);
	expect_round_trip(state, a);
	free(a);
	free(b);
}

static bool in_cli_table(const char *name)
{
	for (const struct option *o = config_cli_options(); o->name; o++)
		if (!strcmp(o->name, name))
			return true;
	return false;
}

static void test_option_table_and_file_keys_agree(void **state)
{
	size_t n;
	const struct config_key *keys = config_keys(&n);
	for (const struct option *o = config_cli_options(); o->name; o++)
		if (!config_cli_only(o->name) && !config_key_find(o->name))
			fail_msg("--%s is a command-line option but no config file key", o->name);
	for (size_t i = 0; i < n; i++) {
		if (!in_cli_table(keys[i].name))
			fail_msg("config file key '%s' is no command-line option", keys[i].name);
		if (config_cli_only(keys[i].name))
			fail_msg("'%s' is both a file key and command-line only", keys[i].name);
	}
}

static void test_print_lists_every_key_in_table_order(void **state)
{
	char *text = print_cli(state, "--kernel k");
	json_t *root = json_loads(text, 0, NULL);
	assert_non_null(root);
	size_t n, i = 0;
	const struct config_key *keys = config_keys(&n);
	const char *key;
	json_t *v;
	json_object_foreach(root, key, v) {
		assert_true(i < n);
		assert_string_equal(key, keys[i++].name);
	}
	assert_int_equal(i, n);
	json_decref(root);
	free(text);
}

/* Each module's parse function with the value as an unsigned. */
#define AS_UNSIGNED(fn, type) \
	static int fn##_u(const char *s, unsigned *v) \
	{ \
		type x; \
		int ret = fn(s, &x); \
		*v = (unsigned)x; \
		return ret; \
	}
AS_UNSIGNED(irq_mode_parse, enum irq_mode)
AS_UNSIGNED(irq_path_parse, enum irq_path)
AS_UNSIGNED(seccomp_mode_parse, enum seccomp_mode)
AS_UNSIGNED(log_level_parse, enum log_level)
AS_UNSIGNED(blk_engine_parse, enum blk_engine)
AS_UNSIGNED(net_be_kind_parse, enum net_be_kind)
AS_UNSIGNED(net_peer_mode_parse, enum net_peer_mode)
AS_UNSIGNED(virtio_rng_source_parse, enum virtio_rng_source)

/* Every spelling parses to its own value: the configuration's tables (msivm's and the
 * transport's enumerations) and the device modules' (engine, backend, peer, rng source). */
static void test_enum_names_parse_to_their_values(void **state)
{
	static const struct {
		enum config_enum which;
		int (*parse)(const char *s, unsigned *v);
	} enums[] = {
		{ CONFIG_E_IRQ, irq_mode_parse_u },
		{ CONFIG_E_IRQPATH, irq_path_parse_u },
		{ CONFIG_E_SECCOMP, seccomp_mode_parse_u },
		{ CONFIG_E_LOG_LEVEL, log_level_parse_u },
	};
	for (size_t e = 0; e < sizeof(enums) / sizeof(enums[0]); e++) {
		const char *s;
		unsigned i = 0, v = ~0u;
		for (; (s = config_enum_name(enums[e].which, i)); i++) {
			if (enums[e].parse(s, &v) || v != i)
				fail_msg("'%s' parses to %u, not %u", s, v, i);
		}
		assert_true(i >= 2);
	}
	static const struct {
		const char *const *names;
		unsigned n;
		int (*parse)(const char *s, unsigned *v);
	} mods[] = {
		{ blk_engine_names, BLK_ENGINE_N, blk_engine_parse_u },
		{ net_be_kind_names, NET_BE_NKINDS, net_be_kind_parse_u },
		{ net_peer_mode_names, NET_PEER_NMODES, net_peer_mode_parse_u },
		{ virtio_rng_source_names, VIRTIO_RNG_NSOURCES, virtio_rng_source_parse_u },
	};
	for (size_t m = 0; m < sizeof(mods) / sizeof(mods[0]); m++) {
		unsigned named = 0, v = ~0u;
		for (unsigned i = 0; i < mods[m].n; i++) {
			if (!mods[m].names[i])
				continue;
			named++;
			if (mods[m].parse(mods[m].names[i], &v) || v != i)
				fail_msg("'%s' parses to %u, not %u", mods[m].names[i], v, i);
		}
		assert_true(named >= 2);
		assert_int_equal(mods[m].parse("no-such-word", &v), -EINVAL);
	}
}

/* Each device type's option takes the transport's keys (coalesce= read as the transport's
 * on-off-or-number: no type shadows it), bps=/ops= only where the type is rate limited, its own
 * keys with the kinds its entry gives, and no key that only another type has. */
static void test_device_keys_come_from_the_type_table(void **state)
{
	(void)state;
	struct vm_config *vm = calloc(1, sizeof(*vm));
	assert_non_null(vm);
	for (int t = 0; t < VM_DEV_NTYPES; t++) {
		const struct device_type *type = device_type_get((enum vm_device_type)t);
		struct config_dev p;
		struct error e;
		enum config_kind kind;
		vm->ndevices = 0;
		assert_int_equal(config_dev_begin(vm, (enum vm_device_type)t, "--x", NULL, &p, &e), 0);
		assert_int_equal(config_dev_kind(&p, "coalesce", &kind, &e), 0);
		assert_int_equal(kind, CONFIG_UINT_WORD);
		assert_int_equal(config_dev_kind(&p, "irq", &kind, &e), 0);
		assert_int_equal(config_dev_kind(&p, "bps", &kind, &e), type->rate_limit ? 0 : -EINVAL);
		for (const struct device_key *k = type->keys; k && k->name; k++) {
			assert_int_equal(config_dev_kind(&p, k->name, &kind, &e), 0);
			assert_int_equal(kind, k->kind == DEVICE_KEY_UINT ? CONFIG_UINT
					 : k->kind == DEVICE_KEY_SIZE ? CONFIG_SIZE
					 : k->kind == DEVICE_KEY_FLAG ? CONFIG_FLAG : CONFIG_STRING);
		}
		for (int u = 0; u < VM_DEV_NTYPES; u++) {
			const struct device_type *other = device_type_get((enum vm_device_type)u);
			for (const struct device_key *k = other->keys; u != t && k && k->name; k++) {
				bool mine = false;
				for (const struct device_key *j = type->keys; j && j->name; j++)
					mine |= !strcmp(j->name, k->name);
				if (!mine && config_dev_kind(&p, k->name, &kind, &e) != -EINVAL)
					fail_msg("--%s takes %s's key %s", device_type_option((enum vm_device_type)t),
						 device_type_option((enum vm_device_type)u), k->name);
			}
		}
	}
	free(vm);
}

/* A command line and a file that mean the same. */
struct same_case {
	const char *cli, *json;
};

/* Text that `parse` refuses with a message containing msg. */
struct refusal {
	parse_fn parse;
	const char *text, *msg;
};

#define NCASES(a) (sizeof(a) / sizeof(a[0]))

static void expect_all_same(void **state, const struct same_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect_same(state, cases[i].cli, cases[i].json);
}

static void expect_all_refused(void **state, const struct refusal *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		expect_error_with(state, cases[i].parse, cases[i].text, cases[i].msg);
}

static void test_file_and_command_line_print_alike(void **state)
{
	static const struct same_case cases[] = {
		{ "--kernel k", "{\"kernel\": \"k\"}" },
		{ "--kernel k --cmdline console=ttyS0 --mem 1G --cpus 2 --pit --serial out.txt"
		  " --cpuid-hide xsave --no-reboot --stats --shutdown-timeout 3 --log-level debug"
		  " --halt-poll 5000 --seccomp log --user 0:0 --stats-json - --cpu-pin vcpu0=0"
		  " --api-socket /tmp/api.sock",
		  "{\"kernel\": \"k\", \"cmdline\": \"console=ttyS0\", \"mem\": \"1G\", \"cpus\": 2,"
		  " \"pit\": true, \"serial\": \"file=out.txt\", \"cpuid-hide\": \"xsave\","
		  " \"no-reboot\": true, \"stats\": true, \"shutdown-timeout\": 3,"
		  " \"log-level\": \"debug\", \"halt-poll\": 5000, \"seccomp\": \"log\","
		  " \"user\": \"0\", \"stats-json\": \"-\", \"cpu-pin\": \"vcpu0=0\","
		  " \"api-socket\": \"/tmp/api.sock\"}" },
		/* Device mixes: each kind keeps its order, the kinds go rng, disk, console, net. */
		{ "--kernel k --disk path=@IMG@,ro,queues=2,engine=sync,irq=intx --rng _"
		  " --net backend=peer,peer=source,rate=100,size=200,mac=52:54:00:00:00:09,mtu=9000"
		  " --console out=c.txt,in=/dev/null,max=0 --rng irq=msi,latency=100,bps=1M,ops=10",
		  "{\"net\": [{\"backend\": \"peer\", \"peer\": \"source\", \"rate\": 100, \"size\": 200,"
		  " \"mac\": \"52:54:00:00:00:09\", \"mtu\": 9000}],"
		  " \"rng\": [{}, \"irq=msi,latency=100,bps=1M,ops=10\"],"
		  " \"console\": [{\"out\": \"c.txt\", \"in\": \"/dev/null\", \"max\": 0}],"
		  " \"kernel\": \"k\", \"disk\": [{\"path\": \"@IMG@\", \"ro\": true, \"queues\": 2,"
		  " \"engine\": \"sync\", \"irq\": \"intx\"}]}" },
		{ "--kernel k --net backend=socket,path=/tmp/s --net backend=tap,queues=3"
		  " --disk path=@IMG@ --disk path=@IMG@,ro,irqpath=signal-msi,vectors=3,bps=4096",
		  "{\"kernel\": \"k\", \"disk\": [\"path=@IMG@\", {\"path\": \"@IMG@\", \"ro\": true,"
		  " \"irqpath\": \"signal-msi\", \"vectors\": 3, \"bps\": 4096}],"
		  " \"net\": [{\"backend\": \"socket\", \"path\": \"/tmp/s\"},"
		  " {\"backend\": \"tap\", \"queues\": 3}]}" },
		/* null keeps the default */
		{ "--kernel k", "{\"kernel\": \"k\", \"initrd\": null, \"rt\": null, \"disk\": null}" },
		/* coalesce=: a word or a number of microseconds, in both forms */
		{ "--kernel k --disk path=@IMG@,coalesce=off --disk path=@IMG@,coalesce=250 --rng coalesce=on",
		  "{\"kernel\": \"k\", \"disk\": [{\"path\": \"@IMG@\", \"coalesce\": \"off\"},"
		  " {\"path\": \"@IMG@\", \"coalesce\": 250}], \"rng\": [{\"coalesce\": \"on\"}]}" },
	};
	expect_all_same(state, cases, NCASES(cases));
}

static void test_command_line_adds_to_and_overrides_the_file(void **state)
{
	char json[] = "/tmp/msivm-test-config-json-XXXXXX";
	int fd = mkstemp(json);
	assert_true(fd >= 0);
	char *text = subst(state, "{\"kernel\": \"k\", \"cpus\": 2, \"mem\": 512, \"log-level\": \"info\","
			   " \"disk\": [\"path=@IMG@\"], \"cpu-pin\": \"vcpu1=0\"}");
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	free(text);
	char line[256];
	snprintf(line, sizeof(line), "--cpus 3 --config %s --rng _ -v --disk path=@IMG@,ro"
		 " --cpu-pin vcpu2=0", json);
	expect_same(state, line, "{\"kernel\": \"k\", \"cpus\": 3, \"mem\": \"512M\","
		    " \"log-level\": \"debug\", \"rng\": [{}], \"cpu-pin\": \"vcpu2=0\","
		    " \"disk\": [\"path=@IMG@\", \"path=@IMG@,ro\"]}");
	snprintf(line, sizeof(line), "--config %s --config %s", json, json);
	expect_cli_error(state, line, "--config is given twice");
	unlink(json);
}

static void test_aliases(void **state)
{
	static const struct same_case cases[] = {
		{ "--kernel k --disk path=@IMG@,readonly=on,num_queues=4",
		  "{\"kernel\": \"k\", \"disk\": [{\"path\": \"@IMG@\", \"ro\": true, \"queues\": 4}]}" },
		{ "--kernel k --disk path=@IMG@,ro,readonly=off",
		  "{\"kernel\": \"k\", \"disk\": [{\"path\": \"@IMG@\", \"readonly\": false}]}" },
		{ "--kernel k --net tap=tap7,num_queues=2",
		  "{\"kernel\": \"k\", \"net\": [\"backend=tap,ifname=tap7,queues=2\"]}" },
		{ "--kernel k --memory size=2G", "{\"kernel\": \"k\", \"mem\": \"2048M\"}" },
		{ "--kernel k --mem 256", "{\"kernel\": \"k\", \"mem\": \"256M\"}" },
		{ "--kernel k --mem 300", "{\"kernel\": \"k\", \"mem\": 300}" },
		{ "--kernel k --mem 4100K", "{\"kernel\": \"k\", \"mem\": \"4100k\"}" },
		{ "--kernel k --serial file=x", "{\"kernel\": \"k\", \"serial\": \"x\"}" },
		/* vectors=0 alone is irq=intx (QEMU's spelling); msi has no MSI-X anyway */
		{ "--kernel k --rng vectors=0", "{\"kernel\": \"k\", \"rng\": [{\"irq\": \"intx\","
		  " \"vectors\": 0}]}" },
		{ "--kernel k --rng irq=msi,vectors=0", "{\"kernel\": \"k\", \"rng\": [\"vectors=0,irq=msi\"]}" },
		/* backend=unix is the default; backend=vhost needs no path */
		{ "--kernel k --vsock cid=5,path=/tmp/v.sock",
		  "{\"kernel\": \"k\", \"vsock\": [\"cid=5,backend=unix,path=/tmp/v.sock\"]}" },
		{ "--kernel k --vsock backend=vhost,cid=9",
		  "{\"kernel\": \"k\", \"vsock\": [{\"cid\": 9, \"backend\": \"vhost\"}]}" },
		{ "--kernel k --device path=/sys/bus/pci/devices/0000:00:04.0,id=nvme,irq=intx",
		  "{\"kernel\": \"k\", \"device\": [{\"path\": \"/sys/bus/pci/devices/0000:00:04.0\", "
		  "\"id\": \"nvme\", \"irq\": \"intx\"}]}" },
	};
	expect_all_same(state, cases, NCASES(cases));
}

static void test_refusals_name_the_problem(void **state)
{
	static const struct refusal cases[] = {
		{ parse_cli, "--kernel k --dsik path=@IMG@", "unknown option --dsik; did you mean --disk?" },
		{ parse_cli, "--kernel k --kernal k", "did you mean --kernel?" },
		{ parse_cli, "--kernel k --frobnicate", "unknown option --frobnicate (see msivm --help)" },
		{ parse_cli, "--kernel k --disk pth=@IMG@", "unknown device option 'pth=" },
		{ parse_cli, "--kernel k --disk pth=@IMG@", "did you mean path?" },
		{ parse_cli, "--kernel k --rng irq=msx", "bad irq mode 'msx': use msix, msix-shared, "
		  "msi or intx; did you mean msix?" },
		{ parse_cli, "--kernel k --seccomp of", "did you mean off?" },
		{ parse_cli, "--kernel k --rng colour=blue", "unknown device option 'colour=blue'" },
		{ parse_cli, "--kernel k --memory size=1G,shared=on", "--memory: shared needs file=PATH" },
		{ parse_cli, "--kernel k --memory size=1G,hugepages=on", "--memory: unknown option 'hugepages'" },
		{ parse_cli, "--kernel k --memory sise=1G", "did you mean size?" },
		{ parse_cli, "--kernel k --mem 1", "out of range" },
		{ parse_cli, "--kernel k --rng irq=msix,vectors=0", "vectors=0 means no MSI-X" },
		{ parse_cli, "--kernel k --rng vectors=0,irq=msix-shared", "vectors=0 means no MSI-X" },
		{ parse_cli, "--kernel k --cpus", "option '--cpus' needs a value" },
		{ parse_cli, "--kernel k --pit=1", "option --pit takes no value" },
		{ parse_cli, "--kernel k stray", "unexpected argument 'stray'" },
		{ parse_cli, "--kernel k --serial _", "--serial needs FILE" },
		{ parse_cli, "--kernel k --disk path=@IMG@,queues", "'queues' needs a value" },
		{ parse_cli, "--kernel k --disk path=@IMG@,ro=maybe", "bad ro 'maybe'" },
		{ parse_cli, "--kernel k --net backend=peer,tap=x", "tap=NAME means backend=tap" },
		{ parse_cli, "--kernel k --net tap=x,backend=socket", "tap=NAME means backend=tap" },
		{ parse_cli, "--kernel k --net backend=peer,ifname=x", "ifname= is for backend=tap" },
		{ parse_cli, "--kernel k --net backend=vhost,queues=3", "backend=vhost drives one queue" },
		{ parse_cli, "--kernel k --net backend=vhost,ops=100", "backend=vhost leaves it to the" },
		{ parse_cli, "--kernel k --net tap=t0,backend=peer", "tap=NAME means backend=tap (or" },
		{ parse_cli, "--kernel k --disk path=/nonexistent/x.img", "cannot open disk image" },
		{ parse_cli, "--kernel k --rng latency=5", "bad latency period '5'" },
		{ parse_cli, "--kernel k --disk path=@IMG@,coalesce=0", "bad coalesce '0': use on, off or 1 to 10000 us" },
		{ parse_cli, "--kernel k --disk path=@IMG@,coalesce=10001", "bad coalesce '10001'" },
		{ parse_cli, "--kernel k --net backend=vhost,coalesce=on", "backend=vhost leaves it to the" },
		{ parse_cli, "--kernel k --vsock cid=3,backend=vhost,path=/tmp/v",
		  "path= is for backend=unix: with backend=vhost" },
		{ parse_cli, "--kernel k --vsock cid=3", "path=P (the host's unix socket) is required with "
		  "backend=unix" },
		{ parse_cli, "--kernel k --vsock cid=3,backend=vmci", "bad backend 'vmci': use unix or vhost" },
		{ parse_cli, "--kernel k --device id=x", "path=/sys/bus/pci/devices/DDDD:BB:DD.F is required" },
		{ parse_cli, "--kernel k --device path=/x,irq=msix-shared", "irq=msix-shared is virtio's" },
		{ parse_cli, "--kernel k --device path=/x,poll=10", "are virtio's: a passed-through" },
		{ parse_cli, "--kernel k --device path=/x,vectors=4", "are virtio's: a passed-through" },
		{ parse_cli, "--kernel k --device pth=/x", "did you mean path?" },
		{ parse_file, "{\"kernel\": \"k\", \"device\": [{\"id\": \"n\"}]}",
		  "vm.json: device[0]: path=/sys/bus/pci/devices/DDDD:BB:DD.F is required" },
		{ parse_file, "{\"kernel\": \"k\", \"disk\": [{\"path\": \"@IMG@\", \"coalesce\": true}]}",
		  "expected an integer or a string" },
		{ parse_cli, "--kernel k --net backend=peer,mac=01:00:5e:00:00:01", "bad mac" },
		{ parse_file, "{\"kernel\": \"k\", \"dsik\": []}", "vm.json: unknown key 'dsik'; did you "
		  "mean disk?" },
		{ parse_file, "{\"kernel\": \"k\", \"disk\": [{\"pth\": \"x\"}]}",
		  "vm.json: disk[0]: unknown key 'pth'; did you mean path?" },
		{ parse_file, "{\"kernel\": \"k\", \"net\": [{\"backend\": \"peer\", \"peer\": \"snk\"}]}",
		  "did you mean sink?" },
		{ parse_file, "{\"kernel\": \"k\", \"rng\": [{\"irq\": \"msix\", \"vectors\": 0}]}",
		  "vm.json: rng[0]: vectors=0 means no MSI-X" },
		{ parse_file, "{\"kernel\": \"k\",\n  \"cpus\": 2,\n}", "vm.json:3:1: malformed JSON" },
		{ parse_file, "{\"kernel\": \"k\", \"kernel\": \"j\"}", "duplicate object key" },
		{ parse_file, "[\"--kernel\"]", "expected a JSON object of options, got an array" },
		{ parse_file, "{\"kernel\": 5}", "vm.json: kernel: expected a string, got an integer" },
		{ parse_file, "{\"kernel\": \"k\", \"cpus\": \"2\"}", "cpus: expected an integer, got a string" },
		{ parse_file, "{\"kernel\": \"k\", \"cpus\": 1.5}", "got a real number" },
		{ parse_file, "{\"kernel\": \"k\", \"pit\": 1}", "pit: expected true or false" },
		{ parse_file, "{\"kernel\": \"k\", \"mem\": true}", "mem: expected a size" },
		{ parse_file, "{\"kernel\": \"k\", \"disk\": {\"path\": \"x\"}}",
		  "disk: expected an array of objects or of option strings, got an object" },
		{ parse_file, "{\"kernel\": \"k\", \"disk\": [7]}", "disk[0]: expected an object or an "
		  "option string, got an integer" },
		{ parse_file, "{\"kernel\": \"k\", \"disk\": [{\"path\": \"@IMG@\", \"ro\": \"yes\"}]}",
		  "disk[0].ro: expected true or false, got a string" },
		{ parse_file, "{\"kernel\": \"k\", \"disk\": [{\"path\": \"@IMG@\", \"queues\": 9}]}",
		  "vm.json: disk[0]: bad queues '9': use 1 to 8" },
		{ parse_file, "{\"kernel\": \"k\", \"disk\": [{\"ro\": true}]}",
		  "vm.json: disk[0]: path=FILE is required" },
		{ parse_file, "{\"kernel\": \"k\", \"cpus\": -1}", "bad --cpus '-1'" },
		{ parse_file, "{\"cpus\": 2}", "--kernel FILE is required" },
		{ parse_file, "{\"kernel\": \"k\", \"verbose\": true}", "unknown key 'verbose'" },
	};
	expect_all_refused(state, cases, NCASES(cases));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_option_table_and_file_keys_agree),
		cmocka_unit_test(test_print_lists_every_key_in_table_order),
		cmocka_unit_test(test_enum_names_parse_to_their_values),
		cmocka_unit_test(test_device_keys_come_from_the_type_table),
		cmocka_unit_test(test_file_and_command_line_print_alike),
		cmocka_unit_test(test_command_line_adds_to_and_overrides_the_file),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_refusals_name_the_problem),
	};
	return cmocka_run_group_tests_name("config", tests, group_setup, group_teardown);
}
