/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The qdisc tree on a device: what the root is, building and removing a
 * tree, and the kernel's statistics of its qdiscs and classes. The tree's
 * shape is each scheduler kind's (kernel/sched.h), its numbers the
 * model's (model/tree.h).
 */
#ifndef __QOS_KERNEL_QDISC_H
#define __QOS_KERNEL_QDISC_H

#include <stdbool.h>
#include <stdint.h>

#include "../bpf/qos_common.h"
#include "kernel/nl.h"
#include "model/tree.h"

struct qos_root_info {
	bool present;		/* false: no qdisc at all (should not happen) */
	bool is_default;	/* kernel-created default root (handle 0:) */
	uint32_t handle;
	char kind[16];
	bool clsact;		/* a clsact qdisc exists */
	bool ingress;		/* the legacy ingress qdisc holds clsact's place */
};

struct qos_class_stats {
	uint64_t bytes;
	uint64_t packets;
	uint64_t drops;
	uint64_t overlimits;
	uint64_t requeues;
	uint64_t backlog_bytes;
	uint64_t backlog_packets;	/* the queue length, tc's qlen */
};

/*
 * Does the running kernel offer qdisc @kind? Probed by creating one on the
 * loopback device of a throw-away network namespace, so nothing the host
 * sees changes. Cached per process.
 */
int qos_qdisc_available(const char *kind);

int qos_root_info(struct nl_sock *sk, int ifindex, struct qos_root_info *ri);
/* The same on a netlink socket of its own. */
int qos_root_read(int ifindex, struct qos_root_info *ri);

/*
 * Make the qdisc tree on @ifindex hold every class of @meta with its rates
 * and leaf. With @fresh a new root is grafted; otherwise the existing tree
 * is changed in place (class change, leaf replace), so packets queued in
 * classes that stay are kept.
 */
int qos_tree_sync(struct nl_sock *sk, int ifindex, const struct qos_meta *meta, bool fresh);

/* Change class node @n of @meta's tree in place (RTM_NEWTCLASS without
 * NLM_F_CREATE): its queue and tokens are kept; -ENOENT if it is gone. */
int qos_tree_class_change(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			  const struct qos_tc_node *n);

/* Delete the classes of @old that @meta no longer has. Called once nothing
 * steers packets into them any more. */
int qos_tree_prune(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		   const struct qos_meta *old);

/* Delete the root qdisc if its handle is @handle: the kernel puts its
 * default qdisc back. */
int qos_tree_remove(struct nl_sock *sk, int ifindex, uint32_t handle);

/* The queue of class @mc of the tree @meta (its class, or the qdisc that
 * holds its queue), as the scheduler kind has it. */
int qos_tree_class_stats(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			 const struct qos_meta_class *mc, struct qos_class_stats *st);

struct rtnl_tc;
/* The kernel's statistics of a qdisc or class libnl read, as tc -s has them. */
void qos_tc_stats(struct rtnl_tc *tc, struct qos_class_stats *st);
int qos_class_stats(struct nl_sock *sk, int ifindex, uint32_t classid,
		    struct qos_class_stats *st);
/* The qdisc under @parent, if its handle is @handle; -ENOENT if not. */
int qos_qdisc_stats(struct nl_sock *sk, int ifindex, uint32_t parent, uint32_t handle,
		    struct qos_class_stats *st);

#endif /* __QOS_KERNEL_QDISC_H */
