/* Jail: least privilege once the VM is built — inherited fds closed, a private root, an unprivileged uid/gid. */
#ifndef MSIVM_VMM_JAIL_H
#define MSIVM_VMM_JAIL_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/error.h"

#define JAIL_MAX_INHERITED 256

struct jail_config {
	const char *root;       /* --chroot DIR: new mount namespace, DIR becomes "/" (NULL: none) */
	bool drop_user;         /* --user given */
	uid_t uid;
	gid_t gid;
	int inherited[JAIL_MAX_INHERITED]; /* fds above 2 open when msivm started */
	int ninherited;
};

/* Parses --user "NAME", "UID", "NAME:GROUP" or "UID:GID" (a bare user takes
 * that user's primary group). Returns 0 or -EINVAL with a message. */
int jail_parse_user(const char *spec, struct jail_config *j, struct error *err);

/* Records the descriptors above 2 that msivm inherited (call first thing,
 * before msivm opens anything). */
void jail_note_inherited(struct jail_config *j);

/* Once every file, device and socket of the VM is open: closes the
 * inherited descriptors (msivm opened its own by path), enters a new mount
 * namespace whose root is j->root (pivot_root, the old root detached), drops
 * to j->uid/j->gid with no supplementary groups and checks that root cannot
 * be regained, and sets PR_SET_NO_NEW_PRIVS. Each step only if asked, except
 * closing and no-new-privs, which always happen. Returns 0 or -errno with a
 * message naming the step. */
int jail_enter(const struct jail_config *j, struct error *err);

/* True if jail_enter takes away what rebuilding the VM (a guest reboot)
 * needs: the paths and permissions of /dev/kvm, images and taps. */
bool jail_confines(const struct jail_config *j);

#endif
