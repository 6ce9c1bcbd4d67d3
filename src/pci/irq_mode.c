/* Interrupt mode names: the spellings of irq= for every PCI device. */
#include "pci/irq_mode.h"

#include <errno.h>
#include <string.h>

static const char *const mode_names[] = {
	[IRQ_MODE_MSIX] = "msix", [IRQ_MODE_MSIX_SHARED] = "msix-shared",
	[IRQ_MODE_MSI] = "msi", [IRQ_MODE_INTX] = "intx",
};

int irq_mode_parse(const char *s, enum irq_mode *out)
{
	for (unsigned i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(s, mode_names[i])) {
			*out = (enum irq_mode)i;
			return 0;
		}
	return -EINVAL;
}

const char *irq_mode_name(enum irq_mode m)
{
	return (unsigned)m < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[m] : "?";
}
