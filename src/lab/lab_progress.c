/* Lab progress: the per-run line both labs print while they run. */
#include "lab/lab_progress.h"

#include <stdio.h>
#include <unistd.h>

#include "lab/lab.h"
#include "lab/lab_spawn.h"

void lab_progress_init(struct lab_progress *p, int width)
{
	*p = (struct lab_progress){ .tty = isatty(2), .width = width, .t0 = lab_now_ns() };
}

void lab_progress_show(struct lab_progress *p, unsigned done, unsigned planned, const char *what)
{
	char el[16], eta[16] = "--:--";
	lab_fmt_secs(el, sizeof(el), (double)(lab_now_ns() - p->t0) / 1e9);
	if (done)
		lab_fmt_secs(eta, sizeof(eta), p->run_secs / done * (planned - done));
	if (p->tty) {
		fprintf(stderr, "\r\033[K[%*u/%*u] %s  %s elapsed, ETA %s", p->width, done + 1, p->width,
			planned, what, el, eta);
		p->drawn = true;
	} else {
		fprintf(stderr, "[%*u/%*u] %s (%s elapsed, ETA %s)\n", p->width, done + 1, p->width,
			planned, what, el, eta);
	}
	fflush(stderr);
}

void lab_progress_ran(struct lab_progress *p, double secs) { p->run_secs += secs; }

void lab_progress_clear(struct lab_progress *p)
{
	if (p->tty && p->drawn)
		fputs("\r\033[K", stderr);
	p->drawn = false;
}
