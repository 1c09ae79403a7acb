// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Files written whole and read whole, through a directory fd and never
 * through a symlink, and the cookie of this network namespace: what the
 * device's state (kernel/dev.c) and the probes' published state
 * (probe/sla_state.c) both keep on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
