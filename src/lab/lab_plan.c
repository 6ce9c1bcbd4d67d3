/* Lab run order: per experiment, batch after batch, every mode with msivm then QEMU (A B A B ...). */
#include "lab/lab.h"

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
