// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `apply --confirm SECONDS`, Juniper's "commit confirmed". The state the
 * apply replaced stays in the device's record (QOS_REC_CONFIRM) with the
 * deadline, and a forked keeper holding the programs that ran before
 * sleeps until then, takes the device's lock and, if the record is still
 * its own, rolls back through the installer. If the keeper dies, the
 * record still says what to do: the next qosctl command on the device
 * (show included) finds the deadline passed and the keeper gone, and rolls
 * back itself. The keeper is known by its pid and start time, and signalled
 * through a pidfd opened before its start time is checked, so a reused pid
 * is never signalled.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"
#include "txn/install.h"
#include "txn/record.h"
#include "txn/txn.h"

void qos_confirm_release_keeper(pid_t pid, uint64_t start)
{
	int fd;

	if (pid <= 0)
		return;
	fd = pidfd_open(pid, 0);
	if (fd < 0)
		return;
	if (qos_proc_start(pid) == start)
		pidfd_send_signal(fd, SIGUSR1, NULL, 0);
	close(fd);
}

/* Wait for the deadline; false if told early that the record is gone. */
static bool wait_deadline(const struct qos_dev *dev, uint64_t deadline)
{
	struct qos_rec rec;
	struct timespec left;
	sigset_t set;
	uint64_t now;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while ((now = qos_boottime_ns()) < deadline) {
		left.tv_sec = (deadline - now) / 1000000000ULL;
		left.tv_nsec = (deadline - now) % 1000000000ULL;
		if (sigtimedwait(&set, NULL, &left) != SIGUSR1)
			continue;
		if (qos_rec_read(dev, &rec))
			return false;
		if (rec.state != QOS_REC_CONFIRM || rec.keeper != getpid()) {
			qos_rec_free(&rec);
			return false;
		}
		qos_rec_free(&rec);
	}
	return true;
}

static void keeper(struct qos_dev *dev, struct qos_undo *undo, uint64_t deadline)
{
	struct qos_plan cur;
	struct qos_rec rec;
	char err[512];
	int ret;

	if (!wait_deadline(dev, deadline))
		_exit(0);
	ret = qos_dev_relock(dev, err, sizeof(err));
	if (ret) {
		syslog(LOG_ERR, "dev %s: rollback: %s", dev->name, err);
		_exit(1);
	}
	if (qos_rec_read(dev, &rec))
		_exit(0);
	if (rec.state != QOS_REC_CONFIRM || rec.keeper != getpid())
		_exit(0);
	ret = qos_dev_reload(dev, err, sizeof(err));
	ret = ret ?: qos_plan_current(dev, &cur, err, sizeof(err));
	ret = ret ?: qos_install(dev, &undo->prev, &cur, &undo->held, NULL, err, sizeof(err));
	if (ret) {
		syslog(LOG_ERR, "dev %s: not confirmed in time, rollback failed: %s", dev->name,
		       err);
		_exit(1);
	}
	/* No record left: no file either, whatever was applied before. */
	qos_rec_remove(dev);
	qos_dev_forget(dev);
	syslog(LOG_WARNING, "dev %s: not confirmed in time: rolled back to %s", dev->name,
	       undo->prev.empty ? "no profile" : undo->prev.cfg.meta.profile);
	_exit(0);
}

int qos_confirm_arm(struct qos_dev *dev, struct qos_undo *undo, const struct qos_plan *next,
		    unsigned int secs, char *err, size_t errlen)
{
	struct qos_rec rec = {
		.state = QOS_REC_CONFIRM,
		.deadline_ns = qos_boottime_ns() + secs * 1000000000ULL,
		.prev = undo->prev,
		.next = *next,
	};
	sigset_t set, oldset;
	pid_t pid;
	int ret;

	/* Blocked before the fork so that a confirm cannot reach the keeper
	 * before it waits for it. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &oldset);
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		sigprocmask(SIG_SETMASK, &oldset, NULL);
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return ret;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		/* The parent's lock goes with the parent. */
		close(dev->lock_fd);
		dev->lock_fd = -1;
		setsid();
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
		openlog("qosctl", LOG_PID, LOG_DAEMON);
		keeper(dev, undo, rec.deadline_ns);
	}
	sigprocmask(SIG_SETMASK, &oldset, NULL);
	rec.keeper = pid;
	rec.keeper_start = qos_proc_start(pid);
	ret = qos_rec_write(dev, &rec);
	if (ret) {
		snprintf(err, errlen, "%s: writing the transaction record: %s", QOS_RUN_DIR,
			 strerror(-ret));
		kill(pid, SIGKILL);
		return ret;
	}
	return 0;
}
