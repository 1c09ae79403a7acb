/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where profiles are found (model/profile_path.c): the profile
 * directories in search order, a name looked up in them, and every
 * profile they hold.
 */
#ifndef __QOS_MODEL_PROFILE_PATH_H
#define __QOS_MODEL_PROFILE_PATH_H

#include <limits.h>
#include <stddef.h>

/*
 * The source tree's tc-profiles/, defined (user/intree.c) only in the
 * in-tree qosctl; NULL in the installed one, which must not look into a
 * build tree.
 */
extern const char qos_tree_profile_dir[] __attribute__((weak));

/*
 * The profile directories, in search order: each of $QOSCTL_PROFILE_DIR
 * (a list separated by ':'), SYSCONFDIR/qosctl/profiles, then the built-in
 * (DATADIR/tc-profiles, fixed by `make install`), and in the in-tree
 * qosctl the source tree's tc-profiles/. @fn gets each with where it came
 * from ("QOSCTL_PROFILE_DIR", "local", "built-in"); a
 * non-zero return ends the walk and is returned.
 */
int qos_profile_dirs(int (*fn)(const char *dir, const char *origin, void *arg), void *arg);

/* Find a profile: a path if @name contains '/', else NAME in the first
 * profile directory that has it. */
int qos_profile_find(const char *name, char *path, size_t len);

/* A profile found in a profile directory. */
struct qos_profile_entry {
	char name[NAME_MAX + 1];
	int dir;		/* index into qos_profile_scan.dir */
	int hidden_by;		/* index of the profile found first, or -1 */
};

#define QOS_PROFILE_DIRS 16

/* Every profile directory, in search order, and the profiles in each. */
struct qos_profile_scan {
	struct {
		char path[PATH_MAX];
		const char *origin;
		int err;	/* errno of opening it, 0 */
	} dir[QOS_PROFILE_DIRS];
	int ndirs;
	struct qos_profile_entry *p;
	size_t n;
};

int qos_profiles_scan(struct qos_profile_scan *ps);
void qos_profiles_free(struct qos_profile_scan *ps);
/* Its description in @buf; NULL if it does not load (@buf: why). */
const char *qos_profile_desc(const struct qos_profile_scan *ps,
			     const struct qos_profile_entry *pr, char *buf, size_t len);

#endif /* __QOS_MODEL_PROFILE_PATH_H */
