/* Lab child processes: one VMM run with its console and error output captured, a watcher per console chunk. */
#ifndef MSIVM_LAB_LAB_SPAWN_H
#define MSIVM_LAB_LAB_SPAWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "lab/lab.h"

/* Console bytes kept per run (the rest is read and dropped). */
#define LAB_CONSOLE_MAX (1 << 20)

/* Called each time console output arrived, with everything captured so far
 * (NUL-terminated) and the time since the child started. */
typedef void (*lab_watch_fn)(void *ctx, pid_t pid, const char *console, size_t len,
			     uint64_t since_start_ns);

struct lab_child {
	/* in */
	uint64_t timeout_ns;        /* killed (SIGKILL) after this; the run is timed_out */
	lab_watch_fn watch;         /* NULL: none */
	void *ctx;
	/* out */
	pid_t pid;
	int out, err;               /* read ends of its stdout and stderr, -1 at EOF */
	uint64_t t0;                /* CLOCK_MONOTONIC at fork */
	bool timed_out;
	int signo;                  /* the signal the lab received and forwarded, 0 if none */
};

/* Calls line(ctx, start, n) for each complete line of console (n without the
 * '\n') from *scanned on, and advances *scanned past it: a watcher's way to
 * look at every line once. */
void lab_console_lines(const char *console, size_t len, size_t *scanned,
		       void (*line)(void *ctx, const char *start, size_t n), void *ctx);

/* CLOCK_MONOTONIC in ns. */
uint64_t lab_now_ns(void);

/* A file's first LAB_CONSOLE_MAX bytes as a malloc'd string; NULL if missing or empty. */
char *lab_slurp(const char *path);

/* Runs argv (PATH searched) with stdin on /dev/null and stdout/stderr captured
 * into run->console and run->errout (errout at most LAB_STDERR_MAX); fills
 * run->status (128+N: killed by signal N) and run->secs, and *ru. A signal on
 * sigfd (-1: none) is forwarded to the child, which is killed if it has not
 * ended 5 s later (a second signal kills at once); ch->signo tells, and is SIGINT too for a
 * child that died of SIGINT or exited 130 (a Ctrl-C that reached it first). The child
 * dies with the lab (PR_SET_PDEATHSIG). Returns 0, or -errno if it could not
 * be started (nothing captured). */
/* For a lab child that died of SIGINT, or exited 130 as msivm does on it: the user's Ctrl-C,
 * which the whole process group gets, reached it first; whichever process sees it first, the lab
 * stops. Waits up to 500 ms for the lab's own copy on sigfd (-1: none) to name the signal it
 * was (consuming it), else returns SIGINT. */
int lab_interrupted_child(int sigfd);

int lab_spawn(char *const argv[], int sigfd, struct lab_child *ch, struct lab_run *run,
	      struct rusage *ru);

#endif
