/* --restore state=FILE[,mem=FILE,copy,paused,tap=NAME...]: the snapshot's own configuration, without its host ends, into a run_config. */
/* Link circle, on purpose (config_cli.c, config_json.c, config_restore.c): the command line reads a --config file and a --restore snapshot, a config file may restore a snapshot whose own configuration is a config file (config_json_read), and both spellings of --memory go through config_memory_set. */
#include "config/config_json.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse.h"
#include "vmm/vm_snapshot.h"

/* Keys of a snapshot's configuration that belong to the process that took it, not to the VM:
 * the restoring command line gives its own (or the defaults). */
static const char *const host_ends[] = { "serial", "api-socket", "stats", "stats-json",
					 "log-file", "log-level", "dump-on-crash", "chroot", "user",
					 "kvm-device", "cpu-pin", "rt", "dedicated", "halt-poll",
					 "mem-file" /* RAM comes from the snapshot */ };

bool config_restore_host_key(const char *key)
{
	if (!strcmp(key, "mem-file"))
		return false; /* the RAM comes from the snapshot */
	for (size_t i = 0; i < sizeof(host_ends) / sizeof(host_ends[0]); i++)
		if (!strcmp(host_ends[i], key))
			return true;
	return false;
}

static int parse_opts(struct run_config *c, const char *arg, struct error *e)
{
	char *copy = strdup(arg), *save = NULL;
	if (!copy)
		return error_set(e, -ENOMEM, "out of memory");
	int ret = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		if (!strncmp(tok, "state=", 6) && tok[6])
			ret = config_strset(&c->restore_state, tok + 6, e);
		else if (!strncmp(tok, "mem=", 4) && tok[4])
			ret = config_strset(&c->restore_mem, tok + 4, e);
		else if (!strcmp(tok, "paused"))
			c->restore_paused = true;
		else if (!strcmp(tok, "copy"))
			c->restore_copy = true;
		else if (!strncmp(tok, "tap=", 4) && tok[4])
			ret = c->restore_ntaps < VM_MAX_DEVICES
				      ? config_strset(&c->restore_taps[c->restore_ntaps++], tok + 4, e)
				      : error_set(e, -EINVAL, "--restore: at most %d tap=NAME",
						  VM_MAX_DEVICES);
		else
			ret = error_set(e, -EINVAL, "unknown --restore option '%.100s' (state=FILE, "
					"mem=FILE, copy, paused, tap=NAME)", tok);
	}
	free(copy);
	if (!ret && !c->restore_state)
		ret = error_set(e, -EINVAL, "--restore needs state=FILE");
	return ret;
}

/* mem= or, when the snapshot left its RAM in the VM's --mem-file, that file. */
static int memory_file(struct run_config *c, const json_t *root, struct error *e)
{
	const char *file = json_string_value(json_object_get(json_object_get(root, "memory"), "file"));
	if (c->restore_mem)
		return 0;
	if (!file)
		return error_set(e, -EINVAL, "--restore needs mem=FILE: %s holds no RAM of its own "
				 "(its RAM was saved to a memory file)", c->restore_state);
	return config_strset(&c->restore_mem, file, e);
}

/* tap=NAME, in order, for the NICs whose backend is a tap (tap, vhost): clones of one snapshot
 * each get their own. */
static int retap(struct run_config *c, struct error *e)
{
	unsigned n = 0;
	for (uint32_t i = 0; i < c->vm.ndevices && n < c->restore_ntaps; i++) {
		struct net_open_cfg *be = &c->vm.devices[i].net.be;
		if (c->vm.devices[i].type != VM_DEV_NET || (be->kind != NET_BE_TAP && be->kind != NET_BE_VHOST))
			continue;
		if (strlen(c->restore_taps[n]) >= sizeof(be->ifname))
			return error_set(e, -EINVAL, "--restore tap=%.100s: a tap name has at most %zu "
					 "characters", c->restore_taps[n], sizeof(be->ifname) - 1);
		snprintf(be->ifname, sizeof(be->ifname), "%s", c->restore_taps[n++]);
	}
	if (n < c->restore_ntaps)
		return error_set(e, -EINVAL, "--restore gives %u tap=NAME and the snapshot has %u NIC%s "
				 "on a tap", c->restore_ntaps, n, n == 1 ? "" : "s");
	return 0;
}

int config_restore_load(struct run_config *c, const char *arg, struct error *e)
{
	int ret = parse_opts(c, arg, e);
	if (ret)
		return ret;
	json_t *root = vm_snapshot_read(c->restore_state, e);
	if (!root)
		return -EINVAL;
	const json_t *cfg = vm_snapshot_config(root);
	json_t *vmcfg = cfg ? json_deep_copy(cfg) : NULL;
	char *text = NULL;
	if (vmcfg) {
		for (size_t i = 0; i < sizeof(host_ends) / sizeof(host_ends[0]); i++)
			json_object_del(vmcfg, host_ends[i]);
		text = json_dumps(vmcfg, JSON_COMPACT);
	}
	json_decref(vmcfg);
	if (!text) {
		json_decref(root);
		return error_set(e, -EINVAL, "%s holds no VM configuration", c->restore_state);
	}
	ret = config_json_read(c, text, strlen(text), c->restore_state, e);
	free(text);
	if (!ret)
		ret = memory_file(c, root, e);
	if (!ret)
		ret = retap(c, e);
	if (ret) {
		json_decref(root);
		return ret;
	}
	/* A restored VM goes on writing its console files where the snapshot's left off. */
	for (uint32_t i = 0; i < c->vm.ndevices; i++)
		if (c->vm.devices[i].type == VM_DEV_CONSOLE)
			c->vm.devices[i].console.append = true;
	c->restore_root = root;
	return 0;
}
