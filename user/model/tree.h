/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The geometry of a qdisc tree: handles, quanta, bursts, queue limits and
 * the share of each TX queue, from a plan's struct qos_meta. Plain
 * arithmetic, the same for the installer, the dry run, prune and stats.
 *
 * And the tree's description: one struct qos_tc_node per qdisc or class,
 * with its options as tc names them. A scheduler kind walks its tree as
 * nodes (kernel/sched.h); the installer sends each node through libnl,
 * the dry run prints it as a tc command, so the two cannot disagree.
 */
#ifndef __QOS_MODEL_TREE_H
#define __QOS_MODEL_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/qos_common.h"

#define QOS_MTU_FRAME		1514	/* a full frame at MTU 1500 */
#define QOS_PFIFO_DEFAULT	16	/* packets: a short queue for PIP */
#define QOS_HTB_QUANTUM_MAX	200000	/* HTB warns above this */
#define QOS_HTB_R2Q		10	/* HTB's own rate-to-quantum default */
#define QOS_PARENT_MINOR	1	/* M:1, the HTB link class */

struct qos_class_plan;
struct qos_profile;

uint32_t qos_clamp_u32(uint64_t v, uint32_t lo, uint32_t hi);

/*
 * The tree's side of class @cp of profile @p in @meta (its scheduler,
 * link rate and MTU set): classid, rates, priority, burst, and @leaf
 * (resolved, not auto) with its limit. Name and id are the caller's.
 */
void qos_tree_class(const struct qos_profile *p, const struct qos_class_plan *cp,
		    const struct qos_meta *meta, enum qos_leaf leaf, struct qos_meta_class *mc);

/* The largest frame on the device @meta was applied to: MTU + Ethernet
 * header. Bursts and byte queues derived by qosctl hold at least one. */
uint32_t qos_meta_frame(const struct qos_meta *meta);
/* HTB's DRR quantum of a class of @rate_bps. */
uint32_t qos_htb_quantum(uint64_t rate_bps);
/* A bucket: @burst if set, else 1 ms at @bps plus one @frame. */
uint32_t qos_tree_burst(uint32_t frame, uint64_t bps, uint32_t burst);
/* A class's bucket as the profile asks: CBQ's maxburst counts full
 * frames (the device's), else @burst (0: qos_tree_burst() decides). */
uint32_t qos_class_burst(uint32_t maxburst, uint32_t burst, uint32_t frame);
/* The queue of a TBF shaping class @mc. */
uint32_t qos_tbf_limit(uint32_t frame, const struct qos_meta_class *mc);
/*
 * A leaf's limit: @limit if the profile gave one, else for pfifo
 * QOS_PFIFO_DEFAULT packets, for bfifo the bytes that drain in @delay_ns
 * at @ceil_bps (two frames at least); fq_codel keeps @limit (0: its own).
 */
uint32_t qos_leaf_limit(enum qos_leaf leaf, uint32_t limit, uint64_t ceil_bps,
			uint64_t delay_ns, uint32_t frame);

/* A handle or classid as tc writes it: "1:", "1:12". */
const char *qos_tc_handle_str(uint32_t h, char *buf, size_t len);
uint32_t qos_leaf_handle(const struct qos_meta_class *mc);	/* 1N: */
uint32_t qos_tbf_handle(const struct qos_meta_class *mc);	/* 2N: */

/* PRIO: a band capped below the link gets a TBF; the bands; the band
 * (0-based) of the default class, which the priomap sends everything to. */
bool qos_prio_capped(const struct qos_meta *meta, const struct qos_meta_class *mc);
unsigned int qos_prio_bands(const struct qos_meta *meta);
uint32_t qos_prio_default_band(const struct qos_meta *meta);

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

/* How an option's value reads in tc's syntax. */
enum qos_tc_unit {
	QOS_TU_NUM,	/* 16 */
	QOS_TU_HEX,	/* 13 (tc reads HTB's default class in hex) */
	QOS_TU_BIT,	/* 20000000bit */
	QOS_TU_BYTES,	/* 1514b */
	QOS_TU_WORD,	/* atm */
	QOS_TU_REPEAT,	/* the value n times: a priomap */
};

struct qos_tc_arg {
	const char *key;	/* tc's name, also the JSON key */
	enum qos_tc_unit unit;
	uint64_t v;
	const char *s;		/* QOS_TU_WORD */
	unsigned int n;		/* QOS_TU_REPEAT */
};

#define QOS_TCN_CLASS	(1U << 0)	/* a class, not a qdisc */
#define QOS_TCN_FRESH	(1U << 1)	/* only in a fresh tree: no change operation */
#define QOS_TCN_LEAF	(1U << 2)	/* a leaf: one of another kind is deleted first */
#define QOS_TCN_SHAPER	(1U << 3)	/* rates in the meta's link layer */

#define QOS_TC_ARGS_MAX	12

struct qos_tc_node {
	const char *kind;	/* "htb", "tbf", "prio", "mq", a leaf's */
	unsigned int flags;	/* QOS_TCN_* */
	uint32_t parent;	/* TC_H_ROOT for the root */
	uint32_t handle;	/* the classid of a class */
	unsigned int nargs;
	struct qos_tc_arg args[QOS_TC_ARGS_MAX];
};

/* Called for each node of a tree, parents first; non-zero stops the walk
 * and is returned. */
typedef int (*qos_tc_visit_t)(const struct qos_meta *meta, const struct qos_tc_node *n,
			      void *ctx);

void qos_tc_node_init(struct qos_tc_node *n, const char *kind, unsigned int flags,
		      uint32_t parent, uint32_t handle);
void qos_tc_arg_add(struct qos_tc_node *n, const char *key, enum qos_tc_unit unit, uint64_t v);
/* The value of option @key; 0 if @n has none. */
uint64_t qos_tc_arg(const struct qos_tc_node *n, const char *key);
/* Mark @n a shaper and give it @meta's link layer (no options for the
 * default: Ethernet, no overhead, no mpu). */
void qos_tc_shaper(struct qos_tc_node *n, const struct qos_meta *meta);
/* The leaf qdisc of class @mc, under @parent. */
void qos_tc_leaf(struct qos_tc_node *n, uint32_t parent, uint32_t handle,
		 const struct qos_meta_class *mc);

#endif /* __QOS_MODEL_TREE_H */
