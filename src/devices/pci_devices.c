/* PCI devices of a VM: device specs -> host bridge slots, BAR addresses, INTx lines. */
#include "devices/pci_devices.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86/layout.h"
#include "vmm/vm.h"

/* Places every BAR of `f` in the window, naturally aligned, as firmware would. */
static int assign_bars(struct vm *vm, struct pci_func *f, struct error *err)
{
	for (unsigned i = 0; i < PCI_NUM_BARS; i++) {
		uint64_t size = f->bars[i].size;
		if (!size)
			continue;
		uint64_t addr = (vm->pci_next_bar + size - 1) & ~(size - 1);
		if (addr + size > PCI_MMIO_END)
			return error_set(err, -ENOSPC, "%s: PCI MMIO window full", f->name);
		pci_func_set_bar_addr(f, i, addr);
		vm->pci_next_bar = addr + size;
	}
	return 0;
}

static int attach(struct vm *vm, struct virtio_pci *t, struct error *err)
{
	int slot = pci_host_add(&vm->pci, &t->func);
	if (slot < 0)
		return error_set(err, slot, "%s: no free PCI slot", t->info.name);
	int ret = virtio_pci_attach_intx(t, pci_host_intx_gsi((uint8_t)slot));
	if (ret)
		return error_set(err, ret, "%s: cannot wire INTx: %s", t->info.name, strerror(-ret));
	return assign_bars(vm, &t->func, err);
}

static int create_rng(struct vm *vm, const struct vm_device_spec *spec, struct error *err)
{
	struct virtio_rng *r = calloc(1, sizeof(*r));
	if (!r)
		return error_set(err, -ENOMEM, "out of memory for virtio-rng");
	struct pci_window window = { PCI_MMIO_START, PCI_MMIO_END };
	int ret = virtio_rng_init(r, vm->nrngs, spec->rng_source, &spec->irq, &vm->mem,
				  vm->vm_fd, &vm->routes,
				  &vm->loop, &vm->mmio, window, err);
	if (ret) {
		virtio_rng_destroy(r);
		free(r);
		return ret;
	}
	vm->rngs[vm->nrngs++] = r;
	if (spec->rng_latency_us &&
	    (ret = virtio_rng_set_latency(r, spec->rng_latency_us, &vm->tsc_offset, &vm->loop, err)))
		return ret;
	if ((ret = virtio_rng_set_limit(r, &spec->limit, &vm->loop, err)))
		return ret;
	return attach(vm, &r->pci, err);
}

static int create_blk(struct vm *vm, const struct vm_device_spec *spec, struct error *err)
{
	const struct virtio_blk_opts *o = &spec->blk;
	struct blk_open_cfg oc = { .path = o->path, .ro = o->ro, .engine = o->engine,
				   .depth = (unsigned)o->queues * VIRTIO_BLK_QUEUE_SIZE };
	struct blk_backend *be;
	int ret = blk_backend_open(&be, &oc, err);
	if (ret)
		return ret;
	struct virtio_blk *b = calloc(1, sizeof(*b));
	if (!b) {
		blk_backend_close(be);
		return error_set(err, -ENOMEM, "out of memory for virtio-blk");
	}
	struct pci_window window = { PCI_MMIO_START, PCI_MMIO_END };
	ret = virtio_blk_init(b, vm->nblks, o->queues, be, &spec->irq, &vm->mem, vm->vm_fd,
			      &vm->routes, &vm->loop, &vm->mmio, window, err);
	if (ret) {
		virtio_blk_destroy(b); /* closes the backend */
		free(b);
		return ret;
	}
	vm->blks[vm->nblks++] = b;
	if ((ret = virtio_blk_set_limit(b, &spec->limit, &vm->loop, err)))
		return ret;
	return attach(vm, &b->pci, err);
}

static int create_console(struct vm *vm, const struct vm_device_spec *spec, struct error *err)
{
	struct virtio_console *c = calloc(1, sizeof(*c));
	if (!c)
		return error_set(err, -ENOMEM, "out of memory for virtio-console");
	struct virtio_console_io io;
	int ret = virtio_console_open_io(&spec->console, STDOUT_FILENO, &io, err);
	if (ret) {
		free(c);
		return ret;
	}
	struct pci_window window = { PCI_MMIO_START, PCI_MMIO_END };
	ret = virtio_console_init(c, vm->nconsoles, &io, &spec->irq, &vm->mem, vm->vm_fd,
				  &vm->routes, &vm->loop, &vm->mmio, window, err);
	if (ret) {
		virtio_console_destroy(c); /* closes the files */
		free(c);
		return ret;
	}
	vm->consoles[vm->nconsoles++] = c;
	return attach(vm, &c->pci, err);
}

static int create_net(struct vm *vm, const struct vm_device_spec *spec, struct error *err)
{
	const struct virtio_net_opts *o = &spec->net;
	struct net_backend *be;
	int ret = net_backend_open(&be, &o->be, err);
	if (ret)
		return ret;
	struct virtio_net *n = calloc(1, sizeof(*n));
	if (!n) {
		net_backend_close(be);
		return error_set(err, -ENOMEM, "out of memory for virtio-net");
	}
	struct pci_window window = { PCI_MMIO_START, PCI_MMIO_END };
	ret = virtio_net_init(n, vm->nnets, o, be, &spec->irq, &vm->mem, vm->vm_fd, &vm->routes,
			      &vm->loop, &vm->mmio, window, err);
	if (ret) {
		virtio_net_destroy(n); /* closes the backend */
		free(n);
		return ret;
	}
	vm->nets[vm->nnets++] = n;
	if ((ret = virtio_net_set_limit(n, &spec->limit, &vm->loop, err)))
		return ret;
	return attach(vm, &n->pci, err);
}

int pci_devices_create(struct vm *vm, struct error *err)
{
	int ret = gsi_routes_init(&vm->routes, vm->vm_fd);
	if (ret)
		return error_set(err, ret, "cannot set up GSI routes");
	struct pci_window window = { PCI_MMIO_START, PCI_MMIO_END };
	ret = pci_host_init(&vm->pci, &vm->pio, &vm->mmio, PCI_ECAM_BASE, window);
	if (ret) {
		gsi_routes_destroy(&vm->routes);
		return error_set(err, ret, "cannot set up the PCI host bridge: %s", strerror(-ret));
	}
	vm->pci_ready = true;
	vm->pci_next_bar = PCI_MMIO_START;
	for (uint32_t i = 0; i < vm->cfg.ndevices; i++) {
		const struct vm_device_spec *spec = &vm->cfg.devices[i];
		switch (spec->type) {
		case VM_DEV_RNG:
			ret = create_rng(vm, spec, err);
			break;
		case VM_DEV_BLK:
			ret = create_blk(vm, spec, err);
			break;
		case VM_DEV_NET:
			ret = create_net(vm, spec, err);
			break;
		case VM_DEV_CONSOLE:
			ret = create_console(vm, spec, err);
			break;
		}
		if (ret)
			return ret;
	}
	return 0;
}

void pci_devices_destroy(struct vm *vm)
{
	if (!vm->pci_ready)
		return;
	for (uint32_t i = 0; i < vm->nrngs; i++) {
		virtio_rng_destroy(vm->rngs[i]);
		free(vm->rngs[i]);
	}
	vm->nrngs = 0;
	for (uint32_t i = 0; i < vm->nblks; i++) {
		virtio_blk_destroy(vm->blks[i]);
		free(vm->blks[i]);
	}
	vm->nblks = 0;
	for (uint32_t i = 0; i < vm->nnets; i++) {
		virtio_net_destroy(vm->nets[i]);
		free(vm->nets[i]);
	}
	vm->nnets = 0;
	for (uint32_t i = 0; i < vm->nconsoles; i++) {
		virtio_console_destroy(vm->consoles[i]);
		free(vm->consoles[i]);
	}
	vm->nconsoles = 0;
	pci_host_destroy(&vm->pci, &vm->pio, &vm->mmio);
	gsi_routes_destroy(&vm->routes);
	vm->pci_ready = false;
}
