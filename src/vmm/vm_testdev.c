/* --testdev: fw_cfg, pc-testdev and pci-testdev built and put on the port and MMIO buses and PCI bus 0. */
#include "vmm/vm_testdev.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/layout.h"
#include "irq/irqchip.h"
#include "vmm/pci_devices.h"
#include "vmm/vm_state.h"

int vm_testdev_create(struct vm *vm, struct error *err)
{
	if (!vm->cfg.testdev)
		return 0;
	struct vm_testdev *t = calloc(1, sizeof(*t));
	if (!t)
		return error_set(err, -ENOMEM, "out of memory for the test devices");
	vm->testdev = t;
	int ret = fw_cfg_init(&t->fw, vm->cfg.mem_size,
			      (uint16_t)(vm->cfg.ncpus > UINT16_MAX ? UINT16_MAX : vm->cfg.ncpus));
	if (ret)
		return error_set(err, ret, "cannot set up fw_cfg: %s", strerror(-ret));
	t->fw_ready = true;
	struct irq_line lines = { irqchip_set_level, &vm->vm_fd, 0 };
	if ((ret = pc_testdev_init(&t->pc, &vm->mem, lines)))
		return error_set(err, ret, "cannot set up pc-testdev: %s", strerror(-ret));
	t->pc_ready = true;
	if ((ret = pm_timer_init(&t->pmt, vm->start_ns, NULL)))
		return error_set(err, ret, "cannot set up the PM timer: %s", strerror(-ret));
	t->pmt_ready = true;
	if ((ret = bus_register(&vm->pio, FW_CFG_PORT, FW_CFG_SIZE, &fw_cfg_ops, &t->fw,
				"fw_cfg")) ||
	    (ret = bus_register(&vm->pio, PC_TESTDEV_IOPORT, 4, &pc_testdev_ioport_ops, &t->pc,
				"pc-testdev-ioport")) ||
	    (ret = bus_register(&vm->pio, PC_TESTDEV_FLUSH, 4, &pc_testdev_flush_ops, &t->pc,
				"pc-testdev-flush-page")) ||
	    (ret = bus_register(&vm->pio, PC_TESTDEV_IOPORT_BYTE, 4, &pc_testdev_ioport_ops,
				&t->pc, "pc-testdev-ioport-byte")) ||
	    (ret = bus_register(&vm->pio, PC_TESTDEV_IRQ, PC_TESTDEV_IRQ_LINES,
				&pc_testdev_irq_ops, &t->pc, "pc-testdev-irq-line")) ||
	    (ret = bus_register(&vm->pio, PM_TIMER_PORT, PM_TIMER_SIZE, &pm_timer_ops, &t->pmt,
				"pm-timer")) ||
	    (ret = bus_register(&vm->mmio, PC_TESTDEV_IOMEM, PC_TESTDEV_IOMEM_LEN,
				&pc_testdev_iomem_ops, &t->pc, "pc-testdev-iomem")))
		return error_set(err, ret, "cannot register the test devices: %s", strerror(-ret));
	return 0;
}

int vm_testdev_attach_pci(struct vm *vm, struct error *err)
{
	struct vm_testdev *t = vm->testdev;
	if (!t)
		return 0;
	struct pci_window window = { PCI_MMIO_START, PCI_MMIO_END };
	int ret = pci_testdev_init(&t->pci, vm->vm_fd, &vm->mmio, &vm->pio, window);
	if (ret)
		return error_set(err, ret, "cannot set up pci-testdev: %s", strerror(-ret));
	t->pci_ready = true;
	if ((ret = pci_devices_add_func(vm, &t->pci.func, err)))
		return ret;
	/* SeaBIOS turns decode on for the devices it placed; the suite relies on it. */
	pci_func_cfg_write(&t->pci.func, PCI_COMMAND, 2, PCI_CMD_IO | PCI_CMD_MEMORY);
	uint16_t cmd = (uint16_t)pci_func_cfg_read(&t->pci.func, PCI_COMMAND, 2);
	if (!t->pci.func.bars[0].mapped || !t->pci.func.bars[1].mapped)
		return error_set(err, -EEXIST, "pci-testdev: cannot map its BARs (command 0x%x)", cmd);
	return 0;
}

void vm_testdev_destroy(struct vm *vm)
{
	struct vm_testdev *t = vm->testdev;
	if (!t)
		return;
	if (t->pci_ready)
		pci_testdev_destroy(&t->pci);
	if (t->pc_ready)
		pc_testdev_destroy(&t->pc);
	if (t->pmt_ready)
		pm_timer_destroy(&t->pmt);
	if (t->fw_ready)
		fw_cfg_destroy(&t->fw);
	free(t);
	vm->testdev = NULL;
}
