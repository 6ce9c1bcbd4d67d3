/* User and group names <-> ids: glibc's NSS in the normal build, /etc/passwd and /etc/group read directly in make static's. */
#ifndef MSIVM_UTIL_USER_DB_H
#define MSIVM_UTIL_USER_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The user NAME: its uid and primary gid. Returns 0, or -ENOENT when there is no such user.
 * With MSIVM_STATIC (make static) only /etc/passwd is read: a static glibc's getpwnam would
 * load the host's NSS modules, which can crash a static binary (libnss_systemd) and are absent
 * in a bare chroot. */
int user_db_user(const char *name, uid_t *uid, gid_t *gid);

/* The group NAME's gid. Returns 0, or -ENOENT. MSIVM_STATIC: /etc/group only. */
int user_db_group(const char *name, gid_t *gid);

/* Writes uid's (gid's) name into buf (NUL-terminated, truncated to len); returns false, buf
 * empty, when it has none. MSIVM_STATIC: /etc/passwd (/etc/group) only. */
bool user_db_user_name(uid_t uid, char *buf, size_t len);
bool user_db_group_name(gid_t gid, char *buf, size_t len);

#endif
