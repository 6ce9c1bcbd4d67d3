/* Lab child processes: fork/exec a VMM, capture its console and errors, forward signals, enforce a timeout. */
#include "lab/lab_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

uint64_t lab_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A growing buffer of at most `max` bytes; what does not fit is read and dropped. */
struct sink {
	char *buf;
	size_t len, cap, max;
	bool truncated;
};

static int sink_read(struct sink *k, int fd)
{
	char scratch[4096];
	if (k->len + 4096 + 1 > k->cap && k->cap < k->max) {
		size_t ncap = k->cap * 2 > k->max ? k->max : k->cap * 2;
		char *nb = realloc(k->buf, ncap);
		if (nb) {
			k->buf = nb;
			k->cap = ncap;
		}
	}
	size_t room = k->buf && k->cap > k->len + 1 ? k->cap - k->len - 1 : 0;
	char *dst = room ? k->buf + k->len : scratch;
	ssize_t n = read(fd, dst, room ? (room < 4096 ? room : 4096) : sizeof(scratch));
	if (n < 0 && errno == EINTR)
		return 1;
	if (n <= 0)
		return 0;
	if (room) {
		k->len += (size_t)n;
		k->buf[k->len] = 0;
	} else {
		k->truncated = true;
	}
	return 1;
}

/* Seconds a signalled VMM has to exit before it is killed. */
#define STOP_GRACE_NS (5ULL * 1000000000ULL)


/* Reads the child's stdout (the console, shown to the watcher) and stderr
 * until both end; forwards signals that arrive on sigfd; kills the child
 * after its timeout or the stop grace. */
static void capture(struct lab_child *ch, int sigfd, struct sink *out, struct sink *err)
{
	uint64_t kill_at = ch->t0 + ch->timeout_ns;
	bool killed = false;
	while (ch->out >= 0 || ch->err >= 0) {
		struct pollfd p[3] = {
			{ .fd = ch->out, .events = POLLIN }, { .fd = ch->err, .events = POLLIN },
			{ .fd = sigfd, .events = POLLIN },
		};
		int r = poll(p, 3, 200);
		uint64_t now = lab_now_ns();
		if (!killed && now >= kill_at) {
			ch->timed_out = !ch->signo;
			kill(ch->pid, SIGKILL);
			killed = true;
		}
		if (r <= 0)
			continue;
		if (p[2].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				/* The first signal is passed on; a second one kills. */
				if (!ch->signo) {
					ch->signo = (int)si.ssi_signo;
					kill(ch->pid, (int)si.ssi_signo);
					if (kill_at > now + STOP_GRACE_NS)
						kill_at = now + STOP_GRACE_NS;
				} else if (!killed) {
					kill(ch->pid, SIGKILL);
					killed = true;
				}
			}
		}
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (!sink_read(out, ch->out)) {
				close(ch->out);
				ch->out = -1;
			} else if (ch->watch && out->len) {
				ch->watch(ch->ctx, ch->pid, out->buf, out->len, lab_now_ns() - ch->t0);
			}
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			if (!sink_read(err, ch->err)) {
				close(ch->err);
				ch->err = -1;
			}
		}
	}
	/* Ctrl-C on a terminal reaches the VMM too, which may end before the lab
	 * reads its own signal: the run was interrupted all the same. */
	struct signalfd_siginfo si;
	if (!ch->signo && sigfd >= 0 && read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		ch->signo = (int)si.ssi_signo;
}

void lab_console_lines(const char *console, size_t len, size_t *scanned,
		       void (*line)(void *ctx, const char *start, size_t n), void *ctx)
{
	while (*scanned < len) {
		const char *nl = memchr(console + *scanned, '\n', len - *scanned);
		if (!nl)
			break;
		size_t n = (size_t)(nl - (console + *scanned));
		line(ctx, console + *scanned, n);
		*scanned += n + 1;
	}
}

char *lab_slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	char *s = malloc(LAB_CONSOLE_MAX + 1);
	size_t n = s ? fread(s, 1, LAB_CONSOLE_MAX, f) : 0;
	fclose(f);
	if (s)
		s[n] = 0;
	if (s && !n) {
		free(s);
		s = NULL;
	}
	return s;
}

int lab_interrupted_child(int sigfd)
{
	struct pollfd p = { .fd = sigfd, .events = POLLIN };
	struct signalfd_siginfo si;
	if (sigfd >= 0 && poll(&p, 1, 500) > 0 && read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		return (int)si.ssi_signo;
	return SIGINT;
}

/* The child side of spawn: never returns. */
static void child_exec(char *const argv[], int out, int err, pid_t parent)
{
	/* No VMM outlives the lab, however the lab ends. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(127);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int null = open("/dev/null", O_RDONLY);
	if (null >= 0 && null != 0) {
		dup2(null, 0);
		close(null);
	}
	dup2(out, 1);
	dup2(err, 2);
	execvp(argv[0], argv);
	dprintf(2, "msivm lab: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int lab_spawn(char *const argv[], int sigfd, struct lab_child *ch, struct lab_run *run,
	      struct rusage *ru)
{
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC))
		return -errno;
	if (pipe2(pe, O_CLOEXEC)) {
		int e = -errno;
		close(po[0]);
		close(po[1]);
		return e;
	}
	pid_t parent = getpid();
	ch->t0 = lab_now_ns();
	ch->pid = fork();
	if (ch->pid < 0) {
		int e = -errno;
		close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
		return e;
	}
	if (ch->pid == 0)
		child_exec(argv, po[1], pe[1], parent);
	close(po[1]);
	close(pe[1]);
	ch->out = po[0];
	ch->err = pe[0];
	struct sink out = { .buf = calloc(1, 65536), .cap = 65536, .max = LAB_CONSOLE_MAX };
	struct sink err = { .buf = calloc(1, 4096), .cap = 4096, .max = LAB_STDERR_MAX };
	capture(ch, sigfd, &out, &err);
	int wstatus = 0;
	while (wait4(ch->pid, &wstatus, 0, ru) < 0 && errno == EINTR)
		;
	run->secs = (double)(lab_now_ns() - ch->t0) / 1e9;
	run->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	if (!ch->signo && run->status == 128 + SIGINT)
		ch->signo = lab_interrupted_child(sigfd);
	static const char trunc_note[] = "\n[truncated]\n";
	if (err.truncated && err.len >= sizeof(trunc_note))
		memcpy(err.buf + err.len - (sizeof(trunc_note) - 1), trunc_note, sizeof(trunc_note));
	run->console = out.buf;
	run->errout = err.buf;
	return 0;
}

