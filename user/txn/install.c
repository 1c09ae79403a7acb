// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The installer. Steps, in an order where the data path never sees a mix
 * of the old and the new configuration:
 *
 *   1. programs: keep the ones that run when they are this qosctl's and
 *      their rule table has the plan's size, else load new ones that share
 *      the counters and policers (their rule table and configuration are
 *      their own, so the old pair stays consistent until replaced);
 *   2. rules: write the entries of new rules (not yet looked up);
 *   3. policers: changed ones rewritten whole, buckets carried over;
 *   4. qdisc tree: classes added or changed in place, or a new root;
 *      then the IFB of download shaping, kept or created, and its tree;
 *   5. configuration: written into the programs' inactive slot, which
 *      they are flipped to, the commit point for kept programs;
 *   6. attach: new programs replace the old ones, the commit point for
 *      new programs;
 *   7. prune classes and retire rule entries nothing refers to any more,
 *      and delete an IFB the new plan no longer uses, a grace period after
 *      the commit point (settle());
 *   8. verify from the kernel that what runs is what was installed.
 *
 * QOSCTL_FAULT=<step> kills qosctl after a step (tests of crash recovery)
 * and QOSCTL_FAIL=<step> makes the step fail (tests of rollback).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/gp.h"
#include "kernel/ifb.h"
#include "kernel/policer.h"
#include "kernel/qdisc.h"
#include "kernel/rulemap.h"
#include "lib/util.h"
#include "txn/install.h"

void qos_undo_init(struct qos_undo *undo)
{
	memset(undo, 0, sizeof(*undo));
	qos_progs_init(&undo->held);
}

void qos_undo_free(struct qos_undo *undo)
{
	qos_plan_free(&undo->prev);
	qos_progs_close(&undo->held);
}

static bool has_tree(const struct qos_plan *p)
{
	return !p->empty && p->cfg.meta.sched != QOS_SCHED_NONE &&
	       (p->cfg.meta.flags & QOS_META_F_ROOT);
}

/* An IFB @p shapes downloads through, created already. */
static bool has_ifb(const struct qos_plan *p)
{
	return qos_plan_has_ifb(p) && p->cfg.ifb_ifindex;
}

static bool same_tree(const struct qos_meta *a, const struct qos_meta *b)
{
	return a->sched == b->sched && a->qdisc_handle == b->qdisc_handle &&
	       qos_meta_queues(a) == qos_meta_queues(b) && a->rate_bps == b->rate_bps && a->nclasses == b->nclasses &&
	       a->overhead == b->overhead && a->mpu == b->mpu && a->linklayer == b->linklayer &&
	       !memcmp(a->classes, b->classes, sizeof(a->classes));
}

/* Remove what @cur says qosctl installed, and the programs @dev runs. */
static int teardown(struct qos_dev *dev, const struct qos_plan *cur, char *err, size_t errlen)
{
	struct nl_sock *sk = NULL;
	int ret;

	ret = qos_progs_detach(dev->ifindex, dev->applied ? dev->cur.prog_id : NULL);
	if (ret) {
		snprintf(err, errlen, "dev %s: detaching programs: %s", dev->name, strerror(-ret));
		return ret;
	}
	if (has_tree(cur)) {
		ret = qos_nl_open(&sk);
		ret = ret ?: qos_tree_remove(sk, dev->ifindex, cur->cfg.meta.qdisc_handle);
		qos_nl_close(sk);
		if (ret && ret != -ENOENT) {
			snprintf(err, errlen, "dev %s: removing the qdisc tree: %s", dev->name,
				 strerror(-ret));
			return ret;
		}
	}
	if (!cur->empty && (cur->cfg.meta.flags & QOS_META_F_CLSACT))
		qos_clsact_destroy_if_empty(dev->ifindex);
	/* Nothing redirects to the IFB once the programs are gone. */
	ret = has_ifb(cur) ? qos_ifb_delete(dev->ifindex, cur->cfg.ifb_ifindex) : 0;
	if (ret) {
		snprintf(err, errlen, "dev %s: deleting its IFB: %s", dev->name, strerror(-ret));
		return ret;
	}
	return qos_dev_reload(dev, err, errlen);
}

/* Step 1: the programs @next runs with, in @target (fds owned): the
 * ingress one only when @next acts at ingress. */
static int pick_progs(struct qos_dev *dev, const struct qos_plan *next,
		      const struct qos_progs *held, struct qos_progs *target,
		      struct qos_attach_early *ea, char *err, size_t errlen)
{
	bool in = !(next->cfg.meta.flags & QOS_META_F_EGRESS_ONLY);
	struct qos_progs one;
	int ret;

	if (held && held->prog[QOS_DIR_EGRESS] >= 0)
		ret = qos_progs_dup(held, target);
	else if (dev->applied && dev->have_cfg && dev->cur.rule_entries == next->rule_entries &&
		 dev->cfg.meta.obj_hash == qos_obj_hash())
		ret = qos_progs_dup(&dev->cur, target);
	else
		ret = qos_progs_load(dev->applied ? &dev->cur : NULL, QOS_MAPS_SHARED,
				     next->rule_entries,
				     in ? QOS_DIRS_ALL : 1U << QOS_DIR_EGRESS,
				     dev->applied ? NULL : ea, target);
	/* Kept programs without an ingress one: it joins them, on all of
	 * their maps. */
	if (!ret && in && target->prog[QOS_DIR_INGRESS] < 0) {
		ret = qos_progs_load(target, ~0U, target->rule_entries, 1U << QOS_DIR_INGRESS,
				     NULL, &one);
		if (!ret) {
			target->prog[QOS_DIR_INGRESS] = one.prog[QOS_DIR_INGRESS];
			target->prog_id[QOS_DIR_INGRESS] = one.prog_id[QOS_DIR_INGRESS];
			one.prog[QOS_DIR_INGRESS] = -1;
			qos_progs_close(&one);
		}
	}
	if (!ret && !in && target->prog[QOS_DIR_INGRESS] >= 0) {
		close(target->prog[QOS_DIR_INGRESS]);
		target->prog[QOS_DIR_INGRESS] = -1;
		target->prog_id[QOS_DIR_INGRESS] = 0;
	}
	if (ret)
		snprintf(err, errlen, "loading BPF programs: %s%s", strerror(-ret),
			 qos_verbose ? "" : " (run with -v for the verifier log)");
	return ret;
}

static bool attached(const struct qos_dev *dev, const struct qos_progs *p)
{
	return dev->applied && dev->cur.prog_id[0] == p->prog_id[0] &&
	       dev->cur.prog_id[1] == p->prog_id[1];
}

/*
 * Step 4: the tree @nm on @ifindex over @cm (@had_tree: @cm is there);
 * *fresh: a new root. Whether the root can be changed in place is the
 * kernel's to say (the root there may be @cm's, or after a failure or a
 * crash still the one before it): HTB has no change operation for its
 * qdisc, so a root of @nm's kind and handle is kept and anything else
 * replaced. The device's tree and the IFB's alike.
 */
static int tree_sync(struct nl_sock *sk, int ifindex, const struct qos_meta *nm,
		     const struct qos_meta *cm, bool had_tree, bool *fresh)
{
	struct qos_root_info ri;
	int ret;

	ret = qos_root_info(sk, ifindex, &ri);
	if (ret)
		return ret;
	/* An mq root whose number of trees changes is built anew too: mq
	 * cannot take a tree away from a queue. */
	*fresh = !ri.present || ri.is_default || ri.handle != nm->qdisc_handle ||
		 strcmp(ri.kind, qos_root_kind(nm)) ||
		 (qos_meta_queues(nm) > 1 && had_tree &&
		  qos_meta_queues(cm) != qos_meta_queues(nm));
	if (!*fresh && had_tree && same_tree(nm, cm))
		return 0;
	return qos_tree_sync(sk, ifindex, nm, *fresh);
}

/* Step 7 for a tree: what @cm had that @nm has not. */
static int tree_prune(struct nl_sock *sk, int ifindex, const struct qos_meta *nm,
		      const struct qos_meta *cm, bool fresh)
{
	int ret = 0;

	if (nm->sched == QOS_SCHED_NONE || (fresh && cm->qdisc_handle != nm->qdisc_handle)) {
		ret = qos_tree_remove(sk, ifindex, cm->qdisc_handle);
		return ret == -ENOENT ? 0 : ret;
	}
	if (!fresh)
		ret = qos_tree_prune(sk, ifindex, nm, cm);
	return ret;
}

/* The IFB the configuration redirects to, if any, is qosctl's. */
static bool ifb_there(const struct qos_dev *dev)
{
	bool is_ifb;
	int ifindex;

	if (!dev->cfg.ifb_ifindex)
		return true;
	return !qos_ifb_find(dev->ifindex, &ifindex, &is_ifb) && is_ifb &&
	       ifindex == (int)dev->cfg.ifb_ifindex;
}

/* What runs is what was installed: the programs, the generation the
 * configuration was left at and the data-path bytes it names, the IFB. */
static int verify(struct qos_dev *dev, const struct qos_progs *target,
		  const struct qos_cfg_flip *f, const struct qos_cfg *cfg, char *err, size_t errlen)
{
	int ret = qos_dev_reload(dev, err, errlen);

	if (ret)
		return ret;
	if (!attached(dev, target) || !dev->have_cfg || qos_cfg_gen(&dev->cur) != f->gen ||
	    memcmp(&dev->cfg, cfg, QOS_CFG_DP_SIZE) || !ifb_there(dev)) {
		snprintf(err, errlen,
			 "dev %s: after installing, the kernel does not run what was installed "
			 "(programs %u/%u, found %u/%u, configuration %u, or its IFB is gone)",
			 dev->name, target->prog_id[0], target->prog_id[1], dev->cur.prog_id[0],
			 dev->cur.prog_id[1], f->gen);
		return -EIO;
	}
	return 0;
}

int qos_install_prepare(struct qos_dev *dev, struct qos_plan *next, const struct qos_plan *cur,
			char *err, size_t errlen)
{
	struct qos_root_info ri;
	int ret;

	ret = qos_root_read(dev->ifindex, &ri);
	if (ret) {
		snprintf(err, errlen, "dev %s: reading qdiscs: %s", dev->name, strerror(-ret));
		return ret;
	}
	/* What qosctl owns: the root it builds, the clsact it creates (none
	 * at tcx). The place at tcx is the caller's. */
	next->cfg.meta.flags &= QOS_META_F_TCX_LAST;
	if (next->cfg.meta.sched != QOS_SCHED_NONE)
		next->cfg.meta.flags |= QOS_META_F_ROOT;
	if (!qos_plan_needs_ingress(next))
		next->cfg.meta.flags |= QOS_META_F_EGRESS_ONLY;
	if ((!ri.clsact && !qos_attach_is_tcx(dev->ifindex)) ||
	    (!cur->empty && (cur->cfg.meta.flags & QOS_META_F_CLSACT)))
		next->cfg.meta.flags |= QOS_META_F_CLSACT;
	next->cfg.meta.ifindex = dev->ifindex;
	/* The IFB that runs is kept; 0 until one is created, which the
	 * recovery of a killed apply then finds by its name. */
	next->cfg.ifb_ifindex = qos_plan_has_ifb(next) && has_ifb(cur) ? cur->cfg.ifb_ifindex : 0;
	return 0;
}

/* What one install works with, between its steps. */
struct install {
	struct qos_dev *dev;
	struct qos_plan *next;
	const struct qos_plan *cur;
	struct qos_progs target;	/* the programs @next runs with */
	struct qos_rule_maps rm;	/* their rule table ... */
	struct qos_rules in_map;	/* ... and the rules in it before */
	struct nl_sock *sk;
	bool fresh;			/* a new root qdisc */
	bool ifb_fresh;			/* ... on the IFB */
	uint64_t t0;			/* when the device was locked */
	struct qos_attach_early early;	/* what step 1 attached */
	struct qos_cfg_flip flip;	/* what step 5 did */
};

#define STEP(name)							\
	do {								\
		if (qos_fail_point(name)) {				\
			snprintf(err, errlen, "injected failure at %s", name); \
			return -EIO;					\
		}							\
		qos_fault_point(name);					\
	} while (0)

/*
 * Step 4, download shaping: the IFB @next redirects to, and its tree. The
 * IFB of the plan being replaced is kept if it is still there (after a
 * failure or a crash that may be the one the failed install created), and
 * its tree changed as the device's is; otherwise one is created. A device
 * holding the IFB's name that neither plan knows is not taken over.
 */
static int ifb_sync(struct install *in, char *err, size_t errlen)
{
	struct qos_plan *next = in->next;
	const struct qos_plan *cur = in->cur;
	int dev_ifindex = in->dev->ifindex, ifindex;
	char name[IF_NAMESIZE];
	bool is_ifb, kept;
	int ret;

	if (!qos_plan_has_ifb(next))
		return 0;
	qos_ifb_name(dev_ifindex, name);
	ret = qos_ifb_find(dev_ifindex, &ifindex, &is_ifb);
	if (ret && ret != -ENOENT) {
		snprintf(err, errlen, "dev %s: looking for %s: %s", in->dev->name, name,
			 strerror(-ret));
		return ret;
	}
	kept = !ret && is_ifb && (ifindex == (int)next->cfg.ifb_ifindex ||
				  (has_ifb(cur) && ifindex == (int)cur->cfg.ifb_ifindex));
	if (!ret && !kept) {
		snprintf(err, errlen, "dev %s: a device %s exists that qosctl did not create",
			 in->dev->name, name);
		return -EEXIST;
	}
	if (!kept) {
		ret = qos_ifb_create(dev_ifindex, &ifindex);
		if (ret) {
			snprintf(err, errlen, "dev %s: creating %s: %s", in->dev->name, name,
				 strerror(-ret));
			return ret;
		}
	}
	next->cfg.ifb_ifindex = ifindex;
	next->cfg.ifb.ifindex = ifindex;
	ret = tree_sync(in->sk, ifindex, &next->cfg.ifb, &cur->cfg.ifb,
			kept && has_ifb(cur) && (int)cur->cfg.ifb_ifindex == ifindex, &in->ifb_fresh);
	if (ret)
		snprintf(err, errlen, "dev %s: building the qdisc tree of %s: %s", in->dev->name,
			 name, strerror(-ret));
	return ret;
}

/* Step 7 for the IFB: deleted once nothing redirects to it, else its
 * tree pruned as the device's. */
static int ifb_prune(struct install *in)
{
	const struct qos_plan *next = in->next, *cur = in->cur;

	if (!has_ifb(cur))
		return 0;
	if (!qos_plan_has_ifb(next) || next->cfg.ifb_ifindex != cur->cfg.ifb_ifindex)
		return qos_ifb_delete(in->dev->ifindex, cur->cfg.ifb_ifindex);
	return tree_prune(in->sk, cur->cfg.ifb_ifindex, &next->cfg.ifb, &cur->cfg.ifb,
			  in->ifb_fresh);
}

/* Steps 1-4: nothing the data path reads changes yet but the policers. */
static int stage(struct install *in, const struct qos_progs *held, char *err, size_t errlen)
{
	struct qos_policer saved[QOS_MAX_CLASSES];
	struct qos_plan *next = in->next;
	int ret;

	in->early = (struct qos_attach_early){
		.ifindex = in->dev->ifindex,
		.last = next->cfg.meta.flags & QOS_META_F_TCX_LAST,
	};
	ret = pick_progs(in->dev, next, held, &in->target, &in->early, err, errlen);
	if (ret)
		return ret;
	next->cfg.meta.obj_hash = qos_obj_hash();
	next->cfg.meta.rule_entries = in->target.rule_entries;
	STEP("load");

	in->rm = qos_rule_maps_of(&in->target);
	ret = qos_rules_read(&in->rm, &in->in_map, false);
	ret = ret ?: qos_rules_stage(&in->rm, &in->in_map, &next->rules, &next->cfg.rs,
				     &next->cfg.rules, err, errlen);
	if (ret)
		return ret;
	STEP("rules");

	ret = qos_police_install(in->target.map[QOS_MAP_POLICERS], next->police, saved);
	if (ret) {
		snprintf(err, errlen, "writing the policer map: %s", strerror(-ret));
		return ret;
	}
	STEP("police");

	if (next->cfg.meta.sched != QOS_SCHED_NONE) {
		ret = tree_sync(in->sk, in->dev->ifindex, &next->cfg.meta, &in->cur->cfg.meta,
				has_tree(in->cur), &in->fresh);
		if (ret) {
			snprintf(err, errlen, "dev %s: building the qdisc tree: %s",
				 in->dev->name, strerror(-ret));
			return ret;
		}
	}
	STEP("tree");

	ret = ifb_sync(in, err, errlen);
	if (ret)
		return ret;
	STEP("ifb");
	return 0;
}

/* Step 5: the configuration, written into the inactive slot and flipped
 * to, unless the programs read it already. */
static int put_cfg(struct install *in, char *err, size_t errlen)
{
	int ret;

	ret = qos_cfg_set(&in->target, &in->next->cfg, in->t0, &in->flip);
	if (!ret)
		qos_dbg("dev %s: configuration %s (generation %u)", in->dev->name,
			in->flip.flipped ? "flipped" : "unchanged for the data path, not flipped",
			in->flip.gen);
	if (ret)
		snprintf(err, errlen, "writing the configuration: %s", strerror(-ret));
	return ret;
}

/* Does @cm's tree have a class @nm's has not, or is it replaced? */
static bool classes_gone(const struct qos_meta *nm, const struct qos_meta *cm, bool fresh)
{
	uint32_t i, j;

	if (nm->sched == QOS_SCHED_NONE || fresh || nm->qdisc_handle != cm->qdisc_handle ||
	    qos_meta_queues(nm) != qos_meta_queues(cm))
		return true;
	for (i = 0; i < cm->nclasses && i < QOS_MAX_CLASSES; i++) {
		for (j = 0; j < nm->nclasses && j < QOS_MAX_CLASSES; j++)
			if (nm->classes[j].classid == cm->classes[i].classid)
				break;
		if (j == nm->nclasses || j == QOS_MAX_CLASSES)
			return true;
	}
	return false;
}

/* Will step 7 remove something the configuration before may name? */
static bool prune_needed(const struct install *in)
{
	const struct qos_plan *next = in->next, *cur = in->cur;

	if (has_tree(cur) && classes_gone(&next->cfg.meta, &cur->cfg.meta, in->fresh))
		return true;
	if (has_ifb(cur) && (!qos_plan_has_ifb(next) || next->cfg.ifb_ifindex != cur->cfg.ifb_ifindex ||
			     classes_gone(&next->cfg.ifb, &cur->cfg.ifb, in->ifb_fresh)))
		return true;
	return qos_rules_gone(&in->rm, &in->in_map, &next->rules);
}

static bool install_async;

void qos_install_async(bool on)
{
	install_async = on;
}

/*
 * Between the commit points (a flip, an attach, both at @since, 0: none)
 * and step 7: a program run that began before may still use the value
 * before, classes, rules and the IFB it names included. When step 7
 * removes any of them it waits a grace period first (and the slot left is
 * clean then); otherwise the wait is left to the next flip, which a
 * process that stays up begins at once in a thread.
 */
static int settle(struct install *in, uint64_t since, char *err, size_t errlen)
{
	int ret = 0;

	if (since && prune_needed(in)) {
		ret = qos_gp_wait(since) ?: qos_cfg_clean(&in->target, &in->flip);
		if (ret)
			snprintf(err, errlen, "waiting for a grace period: %s", strerror(-ret));
	} else {
		qos_cfg_clean_later(&in->target, &in->flip, install_async);
	}
	return ret;
}

/* Steps 5-8: the commit points, then what nothing refers to any more. */
static int commit(struct install *in, char *err, size_t errlen)
{
	struct qos_dev *dev = in->dev;
	uint64_t committed;
	bool clsact_created;
	int ret;

	ret = put_cfg(in, err, errlen);
	if (ret)
		return ret;
	committed = in->flip.flipped ? in->flip.at_ns : 0;
	STEP("cfg");

	if (!attached(dev, &in->target)) {
		struct qos_progs changed = in->target;	/* fds borrowed */
		int d, n = 0;

		for (d = 0; d < QOS_DIR_MAX; d++) {
			if ((dev->applied && dev->cur.prog_id[d] == changed.prog_id[d]) ||
			    in->early.attached[d])
				changed.prog[d] = -1;
			n += changed.prog[d] >= 0;
		}
		ret = n ? qos_progs_attach(dev->ifindex, &changed,
					   in->next->cfg.meta.flags & QOS_META_F_TCX_LAST,
					   &clsact_created) : 0;
		/* A profile that no longer acts at ingress: that program goes
		 * once the egress one that classifies by itself runs. */
		if (!ret && in->target.prog[QOS_DIR_INGRESS] < 0 && dev->applied &&
		    dev->cur.prog_id[QOS_DIR_INGRESS])
			ret = qos_prog_detach(dev->ifindex, QOS_DIR_INGRESS,
					      dev->cur.prog_id[QOS_DIR_INGRESS]);
		if (ret) {
			snprintf(err, errlen, "dev %s: attaching the programs: %s", dev->name,
				 strerror(-ret));
			return ret;
		}
		committed = qos_boottime_ns();
	}
	STEP("attach");

	ret = settle(in, committed, err, errlen);
	if (ret)
		return ret;
	ret = has_tree(in->cur) ? tree_prune(in->sk, dev->ifindex, &in->next->cfg.meta,
					     &in->cur->cfg.meta, in->fresh) : 0;
	ret = ret ?: ifb_prune(in);
	if (ret) {
		snprintf(err, errlen, "dev %s: removing old classes: %s", dev->name,
			 strerror(-ret));
		return ret;
	}
	qos_rules_retire(&in->rm, &in->in_map, &in->next->rules);
	STEP("prune");

	return verify(dev, &in->target, &in->flip, &in->next->cfg, err, errlen);
}

int qos_install(struct qos_dev *dev, struct qos_plan *next, const struct qos_plan *cur,
		const struct qos_progs *held, struct qos_undo *undo, char *err, size_t errlen)
{
	struct install in = { .dev = dev, .next = next, .cur = cur,
			      .t0 = dev->lock_fd >= 0 ? dev->locked_ns : qos_boottime_ns() };
	int ret;

	qos_progs_init(&in.target);
	if (undo) {
		ret = qos_progs_dup(&dev->cur, &undo->held);
		if (ret) {
			snprintf(err, errlen, "holding the running programs: %s", strerror(-ret));
			return ret;
		}
	}
	if (next->empty)
		return teardown(dev, cur, err, errlen);
	/* The grace period the flip may wait for, begun now: it runs while
	 * the install builds the tree. */
	if (dev->applied)
		qos_cfg_prepare(&dev->cur, in.t0);

	ret = qos_install_prepare(dev, next, cur, err, errlen);
	if (!ret && (ret = qos_nl_open(&in.sk)))
		snprintf(err, errlen, "netlink: %s", strerror(-ret));
	ret = ret ?: stage(&in, held, err, errlen);
	ret = ret ?: commit(&in, err, errlen);
	qos_rules_free(&in.in_map);
	qos_progs_close(&in.target);
	qos_nl_close(in.sk);
	return ret;
}
