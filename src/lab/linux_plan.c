/* The Linux lab's configurations (interrupt modes, devices, workloads) and its run plan: which boots, in which order. */
#include "lab/linux_lab.h"

#include <stdio.h>

const struct ll_config ll_configs[] = {
	{ "msix", "MSI-X, a vector per queue", "msix", "", "", true, false, NULL, false },
	{ "msix-shared", "MSI-X, one vector shared by the queues", "msix-shared", ",vectors=2", "", true, false, NULL, false },
	{ "intx", "INTx (no MSI-X on the device)", "intx", ",vectors=0", "", false, false, NULL, false },
	{ "nomsi", "guest without MSI (pci=nomsi), the seeds' comparison", "msix", "", "pci=nomsi", false, false, NULL, false },
	/* Linux's virtio-pci has no plain-MSI path: it tries MSI-X, then INTx. */
	{ "msi", "plain MSI offered; Linux falls back to INTx", "msi", NULL, "", false, false, NULL, false },
	{ "vhost", "MSI-X, the NIC on vhost-net and vsock on vhost-vsock (both VMMs)", "msix", "", "",
	  true, true, NULL, true },
	/* msivm's completion batching off (coalesce=off), beside msix where it is on. */
	{ "msix-nocoalesce", "MSI-X, the disk's interrupt moderation off (msivm only)", "msix", NULL, "",
	  true, false, ",coalesce=off", false },
};
const unsigned ll_nconfigs = sizeof(ll_configs) / sizeof(ll_configs[0]);

unsigned ll_plan(struct ll_options *o, unsigned configs, struct ll_cell *cells)
{
	unsigned n = 0;
	for (unsigned vmm = 0; vmm < (o->vs_qemu ? 2u : 1u); vmm++)
		for (unsigned i = 0; i < ll_nconfigs; i++) {
			if (!(configs & (1u << i)))
				continue;
			struct ll_cell *c = &cells[n++];
			c->cfg = &ll_configs[i];
			c->vmm = vmm ? LAB_QEMU : LAB_MSIVM;
			if (c->vmm == LAB_QEMU && !c->cfg->qemu_vectors) {
				c->skipped = true;
				snprintf(c->skip_reason, sizeof(c->skip_reason), "%s",
					 c->cfg->disk_extra ? "msivm only (a setting of msivm's disk)"
							    : "QEMU's virtio-pci offers no plain MSI");
			} else {
				o->runs_planned += o->runs;
			}
		}
	return n;
}
