/* Logging: formats messages for stderr and applies per-site rate limits. */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#define RL_BURST 10
#define RL_INTERVAL_MS 1000

static enum log_level current_level = LOG_WARN;

static const char *const level_names[] = {
	[LOG_ERROR] = "error", [LOG_WARN] = "warning",
	[LOG_INFO] = "info",   [LOG_DEBUG] = "debug",
};

void log_set_level(enum log_level level) { current_level = level; }
enum log_level log_get_level(void) { return current_level; }

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	char line[1024];
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "msivm: %s: %s\n", level_names[level], line);
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
