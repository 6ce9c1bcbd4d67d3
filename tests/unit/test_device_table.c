/* Unit tests: the device-type table: every type has an entry with every op, and builds, counts and releases its device. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devices/device_type.h"
#include "fake_vm.h"

/* Every enum value below VM_DEV_NTYPES has an entry with a distinct name and every op a VM
 * calls unconditionally; out-of-range types have none. */
static void test_every_type_has_a_full_entry(void **state)
{
	(void)state;
	for (int t = 0; t < VM_DEV_NTYPES; t++) {
		const struct device_type *d = device_type_get((enum vm_device_type)t);
		assert_non_null(d);
		assert_non_null(d->name);
		assert_non_null(d->create);
		assert_non_null(d->destroy);
		assert_non_null(d->print_stats);
		assert_non_null(d->stats_json);
		for (int u = 0; u < t; u++)
			assert_string_not_equal(d->name, device_type_get((enum vm_device_type)u)->name);
	}
	assert_null(device_type_get(VM_DEV_NTYPES));
	assert_null(device_type_get((enum vm_device_type)-1));
	assert_string_equal(device_type_get(VM_DEV_RNG)->name, "rng");
	assert_string_equal(device_type_get(VM_DEV_BLK)->name, "blk");
	assert_string_equal(device_type_get(VM_DEV_CONSOLE)->name, "console");
	assert_string_equal(device_type_get(VM_DEV_NET)->name, "net");
	assert_string_equal(device_type_get(VM_DEV_VFIO)->name, "vfio");
	assert_string_equal(device_type_option(VM_DEV_VFIO), "device");
	/* A type without a virtio transport says how to reach its function and wire INTx. */
	assert_non_null(device_type_get(VM_DEV_VFIO)->pci_func);
	assert_non_null(device_type_get(VM_DEV_VFIO)->attach_intx);
}

/* --device with a path that is no PCI device: nothing built, the message names it. */
static void test_vfio_create_refuses_a_missing_device(void **state)
{
	(void)state;
	struct fake_vm *vm = fake_vm_new();
	assert_non_null(vm);
	struct device_env env = { .mem = &vm->mem, .vm_fd = -1, .routes = &vm->routes,
				  .mmio = &vm->mmio, .window = fake_window() };
	struct vm_device_spec spec = { .type = VM_DEV_VFIO, .vfio = { .path = "/nonexistent/0000:00:09.0" } };
	struct virtio_pci *pci = NULL;
	struct error err = { "" };
	assert_null(device_type_get(VM_DEV_VFIO)->create(&env, &spec, 0, &pci, &err));
	assert_non_null(strstr(err.msg, "no such PCI device"));
	/* A device bound to another driver (or none): the message says how to bind it. */
	char path[300] = "";
	FILE *p = popen("ls -d /sys/bus/pci/devices/* 2>/dev/null | head -n1", "r");
	if (p && fgets(path, sizeof(path), p)) {
		path[strcspn(path, "\n")] = 0;
		snprintf(spec.vfio.path, sizeof(spec.vfio.path), "%s", path);
		err.msg[0] = 0;
		if (!device_type_get(VM_DEV_VFIO)->create(&env, &spec, 0, &pci, &err))
			assert_non_null(strstr(err.msg, "vfio-pci"));
	}
	if (p)
		pclose(p);
	fake_vm_free(vm);
}

/* Every type's options come from its entry: an option name and --help text, and keys with
 * distinct names and ids below 32 (its `seen` bits) that its spec_set reads. */
static void test_every_type_describes_its_options(void **state)
{
	(void)state;
	for (int t = 0; t < VM_DEV_NTYPES; t++) {
		const struct device_type *d = device_type_get((enum vm_device_type)t);
		const char *opt = device_type_option((enum vm_device_type)t);
		assert_non_null(opt);
		assert_non_null(d->usage);
		assert_non_null(strstr(d->usage, "\n"));
		for (int u = 0; u < t; u++)
			assert_string_not_equal(opt, device_type_option((enum vm_device_type)u));
		uint32_t ids = 0;
		for (const struct device_key *k = d->keys; k && k->name; k++) {
			assert_non_null(d->spec_set);
			assert_true(k->id < 32);
			assert_false(ids & (1u << k->id));
			ids |= 1u << k->id;
			for (const struct device_key *j = d->keys; j != k; j++)
				assert_string_not_equal(j->name, k->name);
		}
	}
	assert_string_equal(device_type_option(VM_DEV_BLK), "disk");
	assert_null(device_type_option(VM_DEV_NTYPES));
}

/* Through the table alone: an rng device is built (named by its per-type index, its transport
 * returned), prints its --stats line and JSON counters, ignores host events, and is released. */
static void test_rng_through_the_table(void **state)
{
	(void)state;
	struct fake_vm *vm = fake_vm_new();
	assert_non_null(vm);
	int64_t tsc_offset = 0;
	struct device_env env = { .mem = &vm->mem, .vm_fd = -1, .routes = &vm->routes,
				  .mmio = &vm->mmio, .window = fake_window(), .tsc_offset = &tsc_offset };
	struct vm_device_spec spec = { .type = VM_DEV_RNG,
				       .irq = { .mode = IRQ_MODE_MSIX, .vectors = -1 } };
	const struct device_type *type = device_type_get(VM_DEV_RNG);
	struct virtio_pci *pci = NULL;
	struct error err;
	void *dev = type->create(&env, &spec, 3, &pci, &err);
	assert_non_null(dev);
	assert_ptr_equal(pci, &((struct virtio_rng *)dev)->pci);
	assert_string_equal(pci->info.name, "rng3");
	char buf[512] = "";
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	assert_non_null(f);
	type->print_stats(dev, f);
	fclose(f);
	assert_non_null(strstr(buf, "  rng3: 0 requests, 0 kicks"));
	json_t *o = json_object();
	type->stats_json(dev, o);
	assert_int_equal(json_integer_value(json_object_get(o, "requests")), 0);
	assert_string_equal(json_string_value(json_object_get(o, "source")), "drbg");
	json_decref(o);
	assert_null(type->host_event);
	type->destroy(dev);
	fake_vm_free(vm);
}

/* A create that fails leaves nothing behind and says why: a disk image that does not exist. */
static void test_failed_create_says_why(void **state)
{
	(void)state;
	struct fake_vm *vm = fake_vm_new();
	assert_non_null(vm);
	struct device_env env = { .mem = &vm->mem, .vm_fd = -1, .routes = &vm->routes,
				  .mmio = &vm->mmio, .window = fake_window() };
	struct vm_device_spec spec = { .type = VM_DEV_BLK, .blk = { .path = "/nonexistent/disk.img",
								    .queues = 1 } };
	struct virtio_pci *pci = NULL;
	struct error err = { "" };
	assert_null(device_type_get(VM_DEV_BLK)->create(&env, &spec, 0, &pci, &err));
	assert_null(pci);
	assert_non_null(strstr(err.msg, "/nonexistent/disk.img"));
	/* A disk that is not concerned by a SIGWINCH, a console not by SIGUSR2. */
	assert_int_equal(device_type_get(VM_DEV_BLK)->host_event(NULL, DEVICE_EV_WINCH), -1);
	assert_int_equal(device_type_get(VM_DEV_CONSOLE)->host_event(NULL, DEVICE_EV_DISKS), -1);
	fake_vm_free(vm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_type_has_a_full_entry),
		cmocka_unit_test(test_every_type_describes_its_options),
		cmocka_unit_test(test_rng_through_the_table),
		cmocka_unit_test(test_failed_create_says_why),
		cmocka_unit_test(test_vfio_create_refuses_a_missing_device),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
