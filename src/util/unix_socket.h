/* Unix stream sockets msivm serves on (the API, a serial or console socket): created fresh with mode 0600. */
#ifndef MSIVM_UTIL_UNIX_SOCKET_H
#define MSIVM_UTIL_UNIX_SOCKET_H

#include <stdbool.h>

#include "util/error.h"

/* Binds and listens on a new unix stream socket at `path` (mode 0600; an
 * existing path is refused, never replaced), close-on-exec, non-blocking
 * when `nonblock`. `what` names the option in messages ("--api-socket").
 * Returns the fd or -errno with a message. */
int unix_listen(const char *path, const char *what, bool nonblock, struct error *err);

/* Listens on a new socket at `path` (as unix_listen), waits for one
 * connection, then closes the listener and removes `path`: one client,
 * QEMU's "server,wait". Interrupted waits are retried. Returns the
 * connection's fd (close-on-exec, blocking) or -errno with a message. */
int unix_accept_one(const char *path, const char *what, struct error *err);

#endif
