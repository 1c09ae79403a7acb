// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * apply and remove as transactions.
 *
 * Order of a fresh apply: parse and resolve the profile, load (verify) the
 * programs, build the qdisc tree, write the configuration map, attach the
 * programs, record what was done in the meta map. Every step before the
 * last has an undo; the undo runs in reverse on the first failure.
 *
 * The undo cannot run when qosctl is killed, so before the first change to
 * the kernel the meta map is written with QOS_META_F_PENDING and what the
 * apply may install; remove and the next apply tear that down.
 */
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "loader.h"
#include "police.h"
#include "profile.h"
#include "qdisc.h"
#include "rules.h"
#include "util.h"

struct txn {
	int ifindex;
	bool have_old;		/* a qosctl profile was already applied */
	bool fresh_tree;	/* the root qdisc is new */
	bool tree_done;
	bool cfg_done;
	bool attach_done;
	bool clsact_created;
	bool pins_created;
	bool rules_done;
	struct qos_rule_maps rm;	/* rule tables, and the rules before and after */
	struct qos_rules rules_old;
	struct qos_rules rules_new;
	struct qos_meta old;
	struct qos_meta meta;
	struct qos_cfg old_cfg;
	struct qos_cfg cfg;
	bool police_done;
	bool tree_removed;	/* the old tree, replaced by scheduler = none */
	int police_fd;
	struct qos_policer police[QOS_MAX_CLASSES];
	struct qos_policer old_police[QOS_MAX_CLASSES];
};

static void rollback(struct txn *t, struct qos_bpf *obj, struct nl_sock *sk,
		     const char *pin_dir, const struct qos_maps *m)
{
	int d;

	if (t->attach_done || t->clsact_created) {
		if (t->have_old) {
			for (d = 0; d < QOS_DIR_MAX; d++) {
				int fd = qos_prog_fd_by_id(t->old.prog_id[d]);

				if (fd >= 0) {
					qos_attach_fd(t->ifindex, d, fd);
					close(fd);
				}
			}
		} else {
			qos_bpf_detach(t->ifindex, NULL, t->clsact_created);
		}
	}
	if (t->cfg_done && t->have_old)
		qos_cfg_write(m->cfg, &t->old_cfg);
	if (t->rules_done && t->have_old)
		qos_rules_revert(&t->rm, &t->rules_old, &t->rules_new);
	if (t->police_done)
		qos_police_restore(t->police_fd, t->old_police);
	if (t->tree_removed)
		qos_tree_sync(sk, t->ifindex, &t->old, true);
	if (t->tree_done) {
		if (t->fresh_tree) {
			qos_tree_remove(sk, t->ifindex, t->meta.qdisc_handle);
			/* The new root replaced the old tree: build it again. */
			if (t->have_old)
				qos_tree_sync(sk, t->ifindex, &t->old, true);
		} else {
			qos_tree_sync(sk, t->ifindex, &t->old, false);
			qos_tree_prune(sk, t->ifindex, &t->old, &t->meta);
		}
	}
	if (obj && t->pins_created)
		qos_bpf_unpin(obj, pin_dir);
}

static int check_root(const struct qos_root_info *ri, struct txn *t, const char *ifname,
		      char *err, size_t errlen)
{
	if (t->have_old && ri->present && ri->handle == t->old.qdisc_handle) {
		/* Ours: change in place unless the new profile moves the handle
		 * or changes the scheduler. A new default class needs no new
		 * tree: the egress program queues unclassified packets in it,
		 * so HTB's own default (which it cannot change) no longer
		 * matters once the programs run. */
		t->fresh_tree = t->meta.qdisc_handle != t->old.qdisc_handle ||
				t->meta.sched != t->old.sched;
		return 0;
	}
	if (!ri->present || ri->is_default) {
		t->fresh_tree = true;
		return 0;
	}
	snprintf(err, errlen,
		 "dev %s: root qdisc %s %x: was not installed by qosctl; remove it first",
		 ifname, ri->kind, ri->handle >> 16);
	return -EBUSY;
}

/*
 * Record, before the kernel changes, everything this apply may install on
 * top of the old state: the new root qdisc, the clsact qdisc if there is
 * none yet, the programs at qosctl's filter handle (their ids are not known
 * before they are attached).
 */
static int write_journal(const struct txn *t, const struct qos_root_info *ri, bool tree,
			 const struct qos_maps *m)
{
	struct qos_meta j = t->have_old ? t->old : t->meta;

	if (!t->have_old) {
		j.flags = 0;
		memset(j.prog_id, 0, sizeof(j.prog_id));
	}
	j.flags |= QOS_META_F_PENDING;
	if (!ri->clsact)
		j.flags |= QOS_META_F_CLSACT;
	j.pending_handle = tree ? t->meta.qdisc_handle : 0;
	return qos_meta_write(m->meta, &j);
}

/*
 * Remove from @ifindex what @meta says qosctl installed; for an apply that
 * never finished, also what it may have added.
 */
static int teardown(int ifindex, const struct qos_meta *meta, const char *ifname, char *err,
		    size_t errlen)
{
	bool pending = meta->flags & QOS_META_F_PENDING;
	uint32_t handles[2] = {
		meta->flags & QOS_META_F_ROOT ? meta->qdisc_handle : 0,
		pending ? meta->pending_handle : 0,
	};
	struct nl_sock *sk = NULL;
	unsigned int i;
	int ret;

	/* The programs a dead apply attached are not in @meta. */
	ret = qos_bpf_detach(ifindex, pending ? NULL : meta->prog_id,
			     meta->flags & QOS_META_F_CLSACT);
	if (ret) {
		snprintf(err, errlen, "dev %s: detaching programs: %s", ifname, strerror(-ret));
		return ret;
	}
	ret = qos_nl_open(&sk);
	for (i = 0; !ret && i < ARRAY_SIZE(handles); i++) {
		if (handles[i])
			ret = qos_tree_remove(sk, ifindex, handles[i]);
		if (ret == -ENOENT)
			ret = 0;
	}
	qos_nl_close(sk);
	if (ret)
		snprintf(err, errlen, "dev %s: removing the qdisc tree: %s", ifname,
			 strerror(-ret));
	return ret;
}

/*
 * Replace the rules the previous apply installed by the profile's, keeping
 * live rules (qosctl rule add) and the ids, hence the counters, of profile
 * rules that did not change. The shapes go to the spare set, which the
 * configuration written next switches to.
 */
static int apply_rules(struct txn *t, const struct qos_profile *p, const char *pin_dir,
		       char *err, size_t errlen)
{
	char msg[400];
	size_t i;
	int ret;

	ret = qos_rule_maps_open(pin_dir, &t->rm);
	ret = ret ?: qos_rules_read(&t->rm, &t->rules_old, false);
	if (ret) {
		snprintf(err, errlen, "reading the rule tables: %s", strerror(-ret));
		return ret;
	}
	for (i = 0; i < t->rules_old.n && !ret; i++)
		if (!t->rules_old.r[i].profile)
			ret = qos_rules_add(&t->rules_new, &t->rules_old.r[i]);
	for (i = 0; i < p->rules.n && !ret; i++)
		ret = qos_rules_add(&t->rules_new, &p->rules.r[i]);
	ret = ret ?: qos_rules_keep_ids(&t->rules_old, &t->rules_new);
	if (ret)
		return ret;
	t->cfg.rules = t->have_old ? t->old_cfg.rules : 0;
	ret = qos_rules_commit(&t->rm, &t->rules_old, &t->rules_new, &t->cfg.rules, false, msg,
			       sizeof(msg));
	t->rules_done = !ret;
	if (ret)
		snprintf(err, errlen, "installing the profile's rules: %s", msg);
	return ret;
}

int qos_apply(const char *profile_name, const char *ifname, uint64_t link_bps,
	      char *err, size_t errlen)
{
	struct qos_class_plan plan[QOS_MAX_CLASSES];
	static struct qos_profile p;
	struct qos_root_info ri;
	struct qos_bpf *obj = NULL;
	struct nl_sock *sk = NULL;
	struct txn t = {};
	struct qos_maps m = {};
	char pin_dir[200];
	unsigned int i;
	bool tree;
	int ret;

	t.rm.rules = t.rm.stats = t.rm.sets = t.rm.cfg = -1;
	ret = qos_check_env(err, errlen);
	if (ret)
		return ret;
	t.ifindex = if_nametoindex(ifname);
	if (!t.ifindex) {
		snprintf(err, errlen, "dev %s: no such device", ifname);
		return -ENODEV;
	}
	ret = qos_profile_load(profile_name, &p, err, errlen);
	if (ret)
		return ret;
	ret = qos_profile_resolve(&p, link_bps, plan, err, errlen);
	if (ret)
		return ret;
	tree = p.sched != QOS_SCHED_NONE;
	ret = qos_pin_dir(ifname, pin_dir, sizeof(pin_dir));
	if (ret) {
		snprintf(err, errlen, "dev %s: name too long", ifname);
		return ret;
	}

	/* What an earlier apply left, if anything. */
	{
		struct qos_maps old;

		if (!qos_maps_open(ifname, &old)) {
			t.have_old = !qos_meta_read(old.meta, &t.old) &&
				     t.old.version == QOS_META_VERSION &&
				     t.old.ifindex == (uint32_t)t.ifindex;
			qos_maps_close(&old);
			if (t.have_old && (t.old.flags & QOS_META_F_PENDING)) {
				/* A killed apply: start from a clean interface. */
				qos_dbg("unfinished apply on %s: torn down", ifname);
				ret = teardown(t.ifindex, &t.old, ifname, err, errlen);
				if (ret)
					return ret;
				t.have_old = false;
			}
			if (!t.have_old) {
				/* Left by an interface of the same name that is
				 * gone, or by a killed qosctl: nothing to keep. */
				qos_dbg("stale pins in %s: removed", pin_dir);
				qos_pins_remove(ifname);
			}
		}
	}

	ret = qos_tree_plan(&p, plan, link_bps, &t.meta, err, errlen);
	if (ret)
		return ret;
	t.meta.version = QOS_META_VERSION;
	t.meta.ifindex = t.ifindex;
	snprintf(t.meta.profile, sizeof(t.meta.profile), "%s", p.name);
	qos_profile_fill_cfg(&p, &t.cfg);

	ret = qos_nl_open(&sk);
	if (ret) {
		snprintf(err, errlen, "netlink: %s", strerror(-ret));
		return ret;
	}
	if (tree && !qos_qdisc_available("htb")) {
		snprintf(err, errlen, "the kernel lacks the HTB qdisc (CONFIG_NET_SCH_HTB)");
		ret = -EOPNOTSUPP;
		goto out;
	}
	ret = qos_root_info(sk, t.ifindex, &ri);
	if (ret) {
		snprintf(err, errlen, "dev %s: cannot read qdiscs: %s", ifname, strerror(-ret));
		goto out;
	}
	ret = tree ? check_root(&ri, &t, ifname, err, errlen) : 0;
	if (ret)
		goto out;

	/* A pinned map cannot be resized in place. */
	if (t.have_old && qos_rule_pinned_capacity(pin_dir) &&
	    qos_rule_pinned_capacity(pin_dir) != p.rule_entries) {
		snprintf(err, errlen,
			 "[profile] rules = %u: the rule table on %s holds %u; 'qosctl remove dev %s' first to resize it",
			 p.rule_entries, ifname, qos_rule_pinned_capacity(pin_dir), ifname);
		ret = -EBUSY;
		goto out;
	}
	ret = qos_bpf_load(pin_dir, p.rule_entries, &obj, &t.pins_created);
	if (ret) {
		snprintf(err, errlen, "loading BPF programs: %s%s", strerror(-ret),
			 qos_verbose ? "" : " (run with -v for the verifier log)");
		goto out;
	}
	qos_bpf_maps(obj, &m);
	if (t.have_old && qos_cfg_read(m.cfg, &t.old_cfg))
		t.have_old = false;
	qos_fault_point("after-load");

	ret = write_journal(&t, &ri, tree, &m);
	if (ret) {
		snprintf(err, errlen, "writing the meta map: %s", strerror(-ret));
		goto fail;
	}

	ret = apply_rules(&t, &p, pin_dir, err, errlen);
	if (ret)
		goto fail;
	qos_fault_point("after-rules");

	ret = tree ? qos_tree_sync(sk, t.ifindex, &t.meta, t.fresh_tree) : 0;
	t.tree_done = tree;
	if (ret) {
		snprintf(err, errlen, "dev %s: building the qdisc tree: %s", ifname,
			 strerror(-ret));
		goto fail;
	}
	qos_fault_point("after-tree");

	/* Policers before the configuration that points at them. */
	for (i = 0; i < p.nclasses; i++)
		t.police[plan[i].spec->id] = plan[i].police;
	t.police_fd = qos_bpf_map_fd(obj, "qos_policers");
	ret = qos_police_install(t.police_fd, t.police, t.old_police);
	if (ret) {
		snprintf(err, errlen, "writing the policer map: %s", strerror(-ret));
		goto fail;
	}
	t.police_done = true;

	ret = qos_cfg_write(m.cfg, &t.cfg);
	t.cfg_done = true;
	if (ret) {
		snprintf(err, errlen, "writing the configuration map: %s", strerror(-ret));
		goto fail;
	}
	qos_fault_point("after-cfg");

	ret = qos_bpf_attach(obj, t.ifindex, &t.clsact_created, t.meta.prog_id);
	t.attach_done = true;
	if (ret) {
		snprintf(err, errlen, "dev %s: attaching to clsact: %s", ifname, strerror(-ret));
		goto fail;
	}
	qos_fault_point("after-attach");
	t.meta.flags = tree ? QOS_META_F_ROOT : 0;
	if (t.clsact_created || (t.have_old && (t.old.flags & QOS_META_F_CLSACT)))
		t.meta.flags |= QOS_META_F_CLSACT;

	if (tree && t.have_old && !t.fresh_tree) {
		ret = qos_tree_prune(sk, t.ifindex, &t.meta, &t.old);
		if (ret) {
			snprintf(err, errlen, "dev %s: removing old classes: %s", ifname,
				 strerror(-ret));
			goto fail;
		}
	}
	if (!tree && t.have_old && (t.old.flags & QOS_META_F_ROOT)) {
		ret = qos_tree_remove(sk, t.ifindex, t.old.qdisc_handle);
		if (ret && ret != -ENOENT) {
			snprintf(err, errlen, "dev %s: removing the old qdisc tree: %s", ifname,
				 strerror(-ret));
			goto fail;
		}
		t.tree_removed = !ret;
	}
	qos_fault_point("after-prune");

	ret = qos_meta_write(m.meta, &t.meta);
	if (ret) {
		snprintf(err, errlen, "writing the meta map: %s", strerror(-ret));
		goto fail;
	}
	goto out;

fail:
	rollback(&t, obj, sk, pin_dir, &m);
	if (t.have_old)
		qos_meta_write(m.meta, &t.old);
out:
	qos_rules_free(&t.rules_old);
	qos_rules_free(&t.rules_new);
	qos_rule_maps_close(&t.rm);
	qos_profile_free(&p);
	qos_bpf_close(obj);
	qos_nl_close(sk);
	return ret;
}

int qos_remove(const char *ifname, char *err, size_t errlen)
{
	struct qos_meta meta;
	struct qos_maps m;
	int ifindex, ret;

	ret = qos_maps_open_applied(ifname, &m, err, errlen);
	if (ret)
		return ret;
	ret = qos_meta_read(m.meta, &meta);
	qos_maps_close(&m);
	if (ret || meta.version != QOS_META_VERSION) {
		/* An apply that died before its journal: it changed nothing
		 * but the pins. */
		qos_pins_remove(ifname);
		return 0;
	}

	ifindex = if_nametoindex(ifname);
	if (ifindex && (uint32_t)ifindex == meta.ifindex) {
		ret = teardown(ifindex, &meta, ifname, err, errlen);
		if (ret)
			return ret;
	}
	ret = qos_pins_remove(ifname);
	if (ret)
		snprintf(err, errlen, "dev %s: removing pinned maps: %s", ifname, strerror(-ret));
	return ret;
}
