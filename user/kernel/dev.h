/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A device handle: the interface as (network namespace, ifindex), the one
 * lock every command that changes it takes, and every fd of what qosctl
 * runs on it, opened once. See Documentation/design.rst, "Device state",
 * and Documentation/reliability.rst for the threat model.
 */
#ifndef __QOS_KERNEL_DEV_H
#define __QOS_KERNEL_DEV_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/bpfobj.h"

/* qosctl's own files: locks and transaction records, root-only. */
#define QOS_RUN_DIR	"/run/qosctl"

struct qos_dev {
	char name[IF_NAMESIZE];
	int ifindex;
	uint64_t netns;			/* cookie of the network namespace */
	int run_fd;			/* QOS_RUN_DIR, checked */
	int lock_fd;			/* held while the device may change */
	uint64_t locked_ns;		/* when it was taken, CLOCK_BOOTTIME */
	bool applied;			/* a pair of qosctl programs runs on it */
	bool recovered;			/* opening it rolled back an unfinished change */
	struct qos_progs cur;		/* those programs and their maps */
	bool have_cfg;
	struct qos_cfg cfg;		/* their configuration */
};

#define QOS_DEV_LOCK	(1U << 0)	/* take the device's lock (mutating commands) */
#define QOS_DEV_BROKEN	(1U << 1)	/* open even if qosctl's slot holds something broken */

/*
 * Resolve @name in this network namespace, take the lock with
 * QOS_DEV_LOCK, and find what qosctl runs on it. Errors name the device
 * and, for foreign or broken state, the command that clears it.
 */
int qos_dev_open(struct qos_dev *dev, const char *name, unsigned int flags, char *err,
		 size_t errlen);
/* Find what runs again, after a change. */
int qos_dev_reload(struct qos_dev *dev, char *err, size_t errlen);
void qos_dev_close(struct qos_dev *dev);

/*
 * Open QOS_RUN_DIR, creating it root-owned 0700 if missing, and refuse it
 * if it is a symlink, not a directory, not owned by us, or writable by
 * group or others. Returns the directory fd.
 */
int qos_run_dir_open(char *err, size_t errlen);

/*
 * The device's files in QOS_RUN_DIR, "<netns>-<ifindex>.<suffix>", reached
 * only through the directory fd and never through a symlink. write
 * replaces the file atomically; read returns a malloc()ed buffer.
 */
int qos_dev_file_write(const struct qos_dev *dev, const char *suffix, const void *buf,
		       size_t len);
/* At most @max bytes: -EFBIG for a larger file. */
int qos_dev_file_read(const struct qos_dev *dev, const char *suffix, void **buf, size_t *len,
		      size_t max);
int qos_dev_file_unlink(const struct qos_dev *dev, const char *suffix);
/*
 * Write the device's file @suffix and hold an flock() on it for as long as
 * the returned fd is open: a process's presence that ends with it.
 * qos_dev_file_held() says whether another process holds one (1) or not.
 */
int qos_dev_file_hold(const struct qos_dev *dev, const char *suffix, const void *buf,
		      size_t len);
int qos_dev_file_held(const struct qos_dev *dev, const char *suffix);

/* Take the device's lock again (a process that inherited the handle). */
int qos_dev_relock(struct qos_dev *dev, char *err, size_t errlen);
/* Remove the device's lock file; with the lock held (remove). */
void qos_dev_forget(struct qos_dev *dev);
/* Remove it and release the lock, as a command does when it ends, for a
 * long-running process that takes it again later (qosctl balance). */
void qos_dev_unlock(struct qos_dev *dev);

#endif /* __QOS_KERNEL_DEV_H */
