// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Transactions. Every change to a device is: plan, record the state it
 * replaces (QOS_REC_APPLYING), install, then commit (drop the record, or
 * turn it into QOS_REC_CONFIRM) or roll back by installing the recorded
 * state with the programs the undo holds. A qosctl killed anywhere in
 * between leaves the record; the next command that opens the device rolls
 * it back before doing anything else. See Documentation/reliability.rst.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "kernel/ifb.h"
#include "kernel/qdisc.h"
#include "lib/util.h"
#include "txn/install.h"
#include "txn/record.h"
#include "txn/txn.h"

/* The IFB named as @dev's, as the one @cur redirects to. */
static void find_ifb(const struct qos_dev *dev, struct qos_plan *cur)
{
	bool is_ifb;
	int ifindex;

	if (!qos_ifb_find(dev->ifindex, &ifindex, &is_ifb) && is_ifb)
		cur->cfg.ifb_ifindex = ifindex;
}

/* Install @rec->prev over whatever the recorded change left. */
static int roll_back_record(struct qos_dev *dev, struct qos_rec *rec, const char *why,
			    char *err, size_t errlen)
{
	struct qos_plan cur;
	int ret;

	/* What runs now, with the qdisc tree the change may have built: the
	 * classes of the recorded next plan are what to prune. */
	ret = qos_plan_current(dev, &cur, err, errlen);
	if (ret)
		return ret;
	if (!rec->next.empty) {
		cur.empty = false;
		cur.cfg.meta = rec->next.cfg.meta;
		cur.cfg.ifb = rec->next.cfg.ifb;
		cur.cfg.ifb_ifindex = rec->next.cfg.ifb_ifindex;
		/* An IFB the change created is known by its name only. */
		if (qos_plan_has_ifb(&rec->next) && !cur.cfg.ifb_ifindex)
			find_ifb(dev, &cur);
	}
	ret = qos_install(dev, &rec->prev, &cur, NULL, NULL, err, errlen);
	qos_plan_free(&cur);
	if (!ret) {
		dev->recovered = true;
		/* The lock file stays until the command ends (qos_txn_close):
		 * unlinked now, it would let another qosctl lock a new file
		 * while this one goes on changing the device. */
		qos_rec_remove(dev);
		syslog(LOG_WARNING, "qosctl: dev %s: %s: rolled back to %s", dev->name, why,
		       rec->prev.empty ? "no profile" : rec->prev.cfg.meta.profile);
		qos_dbg("dev %s: %s: rolled back", dev->name, why);
	}
	return ret;
}

static bool rec_overdue(const struct qos_rec *rec)
{
	return rec->state == QOS_REC_CONFIRM && qos_boottime_ns() >= rec->deadline_ns &&
	       !qos_proc_alive(rec->keeper, rec->keeper_start);
}

static int recover(struct qos_dev *dev, char *err, size_t errlen)
{
	struct qos_rec rec;
	int ret;

	ret = qos_rec_read(dev, &rec);
	if (ret == -ENOENT)
		return 0;
	if (ret) {
		/* Not ours to interpret (another qosctl build): what runs
		 * stays as the kernel has it. */
		qos_dbg("dev %s: unreadable transaction record dropped", dev->name);
		return qos_rec_remove(dev);
	}
	if (rec.state == QOS_REC_APPLYING)
		ret = roll_back_record(dev, &rec, "a qosctl was killed while changing it", err,
				       errlen);
	else if (rec_overdue(&rec))
		ret = roll_back_record(dev, &rec, "apply not confirmed in time", err, errlen);
	qos_rec_free(&rec);
	if (ret)
		snprintf(err + strlen(err), errlen - strlen(err),
			 " (while rolling back an unfinished change)");
	return ret;
}

int qos_txn_open(struct qos_dev *dev, const char *name, unsigned int flags, char *err,
		 size_t errlen)
{
	int ret = qos_dev_open(dev, name, flags | QOS_DEV_LOCK, err, errlen);

	if (ret)
		return ret;
	ret = recover(dev, err, errlen);
	if (ret)
		qos_dev_close(dev);
	return ret;
}

/*
 * The end of a command's hold on the device: a device it leaves without a
 * record keeps no file, applied or not. What is applied is in the kernel,
 * and a lock file kept beside it would outlive a network namespace deleted
 * with the profile on (no qosctl runs there again to sweep it).
 */
static void unlock(struct qos_dev *dev)
{
	struct qos_rec rec;
	int ret;

	if (dev->lock_fd < 0)
		return;
	ret = qos_rec_read(dev, &rec);
	if (ret == -ENOENT)
		qos_dev_forget(dev);
	else if (!ret)
		qos_rec_free(&rec);
	close(dev->lock_fd);
	dev->lock_fd = -1;
}

int qos_txn_open_read(struct qos_dev *dev, const char *name, char *err, size_t errlen)
{
	int ret = qos_dev_open(dev, name, 0, err, errlen);

	if (ret || !qos_txn_overdue(dev))
		return ret;
	qos_dev_close(dev);
	/* Recovered under the lock, then read as any reader does. */
	ret = qos_txn_open(dev, name, 0, err, errlen);
	if (!ret)
		unlock(dev);
	return ret;
}

bool qos_txn_overdue(const struct qos_dev *dev)
{
	struct qos_rec rec;
	bool overdue;

	if (dev->run_fd < 0 || qos_rec_read(dev, &rec))
		return false;
	overdue = rec_overdue(&rec) || rec.state == QOS_REC_APPLYING;
	qos_rec_free(&rec);
	return overdue;
}

long qos_txn_pending(const struct qos_dev *dev)
{
	struct qos_rec rec;
	uint64_t now = qos_boottime_ns();
	long left = -1;

	if (dev->run_fd < 0 || qos_rec_read(dev, &rec))
		return -1;
	if (rec.state == QOS_REC_CONFIRM)
		left = rec.deadline_ns > now ? (long)((rec.deadline_ns - now) / 1000000000ULL) : 0;
	qos_rec_free(&rec);
	return left;
}

/* A device holding the name of @dev's IFB that no configuration of ours
 * redirects to: refused, never taken over. */
static int check_foreign_ifb(struct qos_dev *dev, const struct qos_plan *next, char *err,
			     size_t errlen)
{
	char name[IF_NAMESIZE];
	bool is_ifb;
	int ifindex, ret;

	if (!qos_plan_has_ifb(next))
		return 0;
	ret = qos_ifb_find(dev->ifindex, &ifindex, &is_ifb);
	if (ret == -ENOENT)
		return 0;
	qos_ifb_name(dev->ifindex, name);
	if (ret) {
		snprintf(err, errlen, "dev %s: looking for %s: %s", dev->name, name,
			 strerror(-ret));
		return ret;
	}
	if (dev->have_cfg && dev->cfg.ifb.rate_bps && (int)dev->cfg.ifb_ifindex == ifindex)
		return 0;
	snprintf(err, errlen,
		 "dev %s: ingress-rate: the device %s (the name qosctl gives the IFB of dev %s) "
		 "exists and was not created by qosctl; delete or rename it first",
		 dev->name, name, dev->name);
	return -EEXIST;
}

/* A root qdisc or ingress qdisc qosctl did not install: refuse, naming it
 * and the command that removes it. */
static int check_foreign(struct qos_dev *dev, const struct qos_plan *next, char *err,
			 size_t errlen)
{
	struct qos_root_info ri;
	bool ours;
	int ret;

	ret = qos_root_read(dev->ifindex, &ri);
	if (ret) {
		snprintf(err, errlen, "dev %s: reading qdiscs: %s", dev->name, strerror(-ret));
		return ret;
	}
	if (ri.ingress) {
		snprintf(err, errlen,
			 "dev %s: a legacy ingress qdisc holds clsact's place; remove it with "
			 "'tc qdisc del dev %s ingress' (its filters go with it)",
			 dev->name, dev->name);
		return -EBUSY;
	}
	ret = check_foreign_ifb(dev, next, err, errlen);
	if (ret || next->cfg.meta.sched == QOS_SCHED_NONE || !ri.present || ri.is_default)
		return ret;
	ours = dev->have_cfg && (dev->cfg.meta.flags & QOS_META_F_ROOT) &&
	       dev->cfg.meta.qdisc_handle == ri.handle;
	if (ours)
		return 0;
	snprintf(err, errlen,
		 "dev %s: root qdisc %s %x: was not installed by qosctl; remove it first with "
		 "'tc qdisc del dev %s root'", dev->name, ri.kind, ri.handle >> 16, dev->name);
	return -EBUSY;
}

/*
 * Record, install, and on failure roll back. With @undo_out the caller
 * takes the undo (confirmed apply) and the record is left for it.
 */
static int change(struct qos_dev *dev, struct qos_plan *next, struct qos_undo *undo_out,
		  char *err, size_t errlen)
{
	struct qos_rec rec = { .state = QOS_REC_APPLYING };
	struct qos_undo undo;
	char rb[256];
	int ret, rret;

	qos_undo_init(&undo);
	ret = qos_plan_current(dev, &undo.prev, err, errlen);
	ret = ret ?: qos_install_prepare(dev, next, &undo.prev, err, errlen);
	if (!ret) {
		rec.prev = undo.prev;
		rec.next = *next;
		ret = qos_rec_write(dev, &rec);
		if (ret)
			snprintf(err, errlen, "%s: writing the transaction record: %s",
				 QOS_RUN_DIR, strerror(-ret));
	}
	if (ret) {
		qos_undo_free(&undo);
		return ret;
	}
	qos_fault_point("record");

	ret = qos_install(dev, next, &undo.prev, NULL, &undo, err, errlen);
	if (ret) {
		qos_dbg("dev %s: install failed (%s): rolling back", dev->name, err);
		/* What runs now: the failed install may have attached. */
		rret = qos_dev_reload(dev, rb, sizeof(rb));
		rret = rret ?: qos_install(dev, &undo.prev, next, &undo.held, NULL, rb,
					   sizeof(rb));
		if (rret && !if_indextoname(dev->ifindex, rb))
			snprintf(err + strlen(err), errlen - strlen(err),
				 "; the device is gone");
		else if (rret)
			snprintf(err + strlen(err), errlen - strlen(err),
				 "; rolling back failed too (%s): the next qosctl command on "
				 "dev %s retries", rb, dev->name);
		else
			qos_rec_remove(dev);
		qos_undo_free(&undo);
		return ret;
	}
	qos_fault_point("commit");
	if (undo_out) {
		*undo_out = undo;
		return 0;
	}
	qos_rec_remove(dev);
	qos_undo_free(&undo);
	return 0;
}

/* End a pending confirmation: the keeper is told, the record dropped. */
static int cancel_confirm(struct qos_dev *dev)
{
	struct qos_rec rec;
	int pending;

	if (qos_rec_read(dev, &rec))
		return 0;
	pending = rec.state == QOS_REC_CONFIRM;
	if (pending) {
		qos_rec_remove(dev);
		qos_confirm_release_keeper(rec.keeper, rec.keeper_start);
	}
	qos_rec_free(&rec);
	return pending;
}

int qos_tcx_place_parse(const char *s)
{
	if (!strcmp(s, "first"))
		return QOS_TCX_FIRST;
	if (!strcmp(s, "last"))
		return QOS_TCX_LAST;
	return -1;
}

void qos_tcx_place_set(const struct qos_dev *dev, struct qos_plan *next,
		       enum qos_tcx_place place)
{
	bool last = place == QOS_TCX_LAST ||
		    (place == QOS_TCX_KEEP && dev->applied && dev->have_cfg &&
		     (dev->cfg.meta.flags & QOS_META_F_TCX_LAST));

	next->cfg.meta.flags = (next->cfg.meta.flags & ~QOS_META_F_TCX_LAST) |
			       (last ? QOS_META_F_TCX_LAST : 0);
}

int qos_txn_apply(struct qos_dev *dev, const char *profile, uint64_t link_bps,
		  uint64_t ingress_bps, const struct qos_ll_spec *ll, uint32_t queues,
		  enum qos_tcx_place place, unsigned int confirm_secs, char *err, size_t errlen)
{
	struct qos_plan next;
	struct qos_undo undo;
	uint32_t mtu, txqs;
	int ret;

	if (confirm_secs && qos_txn_pending(dev) >= 0) {
		snprintf(err, errlen,
			 "dev %s: an apply is waiting for confirmation (qosctl confirm dev %s)",
			 dev->name, dev->name);
		return -EBUSY;
	}
	ret = qos_link_mtu(dev->ifindex, &mtu) ?: qos_link_txqs(dev->ifindex, &txqs);
	if (ret) {
		snprintf(err, errlen, "dev %s: reading its MTU and TX queues: %s", dev->name,
			 strerror(-ret));
		return ret;
	}
	ret = qos_plan_profile(profile, link_bps, ingress_bps, ll, mtu, queues, txqs, &next, err,
			       errlen);
	/* --strict: the plan's warnings refuse it before anything changes. */
	ret = ret ?: qos_strict_check(err, errlen);
	ret = ret ?: qos_plan_keep_live(&next, dev, err, errlen);
	ret = ret ?: check_foreign(dev, &next, err, errlen);
	if (!ret)
		qos_tcx_place_set(dev, &next, place);
	if (!ret && qos_plan_has_ifb(&next))
		ret = qos_ifb_redirect_check(err, errlen);
	if (ret)
		goto out;
	/* A plain apply confirms a pending one, as a new commit does in
	 * Junos: what it replaces is what is applied now. */
	if (!confirm_secs)
		cancel_confirm(dev);
	qos_undo_init(&undo);
	ret = change(dev, &next, confirm_secs ? &undo : NULL, err, errlen);
	if (!ret && confirm_secs) {
		ret = qos_confirm_arm(dev, &undo, &next, confirm_secs, err, errlen);
		qos_undo_free(&undo);
	}
out:
	qos_plan_free(&next);
	return ret;
}

int qos_txn_rules(struct qos_dev *dev, struct qos_rules *rules, char *err, size_t errlen)
{
	struct qos_plan next;
	int ret;

	if (qos_txn_pending(dev) >= 0) {
		snprintf(err, errlen,
			 "dev %s: an apply is waiting for confirmation: confirm it first "
			 "(qosctl confirm dev %s)", dev->name, dev->name);
		return -EBUSY;
	}
	ret = qos_plan_current(dev, &next, err, errlen);
	if (ret)
		return ret;
	qos_rules_free(&next.rules);
	next.rules = *rules;
	memset(rules, 0, sizeof(*rules));
	ret = change(dev, &next, NULL, err, errlen);
	*rules = next.rules;
	memset(&next.rules, 0, sizeof(next.rules));
	qos_plan_free(&next);
	return ret;
}

/*
 * remove --force on a device whose slot holds something broken: detach
 * whatever sits at qosctl's slot; the root qdisc, the clsact qdisc and
 * the IFB of download shaping go too if a program of ours still there
 * says, through its configuration, that qosctl installed them. The IFB
 * is deleted only under qosctl's name for it and as an IFB.
 */
static int remove_broken(struct qos_dev *dev, char *err, size_t errlen)
{
	struct qos_plan ours = { .empty = true };
	struct nl_sock *sk = NULL;
	uint32_t ifb = 0;
	int ret;

	if (!qos_slot_meta(dev->ifindex, &ours.cfg.meta, &ifb))
		ours.empty = false;
	ret = qos_progs_detach(dev->ifindex, NULL);
	if (ret) {
		snprintf(err, errlen, "dev %s: detaching: %s", dev->name, strerror(-ret));
		return ret;
	}
	if (ours.empty)
		return 0;
	if (ours.cfg.meta.flags & QOS_META_F_ROOT) {
		ret = qos_nl_open(&sk);
		ret = ret ?: qos_tree_remove(sk, dev->ifindex, ours.cfg.meta.qdisc_handle);
		qos_nl_close(sk);
		if (ret && ret != -ENOENT) {
			snprintf(err, errlen, "dev %s: removing the qdisc tree: %s", dev->name,
				 strerror(-ret));
			return ret;
		}
	}
	if (ifb) {
		ret = qos_ifb_delete(dev->ifindex, ifb);
		if (ret) {
			snprintf(err, errlen, "dev %s: deleting the IFB: %s", dev->name,
				 strerror(-ret));
			return ret;
		}
	}
	if (ours.cfg.meta.flags & QOS_META_F_CLSACT)
		qos_clsact_destroy_if_empty(dev->ifindex);
	return 0;
}

int qos_txn_remove(struct qos_dev *dev, bool force, char *err, size_t errlen)
{
	struct qos_plan none = { .empty = true };
	int ret;

	cancel_confirm(dev);
	/* A remove that found a killed apply and rolled it back to nothing
	 * has done its job. */
	if (!dev->applied && dev->recovered)
		return 0;
	if (!dev->applied && !force) {
		snprintf(err, errlen, "dev %s: no qosctl profile applied", dev->name);
		return -ENOENT;
	}
	if (force && (!dev->applied || !dev->have_cfg))
		ret = remove_broken(dev, err, errlen);
	else
		ret = change(dev, &none, NULL, err, errlen);
	if (!ret) {
		qos_rec_remove(dev);
		qos_dev_forget(dev);
	}
	return ret;
}

void qos_txn_close(struct qos_dev *dev)
{
	unlock(dev);
	qos_dev_close(dev);
}

int qos_txn_confirm(struct qos_dev *dev, char *err, size_t errlen)
{
	return cancel_confirm(dev);
}
