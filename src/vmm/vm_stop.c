/* VM stop: the first reason recorded wins and wakes the event loop; host events wake it too. */
#include "vmm/vm_stop.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "util/log.h"

void vm_request_stop_reason(struct vm *vm, enum vm_end why, int status, const char *reason)
{
	int expected = VM_RUNNING;
	if (!atomic_compare_exchange_strong(&vm->end, &expected, (int)why))
		return;
	vm->exit_status = status;
	vm->end_reason = reason;
	uint64_t one = 1;
	if (write(vm->stop_fd, &one, sizeof(one)) != sizeof(one))
		log_err("cannot wake the event loop: %s", strerror(errno));
}

void vm_operator_stop(struct vm *vm, int status, bool hard, const char *reason)
{
	if (vm->cfg.operator_stop)
		atomic_store(vm->cfg.operator_stop, status + 1);
	if (hard)
		vm_request_stop_reason(vm, VM_END_SIGNAL, status, reason);
}

void vm_request_stop(struct vm *vm, enum vm_end why, int status)
{
	vm_request_stop_reason(vm, why, status, NULL);
}

void vm_post_host_event(struct vm *vm, unsigned ev)
{
	atomic_fetch_or(&vm->host_events, ev);
	uint64_t one = 1;
	if (write(vm->host_event_fd, &one, sizeof(one)) != sizeof(one))
		log_warn("cannot wake the event loop: %s", strerror(errno));
}
