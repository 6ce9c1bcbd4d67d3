/* msivm-lab: the lab as its own program, started by `msivm lab ...` (src/main.c execs it) or directly; runs the msivm beside it. */
#include "lab/lab.h"

int main(int argc, char **argv)
{
	/* lab_main reads its options from argv[1]; argv[0] is what `msivm lab` passed ("lab"). */
	return lab_main(argc, argv);
}
