// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Files written whole and read whole, through a directory fd and never
 * through a symlink, and the cookie of this network namespace: what the
 * device's state (kernel/dev.c), the probes' published state
 * (probe/sla_state.c) and the agent's desired state (domain/agent.c) keep
 * on disk, and the one check of the directories that hold them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/file.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE	71
#endif

int qos_netns_cookie(uint64_t *cookie)
{
	socklen_t len = sizeof(*cookie);
	int fd, ret = 0;

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len))
		ret = -errno;
	close(fd);
	return ret;
}

int qos_private_dir_open(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd, tries;

	for (tries = 0; tries < 2; tries++) {
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			break;
		if (mkdir(path, 0700) && errno != EEXIST) {
			snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
			return -errno;
		}
	}
	if (fd < 0) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", path,
			 e == ELOOP || e == ENOTDIR ? "is a symlink or not a directory: refused "
						      "(remove it; qosctl recreates it)" :
						      strerror(e));
		return -e;
	}
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -errno;
	}
	/* Ours but readable by others (an older qosctl made /run/qosctl
	 * 0755): the names in it say what is managed; close it. */
	if (st.st_uid == geteuid() && !(st.st_mode & 022) && (st.st_mode & 077) &&
	    !fchmod(fd, 0700))
		st.st_mode &= ~077;
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(err, errlen,
			 "%s: owned by uid %u with mode %04o: refused, it must be owned by uid %u "
			 "and writable by no one else (remove it; qosctl recreates it 0700)",
			 path, st.st_uid, st.st_mode & 07777, geteuid());
		close(fd);
		return -EPERM;
	}
	return fd;
}

int qos_file_replace(int dirfd, const char *name, const void *buf, size_t len, mode_t mode)
{
	char tmp[NAME_MAX + 1];
	const char *p = buf;
	int fd, ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	while (len && !ret) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			ret = n < 0 ? -errno : -EIO;
		else {
			p += n;
			len -= n;
		}
	}
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && renameat(dirfd, tmp, dirfd, name))
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	return ret;
}

int qos_file_read_fd(int fd, void **bufp, size_t *lenp, size_t max)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int ret = 0;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uintmax_t)st.st_size > max)
		return -EFBIG;
	buf = malloc(st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			break;
		}
		got += n;
	}
	if (ret) {
		free(buf);
		return ret;
	}
	buf[got] = '\0';
	*bufp = buf;
	*lenp = got;
	return 0;
}
