/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_KERNEL_QDISC_H
#define __QOS_KERNEL_QDISC_H

#include <stdbool.h>
#include <stdint.h>

#include "../bpf/qos_common.h"

#define QOS_MTU_FRAME		1514	/* a full frame at MTU 1500 */
#define QOS_PFIFO_DEFAULT	16	/* packets: a short queue for PIP */

struct nl_sock;

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

int qos_nl_open(struct nl_sock **sk);
/* A libnl error as a negative errno. */
int qos_nl_errno(int nlerr);
void qos_nl_close(struct nl_sock *sk);

/*
 * Does the running kernel offer qdisc @kind? Probed by creating one on the
 * loopback device of a throw-away network namespace, so nothing the host
 * sees changes. Cached per process.
 */
int qos_qdisc_available(const char *kind);

int qos_root_info(struct nl_sock *sk, int ifindex, struct qos_root_info *ri);
/* The MTU of @ifindex, on a netlink socket of its own. */
int qos_link_mtu(int ifindex, uint32_t *mtu);
/* The number of TX queues of @ifindex (an mq root has a class for each). */
int qos_link_txqs(int ifindex, uint32_t *txqs);
/* The same on a netlink socket of its own. */
int qos_root_read(int ifindex, struct qos_root_info *ri);

/*
 * Make the qdisc tree on @ifindex hold every class of @meta with its rates
 * and leaf. With @fresh a new root is grafted; otherwise the existing tree
 * is changed in place (class change, leaf replace), so packets queued in
 * classes that stay are kept.
 */
int qos_tree_sync(struct nl_sock *sk, int ifindex, const struct qos_meta *meta, bool fresh);

/* Delete the classes of @old that @meta no longer has. Called once nothing
 * steers packets into them any more. */
int qos_tree_prune(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		   const struct qos_meta *old);

/* Delete the root qdisc if its handle is @handle: the kernel puts its
 * default qdisc back. */
int qos_tree_remove(struct nl_sock *sk, int ifindex, uint32_t handle);

int qos_class_stats(struct nl_sock *sk, int ifindex, uint32_t classid,
		    struct qos_class_stats *st);
/* The qdisc under @parent, if its handle is @handle; -ENOENT if not. */
int qos_qdisc_stats(struct nl_sock *sk, int ifindex, uint32_t parent, uint32_t handle,
		    struct qos_class_stats *st);

/*
 * The parameters qos_tree_sync() derives, for the dry-run to print exactly
 * what would be installed.
 */
uint32_t qos_htb_quantum(uint64_t rate_bps);
/* The largest frame on the device @meta was applied to: MTU + Ethernet
 * header. Bursts and byte queues derived by qosctl hold at least one. */
uint32_t qos_meta_frame(const struct qos_meta *meta);
uint32_t qos_tree_burst(uint32_t frame, uint64_t bps, uint32_t burst);	/* @burst 0: from @bps */
uint32_t qos_leaf_handle(const struct qos_meta_class *mc);
uint32_t qos_tbf_handle(const struct qos_meta_class *mc);
uint32_t qos_tbf_limit(uint32_t frame, const struct qos_meta_class *mc);
bool qos_prio_capped(const struct qos_meta *meta, const struct qos_meta_class *mc);
unsigned int qos_prio_bands(const struct qos_meta *meta);
uint32_t qos_clamp_u32(uint64_t v, uint32_t lo, uint32_t hi);

/*
 * Multi-queue trees (meta->queues > 1): an mq root with the tree of every
 * TX queue under it. With one queue each of these is the single tree's.
 */
unsigned int qos_meta_queues(const struct qos_meta *meta);	/* at least 1 */
const char *qos_root_kind(const struct qos_meta *meta);	/* "mq", or the scheduler's */
/* Class @mc as queue @q's tree has it: its classid, 1/N of its rates and
 * of a byte queue's limit. */
struct qos_meta_class qos_queue_class(const struct qos_meta *meta,
				      const struct qos_meta_class *mc, unsigned int q);
/* The leaf of @mc in queue @q's tree, and that tree's HTB. */
uint32_t qos_queue_leaf_handle(const struct qos_meta *meta, const struct qos_meta_class *mc,
			       unsigned int q);
uint32_t qos_queue_handle(const struct qos_meta *meta, unsigned int q);

#endif /* __QOS_KERNEL_QDISC_H */
