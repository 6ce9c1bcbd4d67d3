/* The Linux lab's configurations (interrupt modes, devices, workloads) and its run plan: which boots, in which order. */
#include "lab/linux_lab.h"

#include <stdio.h>

/* The passthrough experiment's workloads: 4 KiB random reads at depth 1 and 32. */
#define PT_WORKS (LL_WORK_BIT(LL_FIO_QD1) | LL_WORK_BIT(LL_FIO_QD32))

/* Each: name, label, msivm's irq=, QEMU's vectors (NULL: no QEMU run), the guest's extra command
 * line, then what differs from the defaults. */
#define CFG(n, l, i, q, g) .name = n, .label = l, .irq = i, .qemu_vectors = q, .guest_extra = g

const struct ll_config ll_configs[] = {
	{ CFG("msix", "MSI-X, a vector per queue", "msix", "", ""), .msi_expected = true },
	{ CFG("msix-shared", "MSI-X, one vector shared by the queues", "msix-shared", ",vectors=2", ""),
	  .msi_expected = true },
	{ CFG("intx", "INTx (no MSI-X on the device)", "intx", ",vectors=0", "") },
	{ CFG("nomsi", "guest without MSI (pci=nomsi), the seeds' comparison", "msix", "", "pci=nomsi") },
	/* Linux's virtio-pci has no plain-MSI path: it tries MSI-X, then INTx. */
	{ CFG("msi", "plain MSI offered; Linux falls back to INTx", "msi", NULL, "") },
	{ CFG("vhost", "MSI-X, the NIC on vhost-net and vsock on vhost-vsock (both VMMs)", "msix", "", ""),
	  .msi_expected = true, .vhost = true, .vsock_vhost = true },
	/* msivm's completion batching off (coalesce=off), beside msix where it is on. */
	{ CFG("msix-nocoalesce", "MSI-X, the disk's interrupt moderation off (msivm only)", "msix", NULL, ""),
	  .msi_expected = true, .disk_extra = ",coalesce=off" },
	/* The passthrough experiment (issue 50): fio at depth 1 and 32 on one NVMe passed through
	 * (--vfio), each way its interrupts can reach the guest, beside the same workloads on the
	 * VMM's virtio-blk. */
	{ CFG("pt-msix", "passthrough NVMe, MSI-X by irqfd (no VMM thread)", "msix", "", ""),
	  .passthrough = true, .works = PT_WORKS },
	{ CFG("pt-relay", "passthrough NVMe, MSI-X relayed by the VMM's thread (msivm relay=on, QEMU "
	      "x-no-kvm-msix=on)", "msix", "", ""),
	  .passthrough = true, .vfio_extra = ",relay=on", .qemu_vfio_extra = ",x-no-kvm-msix=on",
	  .works = PT_WORKS },
	{ CFG("pt-intx", "passthrough NVMe, INTx (guest pci=nomsi: resampling irqfd)", "msix", "",
	      "pci=nomsi"), .passthrough = true, .works = PT_WORKS },
	{ CFG("pt-dedicated", "passthrough NVMe, MSI-X by irqfd, msivm --dedicated, vCPUs pinned "
	      "(msivm only)", "msix", NULL, ""), .passthrough = true, .dedicated = true,
	  .works = PT_WORKS },
	{ CFG("pt-virtio", "the same workloads on the VMM's virtio-blk (MSI-X), for comparison", "msix",
	      "", ""), .msi_expected = true, .works = PT_WORKS },
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
					 c->cfg->dedicated ? "msivm only (--dedicated: HLT and PAUSE exits off)"
					 : c->cfg->disk_extra ? "msivm only (a setting of msivm's disk)"
							    : "QEMU's virtio-pci offers no plain MSI");
			} else {
				o->runs_planned += o->runs;
			}
		}
	return n;
}
