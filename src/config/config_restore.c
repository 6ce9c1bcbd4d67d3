/* --restore state=FILE,mem=FILE[,paused]: the snapshot's own configuration, without its host ends, into a run_config. */
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
					 "kvm-device", "cpu-pin", "rt", "dedicated", "halt-poll" };

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
		else
			ret = error_set(e, -EINVAL, "unknown --restore option '%.100s' (state=FILE, "
					"mem=FILE, paused)", tok);
	}
	free(copy);
	if (!ret && (!c->restore_state || !c->restore_mem))
		ret = error_set(e, -EINVAL, "--restore needs state=FILE and mem=FILE");
	return ret;
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
