/* Lab children the lab talks to: fork/exec with the console on pipes, line waits, PSS. */
#include "lab/lab_tty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lab/lab_spawn.h"

#define TTY_LOG_MAX (64 * 1024)

/* The child side: never returns. */
static void child(char *const argv[], int in, int out, const char *errpath, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int err = open(errpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	dup2(in, 0);
	dup2(out, 1);
	if (err >= 0)
		dup2(err, 2);
	execvp(argv[0], argv);
	dprintf(2, "msivm lab: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int lab_tty_spawn(struct lab_tty *t, char *const argv[], const char *errpath)
{
	int pi[2], po[2];
	memset(t, 0, sizeof(*t));
	t->in = t->out = -1;
	if (pipe2(pi, O_CLOEXEC))
		return -errno;
	if (pipe2(po, O_CLOEXEC)) {
		int e = -errno;
		close(pi[0]), close(pi[1]);
		return e;
	}
	t->cap = 4096;
	t->buf = calloc(1, t->cap);
	t->log = calloc(1, TTY_LOG_MAX + 1);
	if (!t->buf || !t->log) {
		close(pi[0]), close(pi[1]), close(po[0]), close(po[1]);
		lab_tty_close(t);
		return -ENOMEM;
	}
	pid_t parent = getpid();
	t->t0 = lab_now_ns();
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(pi[0]), close(pi[1]), close(po[0]), close(po[1]);
		lab_tty_close(t);
		return e;
	}
	if (pid == 0)
		child(argv, pi[0], po[1], errpath, parent);
	t->pid = pid;
	close(pi[0]);
	close(po[1]);
	t->in = pi[1];
	t->out = po[0];
	return 0;
}

/* Reads what the console has within timeout_ms into buf and log. Returns 1 if something was
 * read, 0 if nothing came in time, -1 at the console's end. */
static int fill(struct lab_tty *t, int timeout_ms)
{
	if (t->out < 0)
		return -1;
	struct pollfd p = { .fd = t->out, .events = POLLIN };
	int r = poll(&p, 1, timeout_ms);
	if (r <= 0)
		return r < 0 && errno != EINTR ? -1 : 0;
	if (t->len + 4097 > t->cap) {
		char *nb = realloc(t->buf, t->cap * 2);
		if (!nb)
			return -1;
		t->buf = nb;
		t->cap *= 2;
	}
	ssize_t n = read(t->out, t->buf + t->len, 4096);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0) {
		close(t->out);
		t->out = -1;
		return -1;
	}
	size_t keep = TTY_LOG_MAX - t->loglen < (size_t)n ? TTY_LOG_MAX - t->loglen : (size_t)n;
	memcpy(t->log + t->loglen, t->buf + t->len, keep);
	t->loglen += keep;
	t->log[t->loglen] = 0;
	t->len += (size_t)n;
	t->buf[t->len] = 0;
	return 1;
}

/* Takes the first complete line out of buf into line (without "\r\n"). Returns false if
 * there is none. */
static bool take_line(struct lab_tty *t, char *line, size_t len)
{
	char *nl = memchr(t->buf, '\n', t->len);
	if (!nl)
		return false;
	size_t n = (size_t)(nl - t->buf);
	size_t k = n && t->buf[n - 1] == '\r' ? n - 1 : n;
	snprintf(line, len, "%.*s", (int)k, t->buf);
	memmove(t->buf, nl + 1, t->len - n - 1);
	t->len -= n + 1;
	t->buf[t->len] = 0;
	return true;
}

static int ms_until(uint64_t deadline)
{
	uint64_t now = lab_now_ns();
	return now >= deadline ? 0 : (int)((deadline - now) / 1000000 + 1);
}

uint64_t lab_tty_wait_line(struct lab_tty *t, const char *want, uint64_t deadline)
{
	char line[256];
	for (;;) {
		while (take_line(t, line, sizeof(line)))
			if (!strcmp(line, want))
				return lab_now_ns() - t->t0;
		if (lab_now_ns() >= deadline || fill(t, ms_until(deadline)) < 0)
			return 0;
	}
}

uint64_t lab_tty_first_answer(struct lab_tty *t, uint64_t deadline)
{
	char line[256];
	while (lab_now_ns() < deadline) {
		if (lab_tty_send(t, "a"))
			return 0;
		if (fill(t, 2) < 0)
			return 0;
		while (take_line(t, line, sizeof(line)))
			if (!strcmp(line, "probe: echo a"))
				return lab_now_ns() - t->t0;
	}
	return 0;
}

int lab_tty_send(struct lab_tty *t, const char *line)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "%s\n", line);
	if (t->in < 0 || n <= 0 || (size_t)n >= sizeof(buf))
		return -EINVAL;
	ssize_t w = write(t->in, buf, (size_t)n);
	return w == n ? 0 : w < 0 ? -errno : -EIO;
}

bool lab_tty_wait(struct lab_tty *t, uint64_t deadline)
{
	if (!t->pid)
		return false;
	int ws = 0;
	bool ended = false;
	for (;;) {
		pid_t r = waitpid(t->pid, &ws, WNOHANG);
		if (r == t->pid) {
			ended = true;
			break;
		}
		if (r < 0 && errno != EINTR)
			break;
		if (lab_now_ns() >= deadline) {
			kill(t->pid, SIGKILL);
			while (waitpid(t->pid, &ws, 0) < 0 && errno == EINTR)
				;
			break;
		}
		/* Keep the console drained so a chatty child never blocks on its pipe. */
		if (fill(t, 5) < 0)
			usleep(1000);
	}
	t->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	t->pid = 0;
	return ended;
}

void lab_tty_close(struct lab_tty *t)
{
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		int ws;
		while (waitpid(t->pid, &ws, 0) < 0 && errno == EINTR)
			;
		t->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		t->pid = 0;
	}
	if (t->in >= 0)
		close(t->in);
	if (t->out >= 0)
		close(t->out);
	t->in = t->out = -1;
	free(t->buf);
	free(t->log);
	t->buf = t->log = NULL;
	t->len = t->cap = t->loglen = 0;
}

long lab_pss_kib(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	FILE *f = fopen(path, "re");
	long kib = -1;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "Pss:", 4)) {
			kib = strtol(line + 4, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return kib;
}
