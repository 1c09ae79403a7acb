// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * qosctl balance (kernel/balance.h): sample, share, change, each period.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/class.h>
#include <netlink/route/qdisc/htb.h>

#include "kernel/balance.h"
#include "kernel/nl.h"
#include "kernel/sched.h"
#include "lib/util.h"
#include "model/linklayer.h"

volatile sig_atomic_t qos_balance_stop;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static bool balanceable(const struct qos_dev *dev)
{
	return dev->applied && dev->have_cfg && dev->cfg.meta.sched == QOS_SCHED_HTB &&
	       qos_meta_queues(&dev->cfg.meta) > 1;
}

static uint32_t bal_classid(const struct qos_meta *m, unsigned int q, unsigned int i)
{
	if (i == m->nclasses)
		return qos_queue_handle(m, q) | QOS_PARENT_MINOR;
	return qos_queue_class(m, &m->classes[i], q).classid;
}

/* Every class of every queue's tree, from one dump of the device's. */
static int sample(struct qos_balancer *b, struct qos_bal_sample *s)
{
	const struct qos_meta *m = &b->meta;
	unsigned int q, i, nq = qos_meta_queues(m);
	struct nl_cache *cache;
	int err;

	err = rtnl_class_alloc_cache(b->sk, b->dev->ifindex, &cache);
	if (err)
		return qos_nl_errno(err);
	s->t_ns = mono_ns();
	for (q = 0; q < nq; q++) {
		for (i = 0; i <= m->nclasses; i++) {
			struct rtnl_class *cl = rtnl_class_get(cache, b->dev->ifindex,
							       bal_classid(m, q, i));
			struct qos_bal_cls *c = &s->c[q][i];

			memset(c, 0, sizeof(*c));
			if (!cl)
				continue;
			qos_tc_stats(TC_CAST(cl), &c->st);
			rtnl_htb_get_rate64(cl, &c->rate_Bps);
			rtnl_htb_get_ceil64(cl, &c->ceil_Bps);
			c->present = true;
			rtnl_class_put(cl);
		}
	}
	nl_cache_free(cache);
	return 0;
}

/* What each class of each queue sent from @a to @z, and whether it was
 * held back: a queue at the sample, or drops or overlimits between. */
static void demands(const struct qos_balancer *b, const struct qos_bal_sample *a,
		    const struct qos_bal_sample *z, qos_bal_demands_t d)
{
	uint64_t dt = z->t_ns > a->t_ns ? z->t_ns - a->t_ns : 1;
	unsigned int q, i, nq = qos_meta_queues(&b->meta);

	memset(d, 0, sizeof(qos_bal_demands_t));
	for (q = 0; q < nq; q++) {
		for (i = 0; i < b->meta.nclasses; i++) {
			const struct qos_class_stats *x = &a->c[q][i].st, *y = &z->c[q][i].st;
			uint64_t bytes = y->bytes > x->bytes ? y->bytes - x->bytes : 0;

			d[q][i].bps = (uint64_t)((double)bytes * 8e9 / dt);
			d[q][i].busy = y->backlog_bytes || y->drops > x->drops ||
				       y->overlimits > x->overlimits;
		}
	}
}

/* Rate and ceil of class @i of queue @q in @sh, as HTB holds them. */
static void want_Bps(const struct qos_meta *m, const struct qos_bal_share *sh, unsigned int q,
		     unsigned int i, uint64_t *rate, uint64_t *ceil)
{
	*rate = sh->q[q].link_bps;
	*ceil = sh->q[q].link_bps;
	if (i < m->nclasses) {
		*rate = sh->q[q].rate_bps[i];
		*ceil = sh->q[q].ceil_bps[i];
	}
	*rate = qos_ll_rate(m, *rate) / 8;
	*ceil = qos_ll_rate(m, *ceil) / 8;
}

/*
 * Change what differs from @s, in two passes so that no sum is exceeded
 * in between: first the classes whose rate goes down (or stays while the
 * ceiling does), leaves before their link class, then the rest, link
 * classes first.
 */
static int apply_share(struct qos_balancer *b, const struct qos_bal_sample *s,
		       const struct qos_bal_share *sh)
{
	const struct qos_meta *m = &b->meta;
	unsigned int pass, q, k, nq = qos_meta_queues(m), nc = m->nclasses;
	int err;

	for (pass = 0; pass < 2; pass++) {
		for (q = 0; q < nq; q++) {
			for (k = 0; k <= nc; k++) {
				unsigned int i = pass ? (k + nc) % (nc + 1) : k;
				const struct qos_bal_cls *c = &s->c[q][i];
				uint64_t rate, ceil;
				bool down;

				want_Bps(m, sh, q, i, &rate, &ceil);
				if (!c->present || (rate == c->rate_Bps && ceil == c->ceil_Bps))
					continue;
				down = rate < c->rate_Bps ||
				       (rate == c->rate_Bps && ceil < c->ceil_Bps);
				if (down != !pass)
					continue;
				err = qos_htb_queue_change(b->sk, b->dev->ifindex, m, q, i, &sh->q[q]);
				if (err)
					return err;
				b->changes++;
			}
		}
	}
	return 0;
}

/* The device's lock, and what runs on it now; false: nothing to do. */
static int lock_reload(struct qos_balancer *b, bool *ok, char *err, size_t errlen)
{
	char name[IF_NAMESIZE];
	int ret;

	*ok = false;
	ret = qos_dev_relock(b->dev, err, errlen);
	if (ret)
		return ret;
	if (!if_indextoname(b->dev->ifindex, name)) {
		snprintf(err, errlen, "dev %s: ifindex %d is gone", b->dev->name, b->dev->ifindex);
		return -ENODEV;
	}
	ret = qos_dev_reload(b->dev, err, errlen);
	if (ret)
		return ret;
	*ok = balanceable(b->dev);
	return 0;
}

static int step_locked(struct qos_balancer *b, char *err, size_t errlen)
{
	static qos_bal_demands_t d;
	struct qos_bal_sample *a = &b->s[b->cur], *z = &b->s[!b->cur];
	int ret;

	if (!b->have || memcmp(&b->meta, &b->dev->cfg.meta, sizeof(b->meta))) {
		/* A new tree: its first sample. */
		b->meta = b->dev->cfg.meta;
		ret = sample(b, a);
		b->have = !ret;
		return ret;
	}
	ret = sample(b, z);
	if (ret)
		return ret;
	b->cur = !b->cur;
	demands(b, a, z, d);
	qos_balance(&b->meta, (const struct qos_bal_demand(*)[QOS_MAX_CLASSES])d, &b->share);
	ret = apply_share(b, z, &b->share);
	if (ret)
		snprintf(err, errlen, "dev %s: changing a class: %s", b->dev->name,
			 strerror(-ret));
	b->periods++;
	return ret;
}

int qos_balance_step(struct qos_balancer *b, char *err, size_t errlen)
{
	uint64_t t0 = mono_ns(), t;
	bool ok;
	int ret;

	ret = lock_reload(b, &ok, err, errlen);
	if (!ret && ok) {
		ret = step_locked(b, err, errlen);
		/* A class gone under an apply that did not take the lock
		 * (none does): start again from the next sample. */
		if (ret == -ENOENT) {
			b->have = false;
			ret = 0;
		}
	} else if (!ret) {
		b->have = false;
		b->idle++;
	}
	qos_dev_unlock(b->dev);
	t = mono_ns() - t0;
	b->step_ns += t;
	if (t > b->step_max_ns)
		b->step_max_ns = t;
	return ret;
}

int qos_balance_running(const struct qos_dev *dev, unsigned int *period_ms)
{
	unsigned int pid = 0, period = 0;
	size_t len;
	char *buf;

	*period_ms = 0;
	if (!qos_dev_file_held(dev, QOS_BAL_SUFFIX))
		return 0;
	if (qos_dev_file_read(dev, QOS_BAL_SUFFIX, (void **)&buf, &len, 64))
		return 0;
	if (sscanf(buf, "%u %u", &pid, &period) != 2)
		pid = 0;
	free(buf);
	*period_ms = period;
	return pid;
}

int qos_balance_start(struct qos_balancer *b, struct qos_dev *dev, unsigned int period_ms,
		      char *err, size_t errlen)
{
	unsigned int other_period;
	char buf[64];
	int ret, pid;

	memset(b, 0, sizeof(*b));
	b->dev = dev;
	b->period_ms = period_ms;
	b->hold_fd = -1;
	ret = qos_nl_open(&b->sk);
	if (ret) {
		snprintf(err, errlen, "netlink: %s", strerror(-ret));
		return ret;
	}
	ret = qos_dev_relock(dev, err, errlen);
	if (ret)
		return ret;
	pid = qos_balance_running(dev, &other_period);
	if (pid) {
		snprintf(err, errlen, "dev %s: qosctl balance already runs for it (pid %d)",
			 dev->name, pid);
		ret = -EEXIST;
	} else {
		snprintf(buf, sizeof(buf), "%d %u\n", (int)getpid(), period_ms);
		b->hold_fd = qos_dev_file_hold(dev, QOS_BAL_SUFFIX, buf, strlen(buf));
		if (b->hold_fd < 0) {
			ret = b->hold_fd;
			snprintf(err, errlen, "%s/*.%s: %s", QOS_RUN_DIR, QOS_BAL_SUFFIX,
				 strerror(-ret));
		}
	}
	qos_dev_unlock(dev);
	return ret;
}

int qos_balance_run(struct qos_balancer *b, char *err, size_t errlen)
{
	struct timespec next;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!qos_balance_stop) {
		ret = qos_balance_step(b, err, errlen);
		if (ret)
			return ret;
		next.tv_nsec += (long)(b->period_ms % 1000) * 1000000L;
		next.tv_sec += b->period_ms / 1000 + next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		while (!qos_balance_stop &&
		       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	return 0;
}

int qos_balance_end(struct qos_balancer *b, char *err, size_t errlen)
{
	bool ok = false;
	int ret = 0;

	if (b->hold_fd >= 0) {
		ret = lock_reload(b, &ok, err, errlen);
		if (!ret && ok && b->have && !memcmp(&b->meta, &b->dev->cfg.meta, sizeof(b->meta))) {
			static struct qos_bal_share st;

			ret = sample(b, &b->s[b->cur]);
			qos_balance_static(&b->meta, &st);
			ret = ret ?: apply_share(b, &b->s[b->cur], &st);
			if (ret)
				snprintf(err, errlen, "dev %s: restoring the static split: %s",
					 b->dev->name, strerror(-ret));
		}
		if (b->dev->lock_fd >= 0)
			qos_dev_file_unlink(b->dev, QOS_BAL_SUFFIX);
		qos_dev_unlock(b->dev);
		close(b->hold_fd);
		b->hold_fd = -1;
	}
	qos_nl_close(b->sk);
	b->sk = NULL;
	return ret;
}
