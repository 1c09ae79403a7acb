// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Confirmed apply. Before the apply, the state it replaces is read from
 * the pinned maps: qos_meta (the tree as built) and qos_cfg (what the
 * programs read), and the running programs are opened by id so that they
 * outlive their detachment. After the apply a forked process holds that
 * snapshot, sleeps until the deadline, then takes the interface lock and,
 * if QOS_RUN_DIR/IFACE.pending still names it, puts the old state back the
 * way a failed apply would: old tree in place, old configuration, old
 * programs re-attached, classes the new profile added pruned, old meta.
 * With nothing applied before, the rollback is `qosctl remove`.
 *
 * `qosctl confirm`, a later apply or a remove unlink the pending file
 * under the lock and wake the process, which then finds itself cancelled.
 * Deciding under the lock means a confirm racing the deadline either
 * lands before the rollback (kept) or after it (and reports nothing
 * pending).
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "confirm.h"
#include "loader.h"
#include "lock.h"
#include "qdisc.h"

int qos_confirm_pending(const char *ifname, pid_t *pid, long long *deadline)
{
	char path[128];
	long long p, d;
	FILE *f;
	int n;

	if (qos_run_path(ifname, "pending", path, sizeof(path)))
		return 0;
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fscanf(f, "%lld %lld", &p, &d);
	fclose(f);
	/* A keeper that was killed leaves its file: nothing is pending. */
	if (n != 2 || p <= 0 || (kill((pid_t)p, 0) && errno == ESRCH)) {
		unlink(path);
		return 0;
	}
	*pid = (pid_t)p;
	*deadline = d;
	return 1;
}

int qos_confirm_cancel(const char *ifname)
{
	long long deadline;
	char path[128];
	pid_t pid;

	if (!qos_confirm_pending(ifname, &pid, &deadline))
		return 0;
	qos_run_path(ifname, "pending", path, sizeof(path));
	unlink(path);
	kill(pid, SIGUSR1);
	return 1;
}

int qos_confirm_prepare(const char *ifname, struct qos_confirm *c, char *err, size_t errlen)
{
	long long deadline;
	struct qos_maps m;
	pid_t pid;
	int d;

	memset(c, 0, sizeof(*c));
	for (d = 0; d < QOS_DIR_MAX; d++)
		c->prog_fd[d] = -1;
	if (qos_confirm_pending(ifname, &pid, &deadline)) {
		snprintf(err, errlen,
			 "dev %s: an apply is waiting for confirmation (qosctl confirm dev %s)",
			 ifname, ifname);
		return -EBUSY;
	}
	if (qos_maps_open(ifname, &m))
		return 0;
	c->have_old = !qos_meta_read(m.meta, &c->old) && !qos_cfg_read(m.cfg, &c->old_cfg) &&
		      c->old.version == QOS_META_VERSION &&
		      !(c->old.flags & QOS_META_F_PENDING) &&
		      c->old.ifindex == if_nametoindex(ifname);
	qos_maps_close(&m);
	for (d = 0; c->have_old && d < QOS_DIR_MAX; d++) {
		c->prog_fd[d] = qos_prog_fd_by_id(c->old.prog_id[d]);
		if (c->prog_fd[d] < 0) {
			snprintf(err, errlen, "dev %s: cannot hold the running program %u: %s",
				 ifname, c->old.prog_id[d], strerror(-c->prog_fd[d]));
			qos_confirm_release(c);
			return -ENOENT;
		}
	}
	return 0;
}

void qos_confirm_release(struct qos_confirm *c)
{
	int d;

	for (d = 0; d < QOS_DIR_MAX; d++) {
		if (c->prog_fd[d] >= 0)
			close(c->prog_fd[d]);
		c->prog_fd[d] = -1;
	}
}

static int restore(const char *ifname, const struct qos_confirm *c, char *err, size_t errlen)
{
	struct nl_sock *sk = NULL;
	struct qos_meta cur;
	struct qos_maps m;
	bool fresh;
	int ifindex, d, ret;

	if (!c->have_old)
		return qos_remove(ifname, err, errlen);

	ifindex = if_nametoindex(ifname);
	if (!ifindex || (uint32_t)ifindex != c->old.ifindex) {
		snprintf(err, errlen, "dev %s: gone", ifname);
		return -ENODEV;
	}
	ret = qos_maps_open(ifname, &m);
	if (ret) {
		snprintf(err, errlen, "dev %s: state gone: %s", ifname, strerror(-ret));
		return ret;
	}
	ret = qos_meta_read(m.meta, &cur);
	ret = ret ?: qos_nl_open(&sk);
	if (ret)
		goto out;
	fresh = cur.sched != c->old.sched || cur.qdisc_handle != c->old.qdisc_handle ||
		cur.default_class != c->old.default_class;
	ret = qos_tree_sync(sk, ifindex, &c->old, fresh);
	ret = ret ?: qos_cfg_write(m.cfg, &c->old_cfg);
	for (d = 0; !ret && d < QOS_DIR_MAX; d++)
		ret = qos_attach_fd(ifindex, d, c->prog_fd[d]);
	if (!ret && !fresh)
		ret = qos_tree_prune(sk, ifindex, &c->old, &cur);
	ret = ret ?: qos_meta_write(m.meta, &c->old);
out:
	if (ret)
		snprintf(err, errlen, "dev %s: restoring profile %s: %s", ifname, c->old.profile,
			 strerror(-ret));
	qos_nl_close(sk);
	qos_maps_close(&m);
	return ret;
}

static void keeper(const char *ifname, const struct qos_confirm *c, unsigned int secs)
{
	struct timespec now, end, left;
	long long deadline;
	char err[512];
	sigset_t set;
	pid_t pid;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += secs;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = end.tv_sec - now.tv_sec;
		left.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_sec--;
			left.tv_nsec += 1000000000L;
		}
		if (left.tv_sec < 0)
			break;
		/* Woken early: cancelled, unless the signal came from elsewhere. */
		if (sigtimedwait(&set, NULL, &left) == SIGUSR1 &&
		    !qos_confirm_pending(ifname, &pid, &deadline))
			_exit(0);
	}

	fd = qos_lock_dev(ifname, err, sizeof(err));
	if (fd < 0) {
		syslog(LOG_ERR, "dev %s: rollback: %s", ifname, err);
		_exit(1);
	}
	if (!qos_confirm_pending(ifname, &pid, &deadline) || pid != getpid())
		_exit(0);
	if (restore(ifname, c, err, sizeof(err)))
		syslog(LOG_ERR, "dev %s: not confirmed in %us, rollback failed: %s", ifname,
		       secs, err);
	else
		syslog(LOG_WARNING, "dev %s: not confirmed in %us: rolled back to %s", ifname,
		       secs, c->have_old ? c->old.profile : "no profile");
	qos_run_path(ifname, "pending", err, sizeof(err));
	unlink(err);
	_exit(0);
}

int qos_confirm_arm(const char *ifname, struct qos_confirm *c, unsigned int secs,
		    int lock_fd, char *err, size_t errlen)
{
	sigset_t set, oldset;
	char path[128], tmp[160];
	FILE *f;
	pid_t pid;
	int ret;

	ret = qos_run_path(ifname, "pending", path, sizeof(path));
	if (ret)
		return ret;
	/* Blocked before the fork so that a confirm cannot hit the keeper
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

		/* The parent's lock must go with the parent. */
		close(lock_fd);
		setsid();
		if (null >= 0) {
			dup2(null, STDIN_FILENO);
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
		openlog("qosctl", LOG_PID, LOG_DAEMON);
		keeper(ifname, c, secs);
	}
	sigprocmask(SIG_SETMASK, &oldset, NULL);

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f) {
		fprintf(f, "%d %lld\n", (int)pid, (long long)time(NULL) + secs);
		if (fclose(f) == 0 && rename(tmp, path) == 0)
			return 0;
	}
	ret = -errno;
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	kill(pid, SIGKILL);
	unlink(tmp);
	return ret;
}
