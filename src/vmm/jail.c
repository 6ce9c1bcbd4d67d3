/* Jail: close inherited fds, pivot into a private root, drop uid/gid, no new privileges. */
#include "vmm/jail.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/parse.h"
#include "util/user_db.h"

static int parse_id(const char *s, unsigned long *out)
{
	uint64_t v;
	if (parse_uint(s, 0, UINT32_MAX - 1, &v))
		return -EINVAL;
	*out = (unsigned long)v;
	return 0;
}

int jail_parse_user(const char *spec, struct jail_config *j, struct error *err)
{
	char buf[256];
	if (!spec[0] || snprintf(buf, sizeof(buf), "%s", spec) >= (int)sizeof(buf))
		return error_set(err, -EINVAL, "--user '%s': give USER[:GROUP]", spec);
	char *group = strchr(buf, ':');
	if (group)
		*group++ = 0;
	unsigned long id;
	if (user_db_user(buf, &j->uid, &j->gid)) {
		if (parse_id(buf, &id))
			return error_set(err, -EINVAL, "--user: no user '%s'", buf);
		j->uid = (uid_t)id;
		j->gid = (gid_t)id;
	}
	if (group && user_db_group(group, &j->gid)) {
		if (parse_id(group, &id))
			return error_set(err, -EINVAL, "--user: no group '%s'", group);
		j->gid = (gid_t)id;
	}
	j->drop_user = true;
	return 0;
}

void jail_note_inherited(struct jail_config *j)
{
	j->ninherited = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int self = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d)) && j->ninherited < JAIL_MAX_INHERITED) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || end == e->d_name || fd <= 2 || fd == self)
			continue;
		j->inherited[j->ninherited++] = (int)fd;
	}
	closedir(d);
}

static int enter_root(const char *dir, struct error *err)
{
	if (unshare(CLONE_NEWNS))
		return error_set(err, -errno, "--chroot: cannot create a mount namespace: %s",
				 strerror(errno));
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return error_set(err, -errno, "--chroot: cannot make mounts private: %s",
				 strerror(errno));
	/* pivot_root needs the new root to be a mount point. */
	if (mount(dir, dir, NULL, MS_BIND | MS_REC, NULL))
		return error_set(err, -errno, "--chroot: cannot bind-mount '%s': %s", dir,
				 strerror(errno));
	if (chdir(dir))
		return error_set(err, -errno, "--chroot: cannot enter '%s': %s", dir, strerror(errno));
	if (syscall(SYS_pivot_root, ".", "."))
		return error_set(err, -errno, "--chroot: pivot_root into '%s': %s", dir,
				 strerror(errno));
	/* The old root is stacked on "." now: detach it, nothing else stays reachable. */
	if (umount2(".", MNT_DETACH))
		return error_set(err, -errno, "--chroot: cannot detach the old root: %s",
				 strerror(errno));
	if (chdir("/"))
		return error_set(err, -errno, "--chroot: chdir /: %s", strerror(errno));
	return 0;
}

static int drop_user(uid_t uid, gid_t gid, struct error *err)
{
	if (setgroups(0, NULL))
		return error_set(err, -errno, "--user: cannot drop supplementary groups: %s",
				 strerror(errno));
	if (setresgid(gid, gid, gid))
		return error_set(err, -errno, "--user: cannot switch to group %u: %s", (unsigned)gid,
				 strerror(errno));
	if (setresuid(uid, uid, uid))
		return error_set(err, -errno, "--user: cannot switch to user %u: %s", (unsigned)uid,
				 strerror(errno));
	if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return error_set(err, -EPERM, "--user: root could be regained after the switch");
	return 0;
}

int jail_enter(const struct jail_config *j, struct error *err)
{
	for (int i = 0; i < j->ninherited; i++)
		close(j->inherited[i]);
	int ret;
	if (j->root && (ret = enter_root(j->root, err)))
		return ret;
	if (j->drop_user && (ret = drop_user(j->uid, j->gid, err)))
		return ret;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return error_set(err, -errno, "cannot set no-new-privileges: %s", strerror(errno));
	return 0;
}

bool jail_confines(const struct jail_config *j)
{
	return j->root || j->drop_user;
}
