/* PCI devices of a VM: device specs -> the type table's create -> host bridge slots, BAR addresses, INTx lines. */
#include "vmm/pci_devices.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86/layout.h"
#include "devices/device_type.h"
#include "vmm/vm_state.h"

/* Places every BAR of `f`, naturally aligned, as firmware would: memory BARs in the window, I/O
 * BARs from port PCI_IO_START up, then its expansion ROM (if any) in the window, disabled. */
static int assign_bars(struct vm *vm, struct pci_func *f, struct error *err)
{
	for (unsigned i = 0; i < PCI_NUM_BARS; i++) {
		uint64_t size = f->bars[i].size;
		if (!size)
			continue;
		if (f->bars[i].io) {
			uint64_t port = (vm->pci_next_io + size - 1) & ~(size - 1);
			if (port + size > PCI_IO_SPACE_END)
				return error_set(err, -ENOSPC, "%s: PCI I/O ports full", f->name);
			pci_func_set_bar_addr(f, i, port);
			vm->pci_next_io = port + size;
			continue;
		}
		uint64_t addr = (vm->pci_next_bar + size - 1) & ~(size - 1);
		if (addr + size > PCI_MMIO_END)
			return error_set(err, -ENOSPC, "%s: PCI MMIO window full", f->name);
		pci_func_set_bar_addr(f, i, addr);
		vm->pci_next_bar = addr + size;
	}
	if (f->rom.size) { /* the expansion ROM too, enable off: the guest turns it on to read it */
		uint64_t size = f->rom.size, addr = (vm->pci_next_bar + size - 1) & ~(size - 1);
		if (addr + size > PCI_MMIO_END || addr + size > (1ULL << 32))
			return error_set(err, -ENOSPC, "%s: PCI MMIO window full (expansion ROM)",
					 f->name);
		pci_func_set_rom_addr(f, addr);
		vm->pci_next_bar = addr + size;
	}
	return 0;
}

static int attach(struct vm *vm, struct vm_device *d, struct error *err)
{
	int slot = pci_host_add(&vm->pci, d->func);
	if (slot < 0)
		return error_set(err, slot, "%s: no free PCI slot", d->func->name);
	uint32_t gsi = pci_host_intx_gsi((uint8_t)slot);
	int ret = d->pci ? virtio_pci_attach_intx(d->pci, gsi) : d->type->attach_intx(d->dev, gsi);
	if (ret)
		return error_set(err, ret, "%s: cannot wire INTx: %s", d->func->name, strerror(-ret));
	return assign_bars(vm, d->func, err);
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
	vm->pci_next_io = PCI_IO_START;
	struct device_env env = { .mem = &vm->mem, .vm_fd = vm->vm_fd, .routes = &vm->routes,
				  .loop = &vm->loop, .mmio = &vm->mmio, .window = window,
				  .tsc_offset = &vm->tsc_offset };
	unsigned per_type[VM_DEV_NTYPES] = { 0 };
	for (uint32_t i = 0; i < vm->cfg.ndevices && i < VM_MAX_DEVICES; i++) {
		const struct vm_device_spec *spec = &vm->cfg.devices[i];
		const struct device_type *type = device_type_get(spec->type);
		if (!type)
			return error_set(err, -EINVAL, "device %u: unknown type %d", i, (int)spec->type);
		struct vm_device *d = &vm->devs[vm->ndevs];
		d->dev = type->create(&env, spec, per_type[spec->type], &d->pci, err);
		if (!d->dev)
			return -EINVAL;
		d->type = type;
		d->func = d->pci ? &d->pci->func : type->pci_func(d->dev);
		vm->ndevs++;
		per_type[spec->type]++;
		if ((ret = attach(vm, d, err)))
			return ret;
	}
	return 0;
}

int pci_devices_add_func(struct vm *vm, struct pci_func *f, struct error *err)
{
	if (!vm->pci_ready)
		return error_set(err, -EINVAL, "%s: no PCI host bridge yet", f->name);
	int slot = pci_host_add(&vm->pci, f);
	if (slot < 0)
		return error_set(err, slot, "%s: no free PCI slot", f->name);
	return assign_bars(vm, f, err);
}

void pci_devices_destroy(struct vm *vm)
{
	if (!vm->pci_ready)
		return;
	for (uint32_t i = 0; i < vm->ndevs; i++)
		vm->devs[i].type->destroy(vm->devs[i].dev);
	vm->ndevs = 0;
	pci_host_destroy(&vm->pci, &vm->pio, &vm->mmio);
	gsi_routes_destroy(&vm->routes);
	vm->pci_ready = false;
}
