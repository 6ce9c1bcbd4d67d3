/* Interrupt mode of a PCI function: MSI-X, MSI or the INTx line, chosen per device on the command line. */
#ifndef MSIVM_PCI_IRQ_MODE_H
#define MSIVM_PCI_IRQ_MODE_H

/* How a device signals the guest (virtio-pci and passed-through devices alike). */
enum irq_mode {
	IRQ_MODE_MSIX,         /* MSI-X: a vector per queue (virtio: plus one for config) */
	IRQ_MODE_MSIX_SHARED,  /* virtio: one vector shared by all queues plus one for config */
	IRQ_MODE_MSI,          /* plain MSI capability, no MSI-X */
	IRQ_MODE_INTX,         /* no MSI/MSI-X capability: the IOAPIC pin */
};

/* Parses "msix", "msix-shared", "msi" or "intx". Returns 0 or -EINVAL. */
int irq_mode_parse(const char *s, enum irq_mode *out);

/* The spelling irq_mode_parse takes for m. */
const char *irq_mode_name(enum irq_mode m);

#endif
