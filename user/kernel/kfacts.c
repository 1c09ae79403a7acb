// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The record of the qdisc probe (Documentation/design.rst, "Kernel facts").
 * A probe runs in a child in a throw-away network namespace, a few
 * milliseconds of an apply that otherwise takes not many more; what it
 * finds changes only with the kernel. The record is one text line whose
 * key names that kernel: its release, the boot (a reboot may load another
 * build of the same release), the module dependency file (modules
 * installed since add qdiscs) and the kinds probed. A record whose key is
 * not this line exactly is ignored and probed again.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/capability.h>

#include "kernel/dev.h"
#include "kernel/kfacts.h"
#include "lib/file.h"

#define BOOT_ID "/proc/sys/kernel/random/boot_id"

/* The key of this kernel's record, "v1 release=R boot=B modules=M
 * kinds=K ". -errno when a part cannot be read. */
static int kfacts_key(const char *kinds, char *key, size_t len)
{
	char boot[64] = "", dep[512];
	struct utsname u;
	struct stat st;
	FILE *f;
	int n;

	if (uname(&u))
		return -errno;
	f = fopen(BOOT_ID, "re");
	if (!f)
		return -errno;
	if (!fgets(boot, sizeof(boot), f))
		boot[0] = 0;
	fclose(f);
	boot[strcspn(boot, "\n")] = 0;
	if (!boot[0])
		return -EIO;
	snprintf(dep, sizeof(dep), "/lib/modules/%s/modules.dep", u.release);
	if (stat(dep, &st))
		memset(&st, 0, sizeof(st));
	n = snprintf(key, len, "v1 release=%s boot=%s modules=%lld.%09ld:%lld kinds=%s ",
		     u.release, boot, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		     (long long)st.st_size, kinds);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The record's fd if it is one we can trust: a regular file (never
 * through a symlink) owned by us, one link, writable by no one else. */
static int kfacts_open(int dirfd)
{
	struct stat st;
	int fd;

	fd = openat(dirfd, QOS_KFACTS_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || st.st_nlink != 1) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* The probe needs CAP_SYS_ADMIN for its namespace, and so does much of
 * an apply after it (reading programs by id): a process without it is
 * left to the probe, which fails first and says why, as it always did. */
static bool may_probe(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {};

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN);
}

int qos_kfacts_read(const char *kinds, uint32_t *bits)
{
	char key[1024], err[256], *end;
	int dirfd, fd, ret;
	unsigned long v;
	size_t len = 0;
	void *buf = NULL;

	if (!may_probe())
		return -EPERM;
	ret = kfacts_key(kinds, key, sizeof(key));
	if (ret)
		return ret;
	dirfd = qos_run_dir_open(err, sizeof(err));
	if (dirfd < 0)
		return dirfd;
	fd = kfacts_open(dirfd);
	close(dirfd);
	if (fd < 0)
		return fd;
	ret = qos_file_read_fd(fd, &buf, &len, sizeof(key) + 16);
	close(fd);
	if (ret)
		return ret;
	ret = -ESTALE;
	if (len > strlen(key) && !strncmp(buf, key, strlen(key))) {
		errno = 0;
		v = strtoul((char *)buf + strlen(key), &end, 16);
		if (!errno && *end == '\n' && end[1] == 0 && v <= UINT32_MAX) {
			*bits = v;
			ret = 0;
		}
	}
	free(buf);
	return ret;
}

int qos_kfacts_write(const char *kinds, uint32_t bits)
{
	char key[1024], line[1040], err[256];
	int dirfd, ret, n;

	ret = kfacts_key(kinds, key, sizeof(key));
	if (ret)
		return ret;
	n = snprintf(line, sizeof(line), "%s%" PRIx32 "\n", key, bits);
	if (n < 0 || (size_t)n >= sizeof(line))
		return -ENAMETOOLONG;
	dirfd = qos_run_dir_open(err, sizeof(err));
	if (dirfd < 0)
		return dirfd;
	ret = qos_file_replace(dirfd, QOS_KFACTS_FILE, line, n, 0600);
	close(dirfd);
	return ret;
}
