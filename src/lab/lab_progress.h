/* Lab progress: one line per run on standard error (redrawn in place on a terminal) with elapsed time and ETA. */
#ifndef MSIVM_LAB_PROGRESS_H
#define MSIVM_LAB_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct lab_progress {
	bool tty;        /* stderr is a terminal: one line redrawn in place */
	bool drawn;      /* a redrawn line is on the screen */
	int width;       /* digits of the run counters */
	uint64_t t0;     /* when the first run started (lab_now_ns) */
	double run_secs; /* sum over the finished runs */
};

/* Starts the clock; the counters are printed `width` digits wide. */
void lab_progress_init(struct lab_progress *p, int width);

/* Shows "[done+1/planned] WHAT" with the elapsed time and, once a run has finished, an ETA
 * from the mean run so far. */
void lab_progress_show(struct lab_progress *p, unsigned done, unsigned planned, const char *what);

/* Adds a finished run's duration to the ETA's mean. */
void lab_progress_ran(struct lab_progress *p, double secs);

/* Erases a redrawn line (before other output, and at the end). */
void lab_progress_clear(struct lab_progress *p);

#endif
