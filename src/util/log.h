/* Logging: one process-wide sink (stderr) with a level and per-site rate limits. */
#ifndef MSIVM_UTIL_LOG_H
#define MSIVM_UTIL_LOG_H

#include <stdint.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* A rate limit owned by whoever logs (a device, the bus), never global:
 * at most `burst` lines per `interval_ms`, then one "suppressed N" note. */
struct ratelimit {
	uint64_t window_start_ms;
	uint32_t printed;
	uint32_t suppressed;
};

/* Sets the level below which messages are dropped. Call once at start-up,
 * before any thread exists; it is the only process-wide setting msivm has. */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* Sends log lines to `fd` instead of stderr (--log-file). Same rule: once,
 * at start-up. Each line is "msivm: [SECONDS THREAD] LEVEL: text", seconds
 * counted from the first line, written with one write(2). */
void log_set_fd(int fd);

/* Parses "error", "warn"/"warning", "info" or "debug". Returns 0 or -1. */
int log_level_parse(const char *s, enum log_level *out);

/* Writes one line (see log_set_fd) if `level` is enabled. */
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Like log_msg, but drops the line when `rl` has printed 10 lines in the last
 * second; the next line that gets through says how many were dropped.
 * `rl` must not be shared between threads without the caller's lock. */
void log_ratelimited(struct ratelimit *rl, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_err(...)   log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
