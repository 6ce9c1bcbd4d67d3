/* Lab children the lab talks to: a VMM with the guest's console on pipes, lines in and out. */
#ifndef MSIVM_LAB_LAB_TTY_H
#define MSIVM_LAB_LAB_TTY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct lab_tty {
	pid_t pid;               /* 0: not running (never started, or reaped) */
	int in, out;             /* the console's write and read ends, -1 when closed */
	uint64_t t0;             /* CLOCK_MONOTONIC at fork */
	char *buf;               /* console bytes not yet consumed as lines, NUL-terminated */
	size_t len, cap;
	char *log;               /* every console byte read, at most 64 KiB, NUL-terminated */
	size_t loglen;
	int status;              /* after lab_tty_wait: exit status, 128+N for signal N */
};

/* Starts argv (PATH searched) with its stdin and stdout on pipes and its stderr appended to
 * errpath; it dies with the lab (PR_SET_PDEATHSIG). Returns 0, or -errno (t->pid stays 0). */
int lab_tty_spawn(struct lab_tty *t, char *const argv[], const char *errpath);

/* Nanoseconds from the fork until a console line equal to `line` (without "\r") was read,
 * consuming the console up to it; 0 if the console ended or deadline (CLOCK_MONOTONIC ns)
 * passed first. */
uint64_t lab_tty_wait_line(struct lab_tty *t, const char *line, uint64_t deadline);

/* Writes "a\n" every 2 ms until the echo probe answers a line ("probe: echo a"): nanoseconds
 * from the fork to that answer, or 0 at the deadline or the console's end. Console input that
 * arrives before the VM runs may be dropped (QEMU drops it during an incoming migration), so
 * the line is written again and again. */
uint64_t lab_tty_first_answer(struct lab_tty *t, uint64_t deadline);

/* Writes `line` and a newline to the console. Returns 0 or -errno. */
int lab_tty_send(struct lab_tty *t, const char *line);

/* Waits for the child to end (until deadline, then SIGKILL) and fills t->status. Returns
 * true if it ended by itself before the deadline. */
bool lab_tty_wait(struct lab_tty *t, uint64_t deadline);

/* Kills a running child (SIGKILL), reaps it and frees everything; safe on a zeroed or
 * finished one. t->log is freed too unless taken (set to NULL) first. */
void lab_tty_close(struct lab_tty *t);

/* The proportional set size of process pid in KiB (smaps_rollup's Pss), or -1. */
long lab_pss_kib(pid_t pid);

#endif
