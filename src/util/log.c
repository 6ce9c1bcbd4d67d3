/* Logging: formats messages for stderr and applies per-site rate limits. */
#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RL_BURST 10
#define RL_INTERVAL_MS 1000

/* Set once at start-up (log_set_level, log_set_fd), before any thread. */
static enum log_level current_level = LOG_WARN;
static int log_fd = STDERR_FILENO;
static struct timespec log_origin;

static const char *const level_names[] = {
	[LOG_ERROR] = "error", [LOG_WARN] = "warning",
	[LOG_INFO] = "info",   [LOG_DEBUG] = "debug",
};

void log_set_level(enum log_level level)
{
	current_level = level;
	clock_gettime(CLOCK_MONOTONIC, &log_origin); /* log times count from start-up */
}
enum log_level log_get_level(void) { return current_level; }
void log_set_fd(int fd) { log_fd = fd; }

int log_level_parse(const char *s, enum log_level *out)
{
	for (int l = LOG_ERROR; l <= LOG_DEBUG; l++) {
		if (!strcmp(s, level_names[l]) || (l == LOG_WARN && !strcmp(s, "warn"))) {
			*out = (enum log_level)l;
			return 0;
		}
	}
	return -1;
}

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	if (!log_origin.tv_sec && !log_origin.tv_nsec)
		clock_gettime(CLOCK_MONOTONIC, &log_origin); /* the first line, on the main thread */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double t = (double)(now.tv_sec - log_origin.tv_sec) +
		   (double)(now.tv_nsec - log_origin.tv_nsec) / 1e9;
	char thread[16] = "";
	if (pthread_getname_np(pthread_self(), thread, sizeof(thread)))
		thread[0] = 0;
	char text[1024], line[1200];
	vsnprintf(text, sizeof(text), fmt, ap);
	int n = snprintf(line, sizeof(line), "msivm: [%10.6f %s] %s: %s\n", t, thread,
			 level_names[level], text);
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	/* One write per line: lines of several threads do not interleave. */
	if (write(log_fd, line, (size_t)n) < 0) {
		/* nowhere left to report it */
	}
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	if (level > current_level)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void log_ratelimited(struct ratelimit *rl, enum log_level level, const char *fmt, ...)
{
	if (level > current_level)
		return;
	uint64_t now = now_ms();
	if (now - rl->window_start_ms >= RL_INTERVAL_MS) {
		if (rl->suppressed)
			log_msg(level, "(%u similar messages suppressed)", rl->suppressed);
		rl->window_start_ms = now;
		rl->printed = 0;
		rl->suppressed = 0;
	}
	if (rl->printed >= RL_BURST) {
		rl->suppressed++;
		return;
	}
	rl->printed++;
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}
