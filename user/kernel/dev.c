// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Device handles. A device is its network namespace and ifindex: every
 * container has an eth0, ifindexes repeat across namespaces and names
 * change, so neither alone may key any state. What runs on the device is
 * read from the kernel (kernel/bpfobj.c); what qosctl keeps on disk, a lock
 * and a transaction record per device, lives in QOS_RUN_DIR, which is
 * checked before it is trusted and used only through its directory fd.
 *
 * The lock is flock() on the device's lock file: released by the kernel
 * when its holder dies, so a killed qosctl never leaves a device locked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/dev.h"
#include "lib/file.h"
#include "lib/util.h"

int qos_run_dir_open(char *err, size_t errlen)
{
	return qos_private_dir_open(QOS_RUN_DIR, err, errlen);
}

static void file_name(const struct qos_dev *dev, const char *suffix, char *buf, size_t len)
{
	snprintf(buf, len, "%016" PRIx64 "-%d.%s", dev->netns, dev->ifindex, suffix);
}

int qos_dev_file_write(const struct qos_dev *dev, const char *suffix, const void *buf,
		       size_t len)
{
	char name[64];

	file_name(dev, suffix, name, sizeof(name));
	return qos_file_replace(dev->run_fd, name, buf, len, 0600);
}

int qos_dev_file_read(const struct qos_dev *dev, const char *suffix, void **bufp, size_t *lenp,
		      size_t max)
{
	char name[64];
	int fd, ret;

	file_name(dev, suffix, name, sizeof(name));
	fd = openat(dev->run_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = qos_file_read_fd(fd, bufp, lenp, max);
	close(fd);
	return ret;
}

int qos_dev_file_unlink(const struct qos_dev *dev, const char *suffix)
{
	char name[64];

	file_name(dev, suffix, name, sizeof(name));
	if (unlinkat(dev->run_fd, name, 0) && errno != ENOENT)
		return -errno;
	return 0;
}

int qos_dev_file_hold(const struct qos_dev *dev, const char *suffix, const void *buf,
		      size_t len)
{
	char name[64];
	int fd, ret;

	ret = qos_dev_file_write(dev, suffix, buf, len);
	if (ret)
		return ret;
	file_name(dev, suffix, name, sizeof(name));
	fd = openat(dev->run_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

int qos_dev_file_held(const struct qos_dev *dev, const char *suffix)
{
	char name[64];
	int fd, held;

	if (dev->run_fd < 0)
		return 0;
	file_name(dev, suffix, name, sizeof(name));
	fd = openat(dev->run_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	held = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return held;
}

/*
 * Files of devices of this namespace that no longer exist: their programs
 * went with them, and a new device may one day get the index.
 */
static void sweep(const struct qos_dev *dev)
{
	char prefix[24], ifname[IF_NAMESIZE];
	struct dirent *de;
	int fd;
	DIR *d;

	fd = dup(dev->run_fd);
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	snprintf(prefix, sizeof(prefix), "%016" PRIx64 "-", dev->netns);
	while ((de = readdir(d))) {
		int ifindex;

		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		ifindex = atoi(de->d_name + strlen(prefix));
		if (ifindex > 0 && !if_indextoname(ifindex, ifname))
			unlinkat(dev->run_fd, de->d_name, 0);
	}
	closedir(d);
}

static int lock_dev(struct qos_dev *dev, char *err, size_t errlen)
{
	char name[64];
	int fd, ret;

	file_name(dev, "lock", name, sizeof(name));
	for (;;) {
		struct stat held, now;

		fd = openat(dev->run_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s/%s: %s", QOS_RUN_DIR, name, strerror(errno));
			return ret;
		}
		while (flock(fd, LOCK_EX)) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			snprintf(err, errlen, "%s/%s: %s", QOS_RUN_DIR, name, strerror(errno));
			close(fd);
			return ret;
		}
		/* qos_dev_forget() unlinks the file under the lock: a waiter
		 * that got the lock on the unlinked file starts again. */
		if (!fstat(fd, &held) &&
		    !fstatat(dev->run_fd, name, &now, AT_SYMLINK_NOFOLLOW) &&
		    held.st_ino == now.st_ino && held.st_dev == now.st_dev) {
			dev->lock_fd = fd;
			dev->locked_ns = qos_boottime_ns();
			return 0;
		}
		close(fd);
	}
}

int qos_dev_relock(struct qos_dev *dev, char *err, size_t errlen)
{
	return dev->lock_fd >= 0 ? 0 : lock_dev(dev, err, errlen);
}

void qos_dev_forget(struct qos_dev *dev)
{
	struct stat held, now;
	char name[64];

	/* Only the file this process locked: once unlinked, the name may
	 * already be another process's new lock file, and unlinking that
	 * would let a third process lock a third file beside it. */
	if (dev->lock_fd < 0 || fstat(dev->lock_fd, &held))
		return;
	file_name(dev, "lock", name, sizeof(name));
	if (!fstatat(dev->run_fd, name, &now, AT_SYMLINK_NOFOLLOW) &&
	    held.st_ino == now.st_ino && held.st_dev == now.st_dev)
		unlinkat(dev->run_fd, name, 0);
}

void qos_dev_unlock(struct qos_dev *dev)
{
	qos_dev_forget(dev);
	if (dev->lock_fd >= 0)
		close(dev->lock_fd);
	dev->lock_fd = -1;
}

int qos_dev_reload(struct qos_dev *dev, char *err, size_t errlen)
{
	char what[160];
	int ret, tries;

	qos_progs_close(&dev->cur);
	dev->applied = dev->have_cfg = false;
	for (tries = 0; tries < 5; tries++) {
		ret = qos_progs_find(dev->ifindex, &dev->cur, what, sizeof(what));
		if (ret != -EAGAIN)
			break;
	}
	if (ret == -ENOENT)
		return 0;
	if (ret == -EPROTO) {
		snprintf(err, errlen,
			 "dev %s: %s; 'qosctl remove --force dev %s' removes what qosctl owns",
			 dev->name, what, dev->name);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "dev %s: reading tc filters: %s", dev->name, strerror(-ret));
		return ret;
	}
	dev->applied = true;
	ret = qos_cfg_get(&dev->cur, &dev->cfg);
	if (ret == -ENOENT)
		return 0;	/* loaded, never configured: an apply that died */
	if (ret) {
		snprintf(err, errlen, "dev %s: reading the configuration: %s", dev->name,
			 strerror(-ret));
		return ret;
	}
	dev->have_cfg = dev->cfg.meta.version == QOS_META_VERSION;
	return 0;
}

int qos_dev_open(struct qos_dev *dev, const char *name, unsigned int flags, char *err,
		 size_t errlen)
{
	int ret;

	memset(dev, 0, sizeof(*dev));
	dev->run_fd = dev->lock_fd = -1;
	qos_progs_init(&dev->cur);
	ret = qos_check_env(err, errlen);
	if (ret)
		return ret;
	if (strlen(name) >= IF_NAMESIZE || !(dev->ifindex = if_nametoindex(name))) {
		snprintf(err, errlen, "dev %s: no such device", name);
		return -ENODEV;
	}
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	ret = qos_netns_cookie(&dev->netns);
	if (ret) {
		snprintf(err, errlen, "network namespace cookie: %s", strerror(-ret));
		return ret;
	}
	if (flags & QOS_DEV_LOCK) {
		dev->run_fd = qos_run_dir_open(err, errlen);
		if (dev->run_fd < 0) {
			ret = dev->run_fd;
			dev->run_fd = -1;
			return ret;
		}
		ret = lock_dev(dev, err, errlen);
		if (ret)
			goto fail;
		/* The name may have moved to another device while we waited. */
		if (if_nametoindex(name) != (unsigned int)dev->ifindex) {
			snprintf(err, errlen, "dev %s: changed while waiting for its lock", name);
			ret = -ENODEV;
			goto fail;
		}
		sweep(dev);
	} else {
		char ignored[256];

		/* Read-only commands read a pending record if there is a
		 * trustworthy one, and work without. */
		dev->run_fd = qos_run_dir_open(ignored, sizeof(ignored));
		if (dev->run_fd < 0)
			dev->run_fd = -1;
	}
	ret = qos_dev_reload(dev, err, errlen);
	if (ret && !(ret == -EPROTO && (flags & QOS_DEV_BROKEN)))
		goto fail;
	/* A change the programs read may have to wait for a grace period
	 * (design.rst, "Two slots"): begun now, it runs while the change is
	 * planned and built. */
	if (dev->lock_fd >= 0 && dev->applied)
		qos_cfg_prepare(&dev->cur, dev->locked_ns);
	return 0;
fail:
	qos_dev_close(dev);
	return ret;
}

void qos_dev_close(struct qos_dev *dev)
{
	qos_progs_close(&dev->cur);
	if (dev->lock_fd >= 0)
		close(dev->lock_fd);
	if (dev->run_fd >= 0)
		close(dev->run_fd);
	dev->lock_fd = dev->run_fd = -1;
}
