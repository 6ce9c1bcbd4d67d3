/* INTx: eventfd pair -> KVM resampling irqfd on the function's GSI, and back. */
#include "pci/intx.h"

#include <errno.h>
#include <linux/kvm.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

void pci_intx_clear(struct pci_intx *x)
{
	*x = (struct pci_intx){ .fd = -1, .resample_fd = -1, .vm_fd = -1 };
}

int pci_intx_open(struct pci_intx *x, int vm_fd, uint32_t gsi)
{
	pci_intx_clear(x);
	x->gsi = gsi;
	x->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	x->resample_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	int ret = 0;
	if (x->fd < 0 || x->resample_fd < 0) {
		ret = -errno;
	} else if (vm_fd >= 0) {
		struct kvm_irqfd irqfd = {
			.fd = (uint32_t)x->fd, .gsi = gsi, .flags = KVM_IRQFD_FLAG_RESAMPLE,
			.resamplefd = (uint32_t)x->resample_fd,
		};
		if (ioctl(vm_fd, KVM_IRQFD, &irqfd))
			ret = -errno;
		else
			x->vm_fd = vm_fd;
	}
	if (ret)
		pci_intx_close(x);
	return ret;
}

void pci_intx_close(struct pci_intx *x)
{
	/* Closing the eventfd releases KVM's irqfd (it sees the hang-up): no ioctl, so this is
	 * safe at any point of the VM's teardown. */
	if (x->fd >= 0)
		close(x->fd);
	if (x->resample_fd >= 0)
		close(x->resample_fd);
	uint32_t gsi = x->gsi;
	pci_intx_clear(x);
	x->gsi = gsi;
}
