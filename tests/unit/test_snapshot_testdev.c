/* Unit tests: a VM with --testdev's devices is neither saved nor restored (vm_snapshot.c), before any KVM call. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/vm_snapshot.h"
#include "vmm/vm_state.h"

/* A VM that was never built: KVM fds that no ioctl can use, no vCPUs, no devices. The refusal
 * must come before anything reads it (without the check these tests fail: KVM errors or a crash). */
static struct vm *bare_vm(bool testdev)
{
	struct vm *vm = calloc(1, sizeof(*vm));
	assert_non_null(vm);
	vm->kvm_fd = vm->vm_fd = -1;
	vm->cfg.testdev = testdev;
	return vm;
}

static void save_refused(void **state)
{
	(void)state;
	struct vm *vm = bare_vm(true);
	struct error err = { "" };
	bool refused = false;
	json_t *s = vm_snapshot_state(vm, "{}", &refused, &err);
	assert_null(s);
	assert_true(refused); /* the API answers 409, not 500 */
	assert_non_null(strstr(err.msg, "--testdev"));
	assert_non_null(strstr(err.msg, "not saved"));
	free(vm);
}

static void restore_refused(void **state)
{
	(void)state;
	struct vm *vm = bare_vm(true);
	struct error err = { "" };
	json_t *root = json_pack("{s:{},s:[],s:[]}", "cpu", "vcpus", "devices");
	assert_int_equal(vm_snapshot_restore(vm, root, -1, false, &err), -EOPNOTSUPP);
	assert_non_null(strstr(err.msg, "--testdev"));
	json_decref(root);
	free(vm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(save_refused),
		cmocka_unit_test(restore_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
