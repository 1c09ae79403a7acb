// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Capabilities are cleared with the capset system call itself: no
 * libcap for three words of zeros. setresuid() from root to another user
 * clears the permitted and effective sets already; capset() and the
 * ambient clear cover a process started unprivileged with capabilities
 * (systemd's AmbientCapabilities=).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/capability.h>

#include "lib/privs.h"

static int become(const char *user, char *err, size_t errlen)
{
	struct passwd *pw;

	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		snprintf(err, errlen, "user '%s': %s", user, errno ? strerror(errno) : "no such user");
		return errno ? -errno : -ENOENT;
	}
	if (!pw->pw_uid || !pw->pw_gid) {
		snprintf(err, errlen, "user '%s': is root (uid or gid 0)", user);
		return -EINVAL;
	}
	if (setgroups(0, NULL) || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid)) {
		snprintf(err, errlen, "user '%s': %s", user, strerror(errno));
		return -errno;
	}
	/* Irrevocable, or not done. */
	if (!setuid(0) || !seteuid(0)) {
		snprintf(err, errlen, "user '%s': root could be taken back", user);
		return -EPERM;
	}
	return 0;
}

int qos_drop_privs(const char *user, char *err, size_t errlen)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};
	int r;

	if (!geteuid() || !getuid()) {
		r = become(user, err, errlen);
		if (r)
			return r;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) ||
	    syscall(SYS_capset, &h, d) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		snprintf(err, errlen, "dropping capabilities: %s", strerror(errno));
		return -errno;
	}
	return 0;
}
