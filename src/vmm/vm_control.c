/* VM control: pause (vCPUs kicked out of KVM_RUN park on a condition variable: vcpu.c), resume, power button. */
#include "vmm/vm_control.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "devices/power_button.h"
#include "util/clock.h"
#include "virtio/virtio_pci_state.h"
#include "vmm/vcpu.h"
#include "vmm/vm_state.h"

#define PAUSE_WAIT_S 5

int vm_control_init(struct vm *vm)
{
	int ret = pthread_mutex_init(&vm->pause_lock, NULL);
	if (ret)
		return -ret;
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	ret = pthread_cond_init(&vm->pause_cond, &a);
	pthread_condattr_destroy(&a);
	if (ret) {
		pthread_mutex_destroy(&vm->pause_lock);
		return -ret;
	}
	vm->pause_ready = true;
	return 0;
}

void vm_control_destroy(struct vm *vm)
{
	if (!vm->pause_ready)
		return;
	pthread_cond_destroy(&vm->pause_cond);
	pthread_mutex_destroy(&vm->pause_lock);
	vm->pause_ready = false;
}

static bool ending(struct vm *vm)
{
	return atomic_load(&vm->end) != VM_RUNNING;
}

int vm_pause(struct vm *vm, struct error *err)
{
	if (ending(vm))
		return -ESHUTDOWN;
	pthread_mutex_lock(&vm->pause_lock);
	if (atomic_load(&vm->paused)) {
		pthread_mutex_unlock(&vm->pause_lock);
		return -EALREADY;
	}
	atomic_store(&vm->paused, true);
	pthread_mutex_unlock(&vm->pause_lock);
	for (uint32_t i = 0; i < vm->ncpus; i++)
		vcpu_kick(&vm->vcpus[i]);
	struct timespec until = clock_deadline_ms(PAUSE_WAIT_S * 1000L);
	int ret = 0;
	pthread_mutex_lock(&vm->pause_lock);
	while (vm->parked < vm->ncpus && !ending(vm) && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&vm->pause_cond, &vm->pause_lock, &until);
	uint32_t parked = vm->parked;
	pthread_mutex_unlock(&vm->pause_lock);
	if (parked < vm->ncpus && !ending(vm))
		return error_set(err, -ETIMEDOUT, "%u of %u vCPUs parked within %d s",
				 parked, vm->ncpus, PAUSE_WAIT_S);
	return ending(vm) ? -ESHUTDOWN : 0;
}

#define IO_PARK_WAIT_S 30

int vm_io_park(struct vm *vm, struct error *err)
{
	pthread_mutex_lock(&vm->pause_lock);
	vm->io_park_req = true;
	pthread_mutex_unlock(&vm->pause_lock);
	uint64_t one = 1;
	if (write(vm->park_fd, &one, sizeof(one)) != sizeof(one)) {
		vm_io_release(vm);
		return error_set(err, -errno, "cannot ask the I/O thread to park: %s", strerror(errno));
	}
	struct timespec until = clock_deadline_ms(IO_PARK_WAIT_S * 1000L);
	int ret = 0;
	pthread_mutex_lock(&vm->pause_lock);
	while (!vm->io_parked && !ending(vm) && ret != ETIMEDOUT)
		ret = pthread_cond_timedwait(&vm->pause_cond, &vm->pause_lock, &until);
	bool parked = vm->io_parked;
	pthread_mutex_unlock(&vm->pause_lock);
	if (parked)
		return 0;
	vm_io_release(vm);
	if (ending(vm))
		return -ESHUTDOWN;
	return error_set(err, -ETIMEDOUT, "the devices did not finish their requests within %d s",
			 IO_PARK_WAIT_S);
}

void vm_io_release(struct vm *vm)
{
	pthread_mutex_lock(&vm->pause_lock);
	vm->io_park_req = false;
	pthread_cond_broadcast(&vm->pause_cond);
	pthread_mutex_unlock(&vm->pause_lock);
}

void vm_io_park_handler(void *opaque, uint32_t events)
{
	struct vm *vm = opaque;
	uint64_t v;
	(void)events;
	if (read(vm->park_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&vm->pause_lock);
	bool asked = vm->io_park_req;
	pthread_mutex_unlock(&vm->pause_lock);
	if (!asked)
		return;
	for (uint32_t i = 0; i < vm->ndevs; i++)
		if (vm->devs[i].pci)
			virtio_pci_quiesce(vm->devs[i].pci);
	pthread_mutex_lock(&vm->pause_lock);
	vm->io_parked = true;
	pthread_cond_broadcast(&vm->pause_cond);
	/* A stop (the operator's signal) ends the wait: the snapshot then fails, the VM stops. */
	while (vm->io_park_req && !ending(vm)) {
		struct timespec t = clock_deadline_ms(100);
		pthread_cond_timedwait(&vm->pause_cond, &vm->pause_lock, &t);
	}
	vm->io_parked = false;
	pthread_mutex_unlock(&vm->pause_lock);
}

int vm_resume(struct vm *vm)
{
	pthread_mutex_lock(&vm->pause_lock);
	bool was = atomic_exchange(&vm->paused, false);
	pthread_cond_broadcast(&vm->pause_cond);
	pthread_mutex_unlock(&vm->pause_lock);
	return was ? 0 : -EALREADY;
}

bool vm_is_paused(struct vm *vm)
{
	return atomic_load(&vm->paused);
}

int vm_power_button(struct vm *vm)
{
	int listening = power_button_listening(vm->vm_fd);
	if (listening != 1)
		return listening;
	int ret = power_button_press(vm->vm_fd);
	return ret ? ret : 1;
}

int vm_device_replace(struct vm *vm, uint32_t dev, const char *path, struct error *err)
{
	if (dev >= vm->ndevs || !vm->devs[dev].type->replace)
		return error_set(err, -EOPNOTSUPP, "device %u has no host file to replace", dev);
	bool pause_for_it = !vm_is_paused(vm);
	int ret = pause_for_it ? vm_pause(vm, err) : 0;
	if (ret)
		return ret == -ESHUTDOWN ? error_set(err, ret, "the VM is stopping") : ret;
	ret = vm_io_park(vm, err);
	if (!ret) {
		struct vm_device_spec *spec = &vm->cfg.devices[dev];
		ret = vm->devs[dev].type->replace(vm->devs[dev].dev, spec, path, err);
		if (!ret && spec->type == VM_DEV_BLK) /* what a snapshot records from now on */
			snprintf(spec->blk.path, sizeof(spec->blk.path), "%s", path);
		vm_io_release(vm);
	}
	if (pause_for_it)
		vm_resume(vm);
	return ret;
}

int vm_device_set_limit(struct vm *vm, uint32_t dev, const struct rate_limit_opts *limit,
			const struct rate_limit_opts *rx_limit, struct error *err)
{
	if (dev >= vm->ndevs || !vm->devs[dev].type->update_limit)
		return error_set(err, -EOPNOTSUPP, "device %u has no rate limit to change", dev);
	struct vm_device_spec spec = vm->cfg.devices[dev];
	if (limit)
		spec.limit = *limit;
	if (rx_limit) {
		spec.rx_limit = *rx_limit;
		spec.rx_limit_own = true;
	} else if (spec.type == VM_DEV_NET && limit && !spec.rx_limit_own) {
		spec.rx_limit = vm->cfg.devices[dev].limit; /* the receive side keeps its limit */
		spec.rx_limit_own = true;
	}
	int ret = vm->devs[dev].type->update_limit(vm->devs[dev].dev, &spec, err);
	if (!ret) { /* what a snapshot records from now on (the rest of the spec is not touched) */
		vm->cfg.devices[dev].limit = spec.limit;
		vm->cfg.devices[dev].rx_limit = spec.rx_limit;
		vm->cfg.devices[dev].rx_limit_own = spec.rx_limit_own;
	}
	return ret;
}
