/* A minimal QMP client for the lab's QEMU runs: connect, commands, one event. */
#ifndef MSIVM_LAB_LAB_QMP_H
#define MSIVM_LAB_LAB_QMP_H

#include <stddef.h>
#include <stdint.h>

struct lab_qmp {
	int fd;                  /* -1: not connected */
	char buf[8192];          /* bytes read and not yet taken as a line */
	size_t len;
};

/* Connects to QEMU's `-qmp unix:PATH,server=on,wait=off` (retrying while the socket does not
 * exist yet), reads the greeting and leaves capabilities negotiation. Returns 0, or -errno
 * (-ETIMEDOUT at deadline, CLOCK_MONOTONIC ns). */
int lab_qmp_open(struct lab_qmp *q, const char *path, uint64_t deadline);

/* Sends one command (a JSON object as text) and waits for its "return". Events that arrive
 * meanwhile are dropped, except that the timestamp of event `keep` (NULL: none) is put in
 * *kept_us (microseconds since the epoch). `status` (NULL: not wanted) gets the return's
 * "status" string ("" if none). An "error" reply is -EIO with its description in `why` (NULL:
 * not wanted). Returns 0 or -errno (-ETIMEDOUT at deadline). */
int lab_qmp_cmd(struct lab_qmp *q, const char *cmd, const char *keep, int64_t *kept_us,
		char *status, size_t status_len, char *why, size_t why_len, uint64_t deadline);

/* Waits for event `name`: its timestamp in microseconds since the epoch, or -1 at deadline or
 * when the connection ends. */
int64_t lab_qmp_event(struct lab_qmp *q, const char *name, uint64_t deadline);

/* Closes the connection; safe on a closed one. */
void lab_qmp_close(struct lab_qmp *q);

#endif
