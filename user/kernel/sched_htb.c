// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * scheduler = htb, the default; CBQ-like profiles (bounded, isolated,
 * maxburst) are HTB too, their parameters mapped onto HTB's by the model
 * (model/validate.c, qos_class_burst()). For a profile applied with
 * handle M:
 *
 *   M:   htb root, default -> the profile's default class
 *   M:1  rate = ceil = link
 *   M:1N one leaf class per profile class with id N, HTB prio = priority;
 *        a capped class has rate = ceil, a borrowing one ceil up to the link
 *   1N:  leaf qdisc of M:1N (pfifo, bfifo or fq_codel)
 *
 * With N > 1 queues (meta->queues): an mq root M: and under its class M:q+1
 * the same HTB tree for TX queue q, at major Q = QOS_QUEUE_MAJOR(q) with
 * leaves Q | 1N, every rate 1/N of the link's (qos_queue_class()), until
 * qosctl balance shares them by demand (qos_htb_queue_change()).
 */
#include <errno.h>

#include <linux/pkt_sched.h>
#include <netlink/netlink.h>
#include <netlink/route/class.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/htb.h>

#include "kernel/sched.h"
#include "lib/util.h"
#include "model/linklayer.h"

static void htb_class_node(struct qos_tc_node *n, const struct qos_meta *meta,
			   uint32_t parent, const struct qos_meta_class *mc)
{
	uint32_t frame = qos_meta_frame(meta);

	qos_tc_node_init(n, "htb", QOS_TCN_CLASS, parent, mc->classid);
	qos_tc_arg_add(n, "rate", QOS_TU_BIT, qos_ll_rate(meta, mc->rate_bps));
	qos_tc_arg_add(n, "ceil", QOS_TU_BIT, qos_ll_rate(meta, mc->ceil_bps));
	qos_tc_arg_add(n, "prio", QOS_TU_NUM, mc->prio);
	qos_tc_arg_add(n, "quantum", QOS_TU_NUM, qos_htb_quantum(mc->rate_bps));
	qos_tc_arg_add(n, "burst", QOS_TU_BYTES, qos_tree_burst(frame, mc->rate_bps, mc->burst));
	qos_tc_arg_add(n, "cburst", QOS_TU_BYTES, qos_tree_burst(frame, mc->ceil_bps, mc->burst));
	qos_tc_shaper(n, meta);
}

/*
 * The HTB tree of queue @q (the whole tree with one queue), under @parent.
 * HTB has no qdisc change operation, so an existing root is left as it
 * is (QOS_TCN_FRESH): its own default class no longer matters once the
 * egress program puts every packet in a class. Until the leaf classes
 * exist, HTB sends packets for the missing default class through its
 * direct queue rather than dropping them.
 */
static int htb_tree(const struct qos_meta *meta, uint32_t parent, unsigned int q,
		    qos_tc_visit_t visit, void *ctx)
{
	uint32_t major = qos_queue_handle(meta, q);
	struct qos_meta_class link = {
		.classid = major | QOS_PARENT_MINOR,
		.rate_bps = meta->rate_bps / qos_meta_queues(meta),
		.ceil_bps = meta->rate_bps / qos_meta_queues(meta),
	};
	struct qos_tc_node n;
	unsigned int i;
	int err;

	qos_tc_node_init(&n, "htb", QOS_TCN_FRESH, parent, major);
	qos_tc_arg_add(&n, "default", QOS_TU_HEX,
		       TC_H_MIN(qos_classid(0, meta->default_class)));
	qos_tc_arg_add(&n, "r2q", QOS_TU_NUM, QOS_HTB_R2Q);
	err = visit(meta, &n, ctx);
	if (!err) {
		htb_class_node(&n, meta, major, &link);
		err = visit(meta, &n, ctx);
	}
	for (i = 0; i < meta->nclasses && !err; i++) {
		struct qos_meta_class mc = qos_queue_class(meta, &meta->classes[i], q);

		htb_class_node(&n, meta, link.classid, &mc);
		err = visit(meta, &n, ctx);
		qos_tc_leaf(&n, mc.classid, qos_queue_leaf_handle(meta, &mc, q), &mc);
		err = err ?: visit(meta, &n, ctx);
	}
	return err;
}

static int htb_walk(const struct qos_meta *meta, qos_tc_visit_t visit, void *ctx)
{
	unsigned int q, nq = qos_meta_queues(meta);
	struct qos_tc_node n;
	int err;

	if (nq == 1)
		return htb_tree(meta, TC_H_ROOT, 0, visit, ctx);
	/* mq creates a default qdisc on every TX queue; each HTB is grafted
	 * over one of them, on the class of its queue (M:q+1). mq cannot
	 * change its number of trees: a new number is a fresh tree. */
	qos_tc_node_init(&n, "mq", QOS_TCN_FRESH, TC_H_ROOT, meta->qdisc_handle);
	err = visit(meta, &n, ctx);
	for (q = 0; q < nq && !err; q++)
		err = htb_tree(meta, TC_H_MAKE(meta->qdisc_handle, q + 1), q, visit, ctx);
	return err;
}

int qos_htb_queue_change(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			 unsigned int q, unsigned int i, const struct qos_bal_queue *bq)
{
	uint32_t major = qos_queue_handle(meta, q);
	struct qos_meta_class mc = {
		.classid = major | QOS_PARENT_MINOR,
		.rate_bps = bq->link_bps,
		.ceil_bps = bq->link_bps,
	};
	uint32_t parent = major;
	struct qos_tc_node n;

	if (i < meta->nclasses) {
		mc = qos_queue_class(meta, &meta->classes[i], q);
		mc.rate_bps = bq->rate_bps[i];
		mc.ceil_bps = bq->ceil_bps[i];
		parent = major | QOS_PARENT_MINOR;
	}
	htb_class_node(&n, meta, parent, &mc);
	return qos_tree_class_change(sk, ifindex, meta, &n);
}

static int htb_qdisc_opts(struct rtnl_qdisc *q, const struct qos_tc_node *n)
{
	return rtnl_htb_set_defcls(q, qos_tc_arg(n, "default")) ?:
	       rtnl_htb_set_rate2quantum(q, qos_tc_arg(n, "r2q"));
}

static int htb_class_opts(struct rtnl_class *cl, const struct qos_tc_node *n)
{
	/* libnl takes bytes per second. */
	return rtnl_htb_set_rate64(cl, qos_tc_arg(n, "rate") / 8) ?:
	       rtnl_htb_set_ceil64(cl, qos_tc_arg(n, "ceil") / 8) ?:
	       rtnl_htb_set_prio(cl, qos_tc_arg(n, "prio")) ?:
	       rtnl_htb_set_quantum(cl, qos_tc_arg(n, "quantum")) ?:
	       rtnl_htb_set_rbuffer(cl, qos_tc_arg(n, "burst")) ?:
	       rtnl_htb_set_cbuffer(cl, qos_tc_arg(n, "cburst"));
}

static bool meta_has_class(const struct qos_meta *m, uint32_t classid)
{
	unsigned int i;

	for (i = 0; i < m->nclasses && i < QOS_MAX_CLASSES; i++)
		if (m->classes[i].classid == classid)
			return true;
	return false;
}

static int del_class(struct nl_sock *sk, int ifindex, uint32_t classid)
{
	struct rtnl_class *cl = rtnl_class_alloc();
	int err;

	if (!cl)
		return -ENOMEM;
	rtnl_tc_set_ifindex(TC_CAST(cl), ifindex);
	rtnl_tc_set_handle(TC_CAST(cl), classid);
	err = rtnl_class_delete(sk, cl);
	rtnl_class_put(cl);
	return qos_nl_errno(err);
}

/* A class of another kind's tree went with its qdisc. */
static int htb_prune(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		     const struct qos_meta *old)
{
	unsigned int i, q;
	int err;

	if (old->sched != QOS_SCHED_HTB)
		return 0;
	for (i = 0; i < old->nclasses && i < QOS_MAX_CLASSES; i++) {
		if (meta_has_class(meta, old->classes[i].classid))
			continue;
		for (q = 0; q < qos_meta_queues(old); q++) {
			err = del_class(sk, ifindex,
					qos_queue_class(old, &old->classes[i], q).classid);
			if (err && err != -ENOENT)
				return err;
		}
	}
	return 0;
}

const struct qos_sched_ops qos_sched_htb = {
	.name = "htb",
	.sched = QOS_SCHED_HTB,
	.walk = htb_walk,
	.qdisc_opts = htb_qdisc_opts,
	.class_opts = htb_class_opts,
	.prune = htb_prune,
	.class_stats = qos_sched_class_stats,
};
