// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * scheduler = tbf: the whole link is one shaped queue.
 *
 *   M:   tbf root at the single class's rate
 *   1N:  its leaf, grafted on M:1
 *
 * TBF also caps a PRIO band (sched_prio.c), with the same node.
 */
#include <linux/pkt_sched.h>
#include <netlink/netlink.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/tbf.h>

#include "kernel/sched.h"
#include "model/linklayer.h"

void qos_tbf_node(struct qos_tc_node *n, const struct qos_meta *meta, uint32_t parent,
		  uint32_t handle, const struct qos_meta_class *mc, uint64_t rate_bps)
{
	uint32_t frame = qos_meta_frame(meta);

	qos_tc_node_init(n, "tbf", 0, parent, handle);
	qos_tc_arg_add(n, "rate", QOS_TU_BIT, qos_ll_rate(meta, rate_bps));
	qos_tc_arg_add(n, "burst", QOS_TU_BYTES, qos_tree_burst(frame, rate_bps, mc->burst));
	qos_tc_arg_add(n, "limit", QOS_TU_BYTES, qos_tbf_limit(frame, mc));
	qos_tc_shaper(n, meta);
}

static int tbf_qdisc_opts(struct rtnl_qdisc *q, const struct qos_tc_node *n)
{
	rtnl_qdisc_tbf_set_limit(q, qos_tc_arg(n, "limit"));
	/* Bytes per second; validation keeps it within an int. */
	rtnl_qdisc_tbf_set_rate(q, qos_tc_arg(n, "rate") / 8, qos_tc_arg(n, "burst"), 0);
	return 0;
}

static int tbf_walk(const struct qos_meta *meta, qos_tc_visit_t visit, void *ctx)
{
	const struct qos_meta_class *mc = &meta->classes[0];
	struct qos_tc_node n;
	int err;

	qos_tbf_node(&n, meta, TC_H_ROOT, meta->qdisc_handle, mc, mc->rate_bps);
	err = visit(meta, &n, ctx);
	if (err)
		return err;
	qos_tc_leaf(&n, meta->qdisc_handle | 1, qos_leaf_handle(mc), mc);
	return visit(meta, &n, ctx);
}

/* TBF's class reports no statistics of its own: its leaf's are the
 * class's queue. */
static int tbf_class_stats(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			   const struct qos_meta_class *mc, struct qos_class_stats *st)
{
	return qos_qdisc_stats(sk, ifindex, mc->classid, qos_leaf_handle(mc), st);
}

/* The one class goes with the qdisc: nothing to prune. */
const struct qos_sched_ops qos_sched_tbf = {
	.name = "tbf",
	.sched = QOS_SCHED_TBF,
	.walk = tbf_walk,
	.qdisc_opts = tbf_qdisc_opts,
	.class_stats = tbf_class_stats,
};
