// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tree geometry (model/tree.h): the numbers every qdisc and class of a
 * qosctl tree is built with, and the node description the scheduler kinds
 * (kernel/sched_*.c) walk their trees as.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/pkt_sched.h>

#include "lib/util.h"
#include "model/profile.h"
#include "model/tree.h"

uint32_t qos_clamp_u32(uint64_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

uint32_t qos_meta_frame(const struct qos_meta *meta)
{
	return (meta->mtu ?: QOS_MTU_DEFAULT) + QOS_ETH_HLEN;
}

uint32_t qos_htb_quantum(uint64_t rate_bps)
{
	/* DRR quantum among classes of one priority: a tenth of a second's
	 * worth of bytes at r2q=10 is HTB's own default; clamp it to where
	 * HTB does not complain. */
	return qos_clamp_u32(rate_bps / 8 / QOS_HTB_R2Q, QOS_MTU_FRAME, QOS_HTB_QUANTUM_MAX);
}

/* Bytes of one bucket: 1 ms at @bps plus a full @frame, as tc does with
 * HZ=1000, so a class can always send at least one MTU-sized packet (TBF
 * drops a packet larger than its bucket). */
uint32_t qos_tree_burst(uint32_t frame, uint64_t bps, uint32_t burst)
{
	if (burst)
		return burst;
	return qos_clamp_u32(bps / 8 / 1000 + frame, frame, UINT32_MAX / 2);
}

uint32_t qos_class_burst(uint32_t maxburst, uint32_t burst, uint32_t frame)
{
	return maxburst ? maxburst * frame : burst;
}

uint32_t qos_tbf_limit(uint32_t frame, const struct qos_meta_class *mc)
{
	/* TBF's own queue; a grafted leaf replaces it, but the kernel wants
	 * one that holds at least the bucket. */
	if (mc->leaf == QOS_LEAF_BFIFO && mc->leaf_limit)
		return mc->leaf_limit;
	return qos_tree_burst(frame, mc->ceil_bps, mc->burst) + frame;
}

uint32_t qos_leaf_limit(enum qos_leaf leaf, uint32_t limit, uint64_t ceil_bps,
			uint64_t delay_ns, uint32_t frame)
{
	if (limit)
		return limit;
	switch (leaf) {
	case QOS_LEAF_PFIFO:
		return QOS_PFIFO_DEFAULT;
	case QOS_LEAF_BFIFO:
		return qos_clamp_u32(ceil_bps / 8 * delay_ns / 1000000000ULL, 2 * frame,
				     UINT32_MAX);
	default:
		return 0;
	}
}

void qos_tree_class(const struct qos_profile *p, const struct qos_class_plan *cp,
		    const struct qos_meta *meta, enum qos_leaf leaf, struct qos_meta_class *mc)
{
	const struct qos_class_spec *cl = cp->spec;
	uint32_t frame = qos_meta_frame(meta);

	mc->classid = qos_profile_classid(p, cl);
	mc->rate_bps = cp->rate_bps;
	mc->ceil_bps = cp->ceil_bps;
	mc->prio = cl->prio;
	mc->burst = qos_class_burst(cl->maxburst, cl->burst, frame);
	mc->leaf = leaf;
	mc->leaf_limit = qos_leaf_limit(leaf, cl->limit, mc->ceil_bps, p->leaf_delay_ns, frame);
}

const char *qos_tc_handle_str(uint32_t h, char *buf, size_t len)
{
	if (TC_H_MIN(h))
		snprintf(buf, len, "%x:%x", h >> 16, h & 0xffff);
	else
		snprintf(buf, len, "%x:", h >> 16);
	return buf;
}

uint32_t qos_leaf_handle(const struct qos_meta_class *mc)
{
	return (0x10 + mc->id) << 16;
}

uint32_t qos_tbf_handle(const struct qos_meta_class *mc)
{
	return (0x20 + mc->id) << 16;
}

bool qos_prio_capped(const struct qos_meta *meta, const struct qos_meta_class *mc)
{
	return meta->sched == QOS_SCHED_PRIO && mc->ceil_bps < meta->rate_bps;
}

unsigned int qos_prio_bands(const struct qos_meta *meta)
{
	/* PRIO takes no fewer than two bands. */
	return meta->nclasses < 2 ? 2 : meta->nclasses;
}

uint32_t qos_prio_default_band(const struct qos_meta *meta)
{
	uint32_t band = 0;
	unsigned int i;

	for (i = 0; i < meta->nclasses && i < QOS_MAX_CLASSES; i++)
		if (meta->classes[i].id == meta->default_class)
			band = TC_H_MIN(meta->classes[i].classid) - 1;
	return band;
}

unsigned int qos_meta_queues(const struct qos_meta *meta)
{
	return meta->queues > 1 ? meta->queues : 1;
}

const char *qos_root_kind(const struct qos_meta *meta)
{
	return qos_meta_queues(meta) > 1 ? "mq" : qos_sched_name(meta->sched);
}

struct qos_meta_class qos_queue_class(const struct qos_meta *meta,
				      const struct qos_meta_class *mc, unsigned int q)
{
	unsigned int n = qos_meta_queues(meta);
	struct qos_meta_class c = *mc;

	if (n == 1)
		return c;
	c.classid = QOS_QUEUE_MAJOR(q) << 16 | TC_H_MIN(mc->classid);
	c.rate_bps = mc->rate_bps / n;
	c.ceil_bps = mc->ceil_bps / n;
	/* A byte queue keeps its delay at the queue's ceiling. */
	if (c.leaf == QOS_LEAF_BFIFO)
		c.leaf_limit = qos_clamp_u32(mc->leaf_limit / n, 2 * qos_meta_frame(meta),
					     UINT32_MAX);
	return c;
}

uint32_t qos_queue_leaf_handle(const struct qos_meta *meta, const struct qos_meta_class *mc,
			       unsigned int q)
{
	if (qos_meta_queues(meta) == 1)
		return qos_leaf_handle(mc);
	return (QOS_QUEUE_MAJOR(q) | TC_H_MAJ(qos_leaf_handle(mc)) >> 16) << 16;
}

uint32_t qos_queue_handle(const struct qos_meta *meta, unsigned int q)
{
	return qos_meta_queues(meta) == 1 ? meta->qdisc_handle : QOS_QUEUE_MAJOR(q) << 16;
}

void qos_tc_node_init(struct qos_tc_node *n, const char *kind, unsigned int flags,
		      uint32_t parent, uint32_t handle)
{
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->flags = flags;
	n->parent = parent;
	n->handle = handle;
}

static struct qos_tc_arg *arg_add(struct qos_tc_node *n, const char *key,
				  enum qos_tc_unit unit)
{
	struct qos_tc_arg *a;

	/* The walkers add a fixed set per kind, well below the bound. */
	if (n->nargs >= QOS_TC_ARGS_MAX) {
		fprintf(stderr, "qosctl: %s: too many options\n", n->kind);
		abort();
	}
	a = &n->args[n->nargs++];
	a->key = key;
	a->unit = unit;
	return a;
}

void qos_tc_arg_add(struct qos_tc_node *n, const char *key, enum qos_tc_unit unit, uint64_t v)
{
	arg_add(n, key, unit)->v = v;
}

uint64_t qos_tc_arg(const struct qos_tc_node *n, const char *key)
{
	unsigned int i;

	for (i = 0; i < n->nargs; i++)
		if (!strcmp(n->args[i].key, key))
			return n->args[i].v;
	return 0;
}

void qos_tc_shaper(struct qos_tc_node *n, const struct qos_meta *meta)
{
	n->flags |= QOS_TCN_SHAPER;
	if (!meta->overhead && !meta->mpu && meta->linklayer != QOS_LL_ATM)
		return;
	qos_tc_arg_add(n, "overhead", QOS_TU_NUM, meta->overhead);
	qos_tc_arg_add(n, "mpu", QOS_TU_NUM, meta->mpu);
	arg_add(n, "linklayer", QOS_TU_WORD)->s =
		meta->linklayer == QOS_LL_ATM ? "atm" : "ethernet";
}

void qos_tc_leaf(struct qos_tc_node *n, uint32_t parent, uint32_t handle,
		 const struct qos_meta_class *mc)
{
	qos_tc_node_init(n, qos_leaf_name(mc->leaf), QOS_TCN_LEAF, parent, handle);
	if (mc->leaf == QOS_LEAF_PFIFO)
		qos_tc_arg_add(n, "limit", QOS_TU_NUM, mc->leaf_limit);
	else if (mc->leaf == QOS_LEAF_BFIFO)
		qos_tc_arg_add(n, "limit", QOS_TU_BYTES, mc->leaf_limit);
}
