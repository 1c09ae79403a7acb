/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A scheduler kind (htb, prio, tbf; none for a policing-only profile):
 * one file each, kernel/sched_<kind>.c, and one ops struct serving the
 * installer, the dry run, stats and prune. The idea is iproute2's struct
 * qdisc_util (tc/q_htb.c); the code is ours.
 *
 * A kind describes its tree once, as tc objects (walk); the installer
 * (kernel/qdisc.c) sends each object through libnl with the kind's
 * options (qdisc_opts, class_opts), the dry run (out/dryrun.c) prints it.
 */
#ifndef __QOS_KERNEL_SCHED_H
#define __QOS_KERNEL_SCHED_H

#include "kernel/qdisc.h"
#include "model/balance.h"
#include "model/tree.h"

struct nl_sock;
struct rtnl_class;
struct rtnl_qdisc;

struct qos_sched_ops {
	const char *name;		/* the root qdisc's tc kind */
	enum qos_sched sched;
	/* The tree of @meta, parents first. NULL: the kind has no tree. */
	int (*walk)(const struct qos_meta *meta, qos_tc_visit_t visit, void *ctx);
	/* Node @n of this kind's options into libnl's object. */
	int (*qdisc_opts)(struct rtnl_qdisc *q, const struct qos_tc_node *n);
	int (*class_opts)(struct rtnl_class *cl, const struct qos_tc_node *n);
	/* Delete the classes of @old (of any kind) that @meta has not. NULL:
	 * they go with their qdisc. */
	int (*prune)(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		     const struct qos_meta *old);
	/* The statistics of the queue of class @mc. */
	int (*class_stats)(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			   const struct qos_meta_class *mc, struct qos_class_stats *st);
};

extern const struct qos_sched_ops qos_sched_htb;
extern const struct qos_sched_ops qos_sched_prio;
extern const struct qos_sched_ops qos_sched_tbf;
extern const struct qos_sched_ops qos_sched_none;

/* The kind @sched (@meta->sched); none's for an unknown value. */
const struct qos_sched_ops *qos_sched_ops(uint32_t sched);
/* The kind whose qdisc is tc's @kind; NULL for a leaf or mq. */
const struct qos_sched_ops *qos_sched_ops_by_kind(const char *kind);

/* A TBF node shaping class @mc at @rate_bps (the TBF root, or a PRIO
 * band's cap). */
void qos_tbf_node(struct qos_tc_node *n, const struct qos_meta *meta, uint32_t parent,
		  uint32_t handle, const struct qos_meta_class *mc, uint64_t rate_bps);

/*
 * Multi-queue HTB: change class @i (meta->classes[i]; @i == nclasses: the
 * link class M:1) of queue @q's tree to the rates of @bq, in place.
 */
int qos_htb_queue_change(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			 unsigned int q, unsigned int i, const struct qos_bal_queue *bq);

/* A class's statistics by its classid: HTB's and PRIO's. */
int qos_sched_class_stats(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			  const struct qos_meta_class *mc, struct qos_class_stats *st);

#endif /* __QOS_KERNEL_SCHED_H */
