// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One qosctl at a time per interface. apply, remove, confirm and the
 * rollback of an unconfirmed apply all read the state in the pinned maps,
 * change the kernel and write the state back: two of them interleaved
 * would each undo half of the other. flock() is released by the kernel
 * when the holder dies, so a killed qosctl never leaves the interface
 * locked.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lock.h"

int qos_run_path(const char *ifname, const char *suffix, char *buf, size_t len)
{
	/* Interface names never hold '/', but this one becomes a path. */
	if (!*ifname || strlen(ifname) >= IF_NAMESIZE || strchr(ifname, '/') ||
	    !strcmp(ifname, ".") || !strcmp(ifname, ".."))
		return -EINVAL;
	if ((size_t)snprintf(buf, len, "%s/%s.%s", QOS_RUN_DIR, ifname, suffix) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int qos_lock_dev(const char *ifname, char *err, size_t errlen)
{
	char path[128];
	int fd, ret;

	ret = qos_run_path(ifname, "lock", path, sizeof(path));
	if (ret) {
		snprintf(err, errlen, "dev %s: not an interface name", ifname);
		return ret;
	}
	if (mkdir(QOS_RUN_DIR, 0755) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", QOS_RUN_DIR, strerror(errno));
		return ret;
	}
	for (;;) {
		struct stat held, now;

		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (fd < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return ret;
		}
		while (flock(fd, LOCK_EX)) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
			return ret;
		}
		/* qos_unlock_dev_remove() unlinks the file under the lock: a
		 * waiter that got the lock on the unlinked file starts again
		 * on the file now at @path. */
		if (!fstat(fd, &held) && !stat(path, &now) && held.st_ino == now.st_ino &&
		    held.st_dev == now.st_dev)
			return fd;
		close(fd);
	}
}

void qos_unlock_dev(int fd)
{
	if (fd >= 0)
		close(fd);
}

void qos_unlock_dev_remove(int fd, const char *ifname)
{
	char path[128];

	if (fd >= 0 && !qos_run_path(ifname, "lock", path, sizeof(path)))
		unlink(path);
	qos_unlock_dev(fd);
}
