/* run_config: defaults, the checks that need every option, device order, freeing. */
#include "config/run_config.h"

#include <jansson.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86/layout.h"

void run_config_init(struct run_config *c)
{
	memset(c, 0, sizeof(*c));
	c->log_level = LOG_WARN;
	c->vm = (struct vm_config){ .kvm_path = CONFIG_KVM_DEVICE, .mem_size = 256 * MiB, .ncpus = 1,
				    .serial_fd = 1, .serial_in_fd = -1, .mem_fd = -1,
				    .shutdown_timeout_ms = 10000 };
	cpu_policy_init(&c->vm.cpu);
	c->vm.seccomp = seccomp_default_mode();
}

void run_config_free(struct run_config *c)
{
	char **strings[] = { &c->kernel, &c->initrd, &c->cmdline, &c->serial, &c->kvm_device,
			     &c->cpu_pin, &c->chroot, &c->stats_json, &c->log_file,
			     &c->api_socket, &c->dump_dir, &c->restore_state, &c->restore_mem,
			     &c->mem_file };
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
		free(*strings[i]);
		*strings[i] = NULL;
	}
	for (unsigned i = 0; i < c->restore_ntaps; i++) {
		free(c->restore_taps[i]);
		c->restore_taps[i] = NULL;
	}
	c->restore_ntaps = 0;
	c->jail.root = NULL;
	c->vm.kvm_path = NULL;
	c->vm.mem_file = NULL;
	json_decref(c->restore_root);
	c->restore_root = NULL;
}

int config_strset(char **dst, const char *src, struct error *e)
{
	char *copy = NULL;
	if (src && !(copy = strdup(src)))
		return error_set(e, -ENOMEM, "out of memory");
	free(*dst);
	*dst = copy;
	return 0;
}

/* What a device's defaults depend on the VM for (a disk's queues: one per vCPU). */
static void finish_devices(struct vm_config *vm)
{
	for (uint32_t i = 0; i < vm->ndevices; i++) {
		const struct device_type *t = device_type_get(vm->devices[i].type);
		if (t && t->spec_finish)
			t->spec_finish(&vm->devices[i], vm->ncpus);
	}
}

/* Devices by type in table order (rng, disk, console, net), each kind in the order given. */
static int order_devices(struct vm_config *vm, struct error *e)
{
	struct vm_device_spec *sorted = calloc(VM_MAX_DEVICES, sizeof(*sorted));
	if (!sorted)
		return error_set(e, -ENOMEM, "out of memory");
	uint32_t n = 0;
	for (int t = 0; t < VM_DEV_NTYPES; t++)
		for (uint32_t i = 0; i < vm->ndevices; i++)
			if ((int)vm->devices[i].type == t)
				sorted[n++] = vm->devices[i];
	memcpy(vm->devices, sorted, n * sizeof(*sorted));
	free(sorted);
	return 0;
}

int run_config_finish(struct run_config *c, struct error *e)
{
	if (!c->kernel)
		return error_set(e, -EINVAL, "run: --kernel FILE is required");
	if (c->restore_state && c->mem_file)
		return error_set(e, -EINVAL, "--mem-file with --restore: the RAM comes from the "
				 "snapshot (mem=FILE maps it privately, copy reads it in)");
	if (c->jail.drop_user && c->vm.cpu.rt_prio)
		return error_set(e, -EINVAL, "--rt needs root's scheduling privilege: it cannot be "
				 "combined with --user");
	if (c->chroot && access(c->chroot, X_OK))
		return error_set(e, -EINVAL, "--chroot '%.200s': not a directory msivm can enter",
				 c->chroot);
	c->jail.root = c->chroot;
	c->vm.kvm_path = c->kvm_device ? c->kvm_device : CONFIG_KVM_DEVICE;
	c->vm.mem_file = c->mem_file;
	int ret;
	if ((c->cpu_pin && (ret = cpu_policy_parse_pins(&c->vm.cpu, c->cpu_pin, c->vm.ncpus, e))) ||
	    (ret = cpu_policy_check(&c->vm.cpu, c->vm.ncpus, e)))
		return ret;
	finish_devices(&c->vm);
	return order_devices(&c->vm, e);
}
