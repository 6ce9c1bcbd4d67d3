/* Lab run order: per experiment, batch after batch, every mode with msivm then QEMU (A B A B ...). */
#include "lab/lab.h"

#include <string.h>

#include "virtio/virtio_pci.h"

bool lab_cell_wanted(const struct lab_options *o, const struct lab_experiment *exp,
		     enum lab_vmm vmm, unsigned mode, const char **why)
{
	*why = NULL;
	if (!(o->modes & (1u << mode)) && exp->fixed_mode < 0)
		return false;
	if (exp->fixed_mode >= 0 && (unsigned)exp->fixed_mode != mode)
		return false;
	if (vmm == LAB_QEMU && !o->vs_qemu)
		return false;
	if (vmm == LAB_QEMU && exp->msivm_only)
		*why = "msivm only (no QEMU equivalent)";
	else if (vmm == LAB_QEMU && mode == IRQ_MODE_MSI)
		*why = "QEMU's virtio-pci has no plain MSI capability";
	else if (o->host_cpus < exp->min_cpus)
		*why = "needs more host CPUs than this machine has";
	else if (*o->rt_refused && exp->msivm_extra && strstr(exp->msivm_extra, "--rt"))
		*why = o->rt_refused;
	return true;
}

unsigned lab_plan(const struct lab_options *o, struct lab_step *steps, unsigned max)
{
	unsigned n = 0;
	const char *why;
	for (unsigned e = 0; e < o->nexps; e++)
		for (unsigned r = 0; r < o->runs; r++)
			for (unsigned m = 0; m < LAB_MAX_MODES; m++)
				for (unsigned vmm = 0; vmm < 2; vmm++) {
					if (!lab_cell_wanted(o, o->exps[e], (enum lab_vmm)vmm, m, &why) || why)
						continue;
					if (steps && n < max)
						steps[n] = (struct lab_step){ e, (enum lab_vmm)vmm, m, r };
					n++;
				}
	return n;
}
