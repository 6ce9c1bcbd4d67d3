/* Error reports: a return code plus one human-readable line naming the problem. */
#ifndef MSIVM_UTIL_ERROR_H
#define MSIVM_UTIL_ERROR_H

#define ERROR_MSG_MAX 320

struct error {
	char msg[ERROR_MSG_MAX];
};

/* Formats the message into *e (if e is non-NULL) and returns `code`, so a
 * failing function can `return error_set(e, -EINVAL, "...")`. */
int error_set(struct error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
