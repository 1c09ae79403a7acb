// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * scheduler = prio: a PRIO root (M:) with a band per class in priority
 * order; a band whose ceil is below the link gets a TBF (2N:) under it so
 * that it cannot starve the bands below, and the leaf (1N:) under that.
 * Packets the egress program leaves alone (non-IP) take the default
 * class's band through the priomap.
 */
#include <string.h>

#include <linux/pkt_sched.h>
#include <netlink/netlink.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/prio.h>

#include "kernel/sched.h"

static int prio_qdisc_opts(struct rtnl_qdisc *q, const struct qos_tc_node *n)
{
	uint8_t map[TC_PRIO_MAX + 1];

	memset(map, qos_tc_arg(n, "priomap"), sizeof(map));
	rtnl_qdisc_prio_set_bands(q, qos_tc_arg(n, "bands"));
	return rtnl_qdisc_prio_set_priomap(q, map, sizeof(map));
}

static int prio_walk(const struct qos_meta *meta, qos_tc_visit_t visit, void *ctx)
{
	struct qos_tc_node n;
	unsigned int i;
	int err;

	qos_tc_node_init(&n, "prio", 0, TC_H_ROOT, meta->qdisc_handle);
	qos_tc_arg_add(&n, "bands", QOS_TU_NUM, qos_prio_bands(meta));
	qos_tc_arg_add(&n, "priomap", QOS_TU_REPEAT, qos_prio_default_band(meta));
	n.args[n.nargs - 1].n = TC_PRIO_MAX + 1;
	err = visit(meta, &n, ctx);

	for (i = 0; i < meta->nclasses && !err; i++) {
		const struct qos_meta_class *mc = &meta->classes[i];
		uint32_t parent = mc->classid;

		if (qos_prio_capped(meta, mc)) {
			qos_tbf_node(&n, meta, parent, qos_tbf_handle(mc), mc, mc->ceil_bps);
			err = visit(meta, &n, ctx);
			parent = qos_tbf_handle(mc) | 1;
		}
		qos_tc_leaf(&n, parent, qos_leaf_handle(mc), mc);
		err = err ?: visit(meta, &n, ctx);
	}
	return err;
}

/* The bands go with the qdisc: nothing to prune. */
const struct qos_sched_ops qos_sched_prio = {
	.name = "prio",
	.sched = QOS_SCHED_PRIO,
	.walk = prio_walk,
	.qdisc_opts = prio_qdisc_opts,
	.class_stats = qos_sched_class_stats,
};
