/* Config command line: getopt over the option table, the --config file first, then each option in order. */
/* Link circle, on purpose (config_cli.c, config_json.c, config_restore.c): the command line reads a --config file and a --restore snapshot, a config file may restore a snapshot whose own configuration is a config file (config_json_read), and both spellings of --memory go through config_memory_set. */
#include "config/config_cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_json.h"
#include "config/config_names.h"

#define LONG_ONLY 1

#define DEVICE_OPTION(type, entry, option) { option, required_argument, NULL, LONG_ONLY },
static const struct option run_options[] = {
	{ "kernel", required_argument, NULL, LONG_ONLY },
	{ "initrd", required_argument, NULL, LONG_ONLY },
	{ "cmdline", required_argument, NULL, LONG_ONLY },
	{ "cpuid-hide", required_argument, NULL, LONG_ONLY },
	{ "mem", required_argument, NULL, LONG_ONLY },
	{ "memory", required_argument, NULL, LONG_ONLY },
	{ "mem-file", required_argument, NULL, LONG_ONLY },
	{ "cpus", required_argument, NULL, LONG_ONLY },
	{ "serial", required_argument, NULL, LONG_ONLY },
	{ "pit", no_argument, NULL, LONG_ONLY },
	{ "testdev", no_argument, NULL, LONG_ONLY },
	DEVICE_TYPES(DEVICE_OPTION) /* --rng, --disk, ...: one per device type */
	{ "kvm-device", required_argument, NULL, LONG_ONLY },
	{ "cpu-pin", required_argument, NULL, LONG_ONLY },
	{ "rt", required_argument, NULL, LONG_ONLY },
	{ "dedicated", no_argument, NULL, LONG_ONLY },
	{ "halt-poll", required_argument, NULL, LONG_ONLY },
	{ "seccomp", required_argument, NULL, LONG_ONLY },
	{ "user", required_argument, NULL, LONG_ONLY },
	{ "chroot", required_argument, NULL, LONG_ONLY },
	{ "no-reboot", no_argument, NULL, LONG_ONLY },
	{ "shutdown-timeout", required_argument, NULL, LONG_ONLY },
	{ "api-socket", required_argument, NULL, LONG_ONLY },
	{ "stats", no_argument, NULL, LONG_ONLY },
	{ "stats-json", required_argument, NULL, LONG_ONLY },
	{ "log-file", required_argument, NULL, LONG_ONLY },
	{ "dump-on-crash", required_argument, NULL, LONG_ONLY },
	{ "log-level", required_argument, NULL, LONG_ONLY },
	{ "config", required_argument, NULL, LONG_ONLY },
	{ "restore", required_argument, NULL, LONG_ONLY },
	{ "print-config", no_argument, NULL, LONG_ONLY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ 0, 0, 0, 0 },
};
#define NOPTIONS (sizeof(run_options) / sizeof(run_options[0]) - 1)

static const char *const cli_only[] = { "config", "restore", "print-config", "help", "verbose", "quiet",
					"memory" };

const struct option *config_cli_options(void) { return run_options; }

bool config_cli_only(const char *name)
{
	for (size_t i = 0; i < sizeof(cli_only) / sizeof(cli_only[0]); i++)
		if (!strcmp(cli_only[i], name))
			return true;
	return false;
}

/* One option as getopt found it: a short option letter or LONG_ONLY with its index. */
struct cli_item {
	int opt;
	int index;
	const char *arg;
};

static int unknown_option(const char *arg, struct error *e)
{
	if (strncmp(arg, "--", 2))
		return error_set(e, -EINVAL, "unknown option '%.100s' (see msivm --help)", arg);
	char name[64], hint[96];
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
	const char *names[NOPTIONS];
	for (size_t i = 0; i < NOPTIONS; i++) {
		names[i] = run_options[i].name;
		if (!strcmp(names[i], name) && run_options[i].has_arg == no_argument)
			return error_set(e, -EINVAL, "option --%s takes no value", name);
	}
	config_hint(name, names, NOPTIONS, "--", hint, sizeof(hint));
	if (hint[0])
		return error_set(e, -EINVAL, "unknown option --%s%s", name, hint);
	return error_set(e, -EINVAL, "unknown option --%s (see msivm --help)", name);
}

/* An abbreviation that more than one option starts with (glibc's getopt_long takes the first
 * of them when they share has_arg, flag and val, as all LONG_ONLY options do): refused with
 * their names. An exact name always wins. Scans argv as getopt will, up to "--". */
static int ambiguous_option(int argc, char **argv, struct error *e)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			return 0;
		if (strncmp(a, "--", 2) || !a[2])
			continue;
		size_t len = strcspn(a + 2, "=");
		const struct option *exact = NULL, *first = NULL;
		char list[256] = "";
		unsigned n = 0;
		for (size_t k = 0; k < NOPTIONS && !exact; k++) {
			const char *name = run_options[k].name;
			if (strncmp(name, a + 2, len))
				continue;
			if (!name[len])
				exact = &run_options[k];
			first = first ? first : &run_options[k];
			size_t used = strlen(list);
			snprintf(list + used, sizeof(list) - used, "%s--%s", n++ ? ", " : "", name);
		}
		if (!exact && n > 1)
			return error_set(e, -EINVAL, "option --%.*s is ambiguous: it could be %s (give "
					 "the whole name)", (int)(len > 64 ? 64 : len), a + 2, list);
		const struct option *o = exact ? exact : first;
		if (o && o->has_arg == required_argument && !a[2 + len])
			i++; /* its value, whatever it looks like */
	}
	return 0;
}

/* --memory [size=]SIZE[,file=PATH,shared] (cloud-hypervisor's spelling of --mem SIZE
 * [--mem-file PATH]; a file's RAM is always shared; a bare SIZE is taken as size=). */
int config_memory_set(struct run_config *c, const char *arg, struct error *e)
{
	static const char *const keys[] = { "size", "file", "shared" };
	char *buf = strdup(arg), *save = NULL, hint[64];
	bool size = false, shared = false;
	int ret = buf ? 0 : error_set(e, -ENOMEM, "out of memory");
	for (char *t = buf ? strtok_r(buf, ",", &save) : NULL; t && !ret; t = strtok_r(NULL, ",", &save)) {
		if (!strncmp(t, "size=", 5) || (t == buf && !strchr(t, '=') && strcmp(t, "shared"))) {
			ret = config_set(c, config_key_find("mem"), strncmp(t, "size=", 5) ? t : t + 5, e);
			size = true;
		} else if (!strncmp(t, "file=", 5)) {
			ret = config_set(c, config_key_find("mem-file"), t + 5, e);
		} else if (!strcmp(t, "shared") || !strcmp(t, "shared=on")) {
			shared = true;
		} else if (!strcmp(t, "shared=off")) {
			ret = error_set(e, -EINVAL, "--memory: shared=off: msivm maps a file's RAM "
					"shared only (without file=, RAM is anonymous)");
		} else {
			t[strcspn(t, "=")] = 0;
			ret = error_set(e, -EINVAL, "--memory: unknown option '%.100s'%s (msivm takes "
					"size=SIZE, file=PATH and shared)", t,
					config_hint(t, keys, 3, "", hint, sizeof(hint)));
		}
	}
	if (!ret && shared && !c->mem_file)
		ret = error_set(e, -EINVAL, "--memory: shared needs file=PATH (anonymous RAM is "
				"private)");
	free(buf);
	if (!ret && !size)
		ret = error_set(e, -EINVAL, "--memory needs size=SIZE (or --mem SIZE)");
	return ret;
}

static int apply(struct run_config *c, const struct cli_item *it, struct error *e)
{
	if (it->opt == 'v') {
		c->log_level = c->log_level < LOG_DEBUG ? c->log_level + 1 : LOG_DEBUG;
		return 0;
	}
	if (it->opt == 'q') {
		c->log_level = LOG_ERROR;
		return 0;
	}
	const char *name = run_options[it->index].name;
	if (!strcmp(name, "memory"))
		return config_memory_set(c, it->arg, e);
	const struct config_key *k = config_key_find(name);
	if (!k)
		return 0; /* --config and --print-config: taken in the first pass */
	return config_set(c, k, it->arg, e);
}

/* The first pass: every option checked and kept in order, --help, --config and
 * --print-config noted. Returns 0, 1 for --help, or -EINVAL with a message. */
static int collect(int argc, char **argv, struct cli_item *items, int *nitems,
		   const char **file, const char **restore, bool *print, struct error *e)
{
	int opt, index = -1;
	opterr = 0;
	optind = 0; /* also resets getopt's state from an earlier scan */
	int amb = ambiguous_option(argc, argv, e);
	if (amb)
		return amb;
	while ((opt = getopt_long(argc, argv, ":vqh", run_options, &index)) != -1) {
		if (opt == 'h')
			return 1;
		if (opt == ':')
			return error_set(e, -EINVAL, "option '%.100s' needs a value", argv[optind - 1]);
		if (opt == '?')
			return unknown_option(argv[optind - 1], e);
		const char *name = opt == LONG_ONLY ? run_options[index].name : "";
		if (!strcmp(name, "config")) {
			if (*file)
				return error_set(e, -EINVAL, "--config is given twice: one file only");
			*file = optarg;
		} else if (!strcmp(name, "restore")) {
			if (*restore)
				return error_set(e, -EINVAL, "--restore is given twice: one snapshot only");
			*restore = optarg;
		} else if (!strcmp(name, "print-config")) {
			*print = true;
		}
		items[(*nitems)++] = (struct cli_item){ opt, index, optarg };
		index = -1;
	}
	if (optind < argc)
		return error_set(e, -EINVAL, "unexpected argument '%.100s'", argv[optind]);
	return 0;
}

int config_cli_parse(int argc, char **argv, struct run_config *c, enum config_action *action,
		     struct error *e)
{
	struct cli_item *items = calloc((size_t)argc + 1, sizeof(*items));
	if (!items)
		return error_set(e, -ENOMEM, "out of memory");
	const char *file = NULL, *restore = NULL;
	bool print = false;
	int n = 0, ret = collect(argc, argv, items, &n, &file, &restore, &print, e);
	*action = ret == 1 ? CONFIG_HELP : print ? CONFIG_PRINT : CONFIG_RUN;
	if (ret == 0 && file && restore)
		ret = error_set(e, -EINVAL, "--config and --restore both give the VM: the snapshot "
				"holds its configuration (options after it still apply)");
	if (ret == 0 && file)
		ret = config_json_load(c, file, e);
	if (ret == 0 && restore)
		ret = config_restore_load(c, restore, e);
	for (int i = 0; ret == 0 && i < n; i++)
		ret = apply(c, &items[i], e);
	free(items);
	if (ret)
		return ret == 1 ? 0 : ret;
	return run_config_finish(c, e);
}
