/* User and group lookups: getpwnam and friends, or (make static) a direct read of /etc/passwd and /etc/group. */
#include "util/user_db.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

/* Copies s into buf (truncated); true when s is a name. */
static bool copy_name(const char *s, char *buf, size_t len)
{
	if (len)
		snprintf(buf, len, "%s", s ? s : "");
	return s && s[0];
}

#ifdef MSIVM_STATIC
/* A line of /etc/passwd or /etc/group longer than this is skipped. */
#define USER_DB_LINE 4096

/* The first entry of /etc/passwd with this name (name != NULL) or uid; 0 or -ENOENT. */
static int passwd_find(const char *name, uid_t uid, struct passwd *pw, char *buf, size_t len)
{
	FILE *f = fopen("/etc/passwd", "re");
	if (!f)
		return -ENOENT;
	struct passwd *res;
	int rc = -ENOENT;
	while (fgetpwent_r(f, pw, buf, len, &res) == 0) {
		if (name ? strcmp(res->pw_name, name) == 0 : res->pw_uid == uid) {
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

/* The same in /etc/group by name or gid. */
static int group_find(const char *name, gid_t gid, struct group *gr, char *buf, size_t len)
{
	FILE *f = fopen("/etc/group", "re");
	if (!f)
		return -ENOENT;
	struct group *res;
	int rc = -ENOENT;
	while (fgetgrent_r(f, gr, buf, len, &res) == 0) {
		if (name ? strcmp(res->gr_name, name) == 0 : res->gr_gid == gid) {
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

int user_db_user(const char *name, uid_t *uid, gid_t *gid)
{
	struct passwd pw;
	char buf[USER_DB_LINE];
	if (passwd_find(name, 0, &pw, buf, sizeof(buf)))
		return -ENOENT;
	*uid = pw.pw_uid;
	*gid = pw.pw_gid;
	return 0;
}

int user_db_group(const char *name, gid_t *gid)
{
	struct group gr;
	char buf[USER_DB_LINE];
	if (group_find(name, 0, &gr, buf, sizeof(buf)))
		return -ENOENT;
	*gid = gr.gr_gid;
	return 0;
}

bool user_db_user_name(uid_t uid, char *out, size_t len)
{
	struct passwd pw;
	char buf[USER_DB_LINE];
	return copy_name(passwd_find(NULL, uid, &pw, buf, sizeof(buf)) ? NULL : pw.pw_name, out, len);
}

bool user_db_group_name(gid_t gid, char *out, size_t len)
{
	struct group gr;
	char buf[USER_DB_LINE];
	return copy_name(group_find(NULL, gid, &gr, buf, sizeof(buf)) ? NULL : gr.gr_name, out, len);
}
#else
int user_db_user(const char *name, uid_t *uid, gid_t *gid)
{
	const struct passwd *pw = getpwnam(name);
	if (!pw)
		return -ENOENT;
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

int user_db_group(const char *name, gid_t *gid)
{
	const struct group *gr = getgrnam(name);
	if (!gr)
		return -ENOENT;
	*gid = gr->gr_gid;
	return 0;
}

bool user_db_user_name(uid_t uid, char *buf, size_t len)
{
	const struct passwd *pw = getpwuid(uid);
	return copy_name(pw ? pw->pw_name : NULL, buf, len);
}

bool user_db_group_name(gid_t gid, char *buf, size_t len)
{
	const struct group *gr = getgrgid(gid);
	return copy_name(gr ? gr->gr_name : NULL, buf, len);
}
#endif
