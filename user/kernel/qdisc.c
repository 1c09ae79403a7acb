// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The qdisc tree, built through libnl-route (never by running tc).
 *
 * HTB layout for a profile applied with handle M:
 *
 *   M:   htb root, default -> the profile's default class
 *   M:1  rate = ceil = link
 *   M:1N one leaf class per profile class with id N, HTB prio = priority;
 *        a capped class has rate = ceil, a borrowing one ceil up to the link
 *   1N:  leaf qdisc of M:1N (pfifo, bfifo or fq_codel)
 *
 * With N > 1 queues (meta->queues): an mq root M: and under its class M:q+1
 * the same HTB tree for TX queue q, at major Q = QOS_QUEUE_MAJOR(q) with
 * leaves Q | 1N, every rate 1/N of the link's (qos_queue_class()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/if_arp.h>
#include <linux/pkt_sched.h>
#include <netlink/netlink.h>
#include <netlink/route/class.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/fifo.h>
#include <netlink/route/qdisc/htb.h>
#include <netlink/route/qdisc/prio.h>
#include <netlink/route/qdisc/tbf.h>
#include <netlink/route/tc.h>

#include "kernel/qdisc.h"
#include "lib/util.h"
#include "model/linklayer.h"

#define QOS_HTB_QUANTUM_MAX	200000	/* HTB warns above this */
#define QOS_PARENT_MINOR	1

static int nl_to_errno(int nlerr)
{
	switch (-nlerr) {
	case NLE_EXIST:
		return -EEXIST;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_PERM:
		return -EPERM;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_NODEV:
		return -ENODEV;
	case NLE_BUSY:
		return -EBUSY;
	case NLE_INVAL:
	case NLE_RANGE:
		return -EINVAL;
	default:
		return nlerr < 0 ? -EIO : 0;
	}
}

int qos_nl_errno(int nlerr)
{
	return nl_to_errno(nlerr);
}

int qos_nl_open(struct nl_sock **skp)
{
	struct nl_sock *sk = nl_socket_alloc();
	int err;

	if (!sk)
		return -ENOMEM;
	err = nl_connect(sk, NETLINK_ROUTE);
	if (err) {
		nl_socket_free(sk);
		return nl_to_errno(err);
	}
	*skp = sk;
	return 0;
}

void qos_nl_close(struct nl_sock *sk)
{
	if (sk)
		nl_socket_free(sk);
}

/* Address a qdisc or class and name its kind: how every request starts. */
static int tc_init(struct rtnl_tc *tc, int ifindex, uint32_t parent, uint32_t handle,
		   const char *kind)
{
	rtnl_tc_set_ifindex(tc, ifindex);
	rtnl_tc_set_parent(tc, parent);
	rtnl_tc_set_handle(tc, handle);
	return rtnl_tc_set_kind(tc, kind);
}

static int add_qdisc(struct nl_sock *sk, int ifindex, uint32_t parent, uint32_t handle,
		     const char *kind, uint32_t limit, int flags)
{
	struct rtnl_qdisc *q = rtnl_qdisc_alloc();
	int err;

	if (!q)
		return -ENOMEM;
	err = tc_init(TC_CAST(q), ifindex, parent, handle, kind);
	if (!err && limit && (!strcmp(kind, "pfifo") || !strcmp(kind, "bfifo")))
		err = rtnl_qdisc_fifo_set_limit(q, limit);
	if (!err)
		err = rtnl_qdisc_add(sk, q, flags);
	rtnl_qdisc_put(q);
	if (err)
		qos_dbg("qdisc %s %x: parent %x: %s", kind, handle >> 16, parent, nl_geterror(err));
	return nl_to_errno(err);
}

/* PRIO and TBF refuse to exist without parameters (libnl asserts on a
 * PRIO without a priomap): give the probe the smallest valid ones. */
static int probe_qdisc(struct nl_sock *sk, const char *kind, uint32_t handle)
{
	uint8_t map[TC_PRIO_MAX + 1] = {};
	struct rtnl_qdisc *q;
	int err;

	if (strcmp(kind, "prio") && strcmp(kind, "tbf"))
		return add_qdisc(sk, 1, TC_H_ROOT, handle, kind, 0, NLM_F_CREATE | NLM_F_REPLACE);
	q = rtnl_qdisc_alloc();
	if (!q)
		return -ENOMEM;
	err = tc_init(TC_CAST(q), 1, TC_H_ROOT, handle, kind);
	if (!err && !strcmp(kind, "prio")) {
		rtnl_qdisc_prio_set_bands(q, 2);
		err = rtnl_qdisc_prio_set_priomap(q, map, sizeof(map));
	} else if (!err) {
		rtnl_qdisc_tbf_set_limit(q, 2 * QOS_MTU_FRAME);
		rtnl_qdisc_tbf_set_rate(q, 125000, 2 * QOS_MTU_FRAME, 0);
	}
	err = err ?: rtnl_qdisc_add(sk, q, NLM_F_CREATE | NLM_F_REPLACE);
	rtnl_qdisc_put(q);
	return nl_to_errno(err);
}

/* Every kind qosctl may build, probed together: one throw-away namespace
 * costs tens of milliseconds, most of an apply. */
static const char *const probe_kinds[] = { "htb", "fq_codel", "prio", "tbf" };

/* 1 if this kernel has the qdisc @kind, 0 if not, -errno if the probe
 * itself could not run (no CAP_SYS_ADMIN for a namespace, say): that must
 * not read as a missing qdisc. The probe child exits with the kinds' bits,
 * or with PROBE_FAILED and the errno in the low bits. */
#define PROBE_FAILED 0x80

int qos_qdisc_available(const char *kind)
{
	static int avail = -1;
	unsigned int i;
	int status;
	pid_t pid;

	for (i = 0; i < ARRAY_SIZE(probe_kinds); i++)
		if (!strcmp(probe_kinds[i], kind))
			break;
	if (i == ARRAY_SIZE(probe_kinds))
		return 0;
	if (avail < 0) {
		pid = fork();
		if (pid == 0) {
			struct nl_sock *sk = NULL;
			unsigned int k, bits = 0;
			int ret = 0;

			if (unshare(CLONE_NEWNET))
				ret = errno;
			else
				ret = -qos_nl_open(&sk);
			if (ret)
				_exit(PROBE_FAILED | (ret & 0x7f));
			/* lo is ifindex 1 in every new namespace; each probe
			 * replaces the root the one before left, under a handle
			 * of its own (a qdisc cannot be replaced by one of
			 * another kind under the same handle). */
			for (k = 0; k < ARRAY_SIZE(probe_kinds); k++)
				if (!probe_qdisc(sk, probe_kinds[k], (k + 1) << 16))
					bits |= 1U << k;
			_exit(bits);
		}
		if (pid < 0)
			return -errno;
		if (waitpid(pid, &status, 0) < 0)
			return -errno;
		if (!WIFEXITED(status))
			return -ECHILD;
		if (WEXITSTATUS(status) & PROBE_FAILED)
			return -(WEXITSTATUS(status) & ~PROBE_FAILED) ?: -EIO;
		avail = WEXITSTATUS(status);
	}
	return !!(avail & 1 << i);
}

/* One attribute of link @ifindex, on a netlink socket of its own. */
static int link_attr(int ifindex, unsigned int (*get)(struct rtnl_link *), uint32_t *v)
{
	struct rtnl_link *link = NULL;
	struct nl_sock *sk = NULL;
	int ret;

	ret = qos_nl_open(&sk);
	if (!ret)
		ret = nl_to_errno(rtnl_link_get_kernel(sk, ifindex, NULL, &link));
	if (!ret)
		*v = get(link);
	rtnl_link_put(link);
	qos_nl_close(sk);
	return ret;
}

int qos_link_mtu(int ifindex, uint32_t *mtu)
{
	return link_attr(ifindex, rtnl_link_get_mtu, mtu);
}

int qos_link_txqs(int ifindex, uint32_t *txqs)
{
	return link_attr(ifindex, rtnl_link_get_num_tx_queues, txqs);
}

int qos_root_read(int ifindex, struct qos_root_info *ri)
{
	struct nl_sock *sk = NULL;
	int ret;

	ret = qos_nl_open(&sk);
	ret = ret ?: qos_root_info(sk, ifindex, ri);
	qos_nl_close(sk);
	return ret;
}

int qos_root_info(struct nl_sock *sk, int ifindex, struct qos_root_info *ri)
{
	struct nl_cache *cache;
	struct rtnl_qdisc *q;
	int err;

	memset(ri, 0, sizeof(*ri));
	err = rtnl_qdisc_alloc_cache(sk, &cache);
	if (err)
		return nl_to_errno(err);
	q = rtnl_qdisc_get_by_parent(cache, ifindex, TC_H_ROOT);
	if (q) {
		ri->present = true;
		ri->handle = rtnl_tc_get_handle(TC_CAST(q));
		ri->is_default = TC_H_MAJ(ri->handle) == 0;
		snprintf(ri->kind, sizeof(ri->kind), "%s", rtnl_tc_get_kind(TC_CAST(q)) ?: "");
		rtnl_qdisc_put(q);
	}
	/* clsact and the legacy ingress qdisc both sit at ffff:. */
	q = rtnl_qdisc_get_by_parent(cache, ifindex, TC_H_CLSACT);
	ri->clsact = q && !strcmp(rtnl_tc_get_kind(TC_CAST(q)) ?: "", "clsact");
	ri->ingress = q && !ri->clsact;
	rtnl_qdisc_put(q);
	nl_cache_free(cache);
	return 0;
}

uint32_t qos_clamp_u32(uint64_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

uint32_t qos_meta_frame(const struct qos_meta *meta)
{
	return (meta->mtu ?: QOS_MTU_DEFAULT) + QOS_ETH_HLEN;
}

/* Bytes of one bucket: 1 ms at @bps plus a full @frame, as tc does with
 * HZ=1000, so a class can always send at least one MTU-sized packet (TBF
 * drops a packet larger than its bucket). */
static uint32_t tree_buffer(uint32_t frame, uint64_t bps)
{
	return qos_clamp_u32(bps / 8 / 1000 + frame, frame, UINT32_MAX / 2);
}

uint32_t qos_htb_quantum(uint64_t rate_bps)
{
	/* DRR quantum among classes of one priority: a tenth of a second's
	 * worth of bytes at r2q=10 is HTB's own default; clamp it to where
	 * HTB does not complain. */
	return qos_clamp_u32(rate_bps / 8 / 10, QOS_MTU_FRAME, QOS_HTB_QUANTUM_MAX);
}

uint32_t qos_tree_burst(uint32_t frame, uint64_t bps, uint32_t burst)
{
	return burst ? burst : tree_buffer(frame, bps);
}

/*
 * The link layer of @meta on a shaper: libnl puts overhead and mpu into
 * the rate spec and builds the rate table with ATM cells, from which the
 * kernel takes the ATM framing (qdisc_get_rtab()). PTM is in the rate
 * (qos_ll_rate()).
 */
static void set_linklayer(struct rtnl_tc *tc, const struct qos_meta *meta)
{
	rtnl_tc_set_overhead(tc, meta->overhead);
	rtnl_tc_set_mpu(tc, meta->mpu);
	rtnl_tc_set_linktype(tc, meta->linklayer == QOS_LL_ATM ? ARPHRD_ATM : ARPHRD_ETHER);
}

static int add_htb_class(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			 uint32_t parent, uint32_t classid, uint64_t rate, uint64_t ceil,
			 uint32_t prio, uint32_t burst, uint32_t frame)
{
	struct rtnl_class *cl = rtnl_class_alloc();
	int err;

	if (!cl)
		return -ENOMEM;
	err = tc_init(TC_CAST(cl), ifindex, parent, classid, "htb");
	set_linklayer(TC_CAST(cl), meta);
	/* libnl takes bytes per second. */
	err = err ?: rtnl_htb_set_rate64(cl, qos_ll_rate(meta, rate) / 8);
	err = err ?: rtnl_htb_set_ceil64(cl, qos_ll_rate(meta, ceil) / 8);
	err = err ?: rtnl_htb_set_prio(cl, prio);
	err = err ?: rtnl_htb_set_quantum(cl, qos_htb_quantum(rate));
	err = err ?: rtnl_htb_set_rbuffer(cl, qos_tree_burst(frame, rate, burst));
	err = err ?: rtnl_htb_set_cbuffer(cl, qos_tree_burst(frame, ceil, burst));
	if (!err)
		err = rtnl_class_add(sk, cl, NLM_F_CREATE);
	rtnl_class_put(cl);
	if (err)
		qos_dbg("htb class %x:%x: %s", classid >> 16, classid & 0xffff, nl_geterror(err));
	return nl_to_errno(err);
}

static int del_htb_class(struct nl_sock *sk, int ifindex, uint32_t classid)
{
	struct rtnl_class *cl = rtnl_class_alloc();
	int err;

	if (!cl)
		return -ENOMEM;
	rtnl_tc_set_ifindex(TC_CAST(cl), ifindex);
	rtnl_tc_set_handle(TC_CAST(cl), classid);
	err = rtnl_class_delete(sk, cl);
	rtnl_class_put(cl);
	return nl_to_errno(err);
}

static int set_htb_root(struct nl_sock *sk, int ifindex, uint32_t parent, uint32_t major,
			uint32_t defcls, int flags)
{
	struct rtnl_qdisc *q = rtnl_qdisc_alloc();
	int err;

	if (!q)
		return -ENOMEM;
	err = tc_init(TC_CAST(q), ifindex, parent, major, "htb");
	err = err ?: rtnl_htb_set_defcls(q, defcls);
	err = err ?: rtnl_htb_set_rate2quantum(q, 10);
	if (!err)
		err = rtnl_qdisc_add(sk, q, flags);
	rtnl_qdisc_put(q);
	return nl_to_errno(err);
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

uint32_t qos_tbf_limit(uint32_t frame, const struct qos_meta_class *mc)
{
	/* TBF's own queue; a grafted leaf replaces it, but the kernel wants
	 * one that holds at least the bucket. */
	if (mc->leaf == QOS_LEAF_BFIFO && mc->leaf_limit)
		return mc->leaf_limit;
	return qos_tree_burst(frame, mc->ceil_bps, mc->burst) + frame;
}

/*
 * Replace changes a leaf of the same kind in place, keeping its queue. A
 * leaf of another kind under the same handle is refused (EINVAL) by the
 * kernel: delete it (the class falls back to a default pfifo meanwhile,
 * nothing is dropped but that leaf's backlog) and add the new one.
 */
static int add_leaf(struct nl_sock *sk, int ifindex, uint32_t parent, uint32_t handle,
		    const struct qos_meta_class *mc)
{
	uint32_t limit = mc->leaf == QOS_LEAF_FQ_CODEL ? 0 : mc->leaf_limit;
	const char *kind = qos_leaf_name(mc->leaf);
	struct rtnl_qdisc *q;
	int err;

	err = add_qdisc(sk, ifindex, parent, handle, kind, limit, NLM_F_CREATE | NLM_F_REPLACE);
	if (err != -EINVAL)
		return err;
	q = rtnl_qdisc_alloc();
	if (!q)
		return -ENOMEM;
	rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
	rtnl_tc_set_parent(TC_CAST(q), parent);
	rtnl_tc_set_handle(TC_CAST(q), handle);
	err = nl_to_errno(rtnl_qdisc_delete(sk, q));
	rtnl_qdisc_put(q);
	if (err)
		return err;
	return add_qdisc(sk, ifindex, parent, handle, kind, limit, NLM_F_CREATE | NLM_F_REPLACE);
}

static int add_tbf(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		   uint32_t parent, uint32_t handle, const struct qos_meta_class *mc,
		   uint64_t rate_bps, uint32_t frame)
{
	struct rtnl_qdisc *q = rtnl_qdisc_alloc();
	int err;

	if (!q)
		return -ENOMEM;
	err = tc_init(TC_CAST(q), ifindex, parent, handle, "tbf");
	set_linklayer(TC_CAST(q), meta);
	if (!err) {
		rtnl_qdisc_tbf_set_limit(q, qos_tbf_limit(frame, mc));
		/* Bytes per second; validation keeps it within an int. */
		rtnl_qdisc_tbf_set_rate(q, qos_ll_rate(meta, rate_bps) / 8,
					qos_tree_burst(frame, rate_bps, mc->burst), 0);
		err = rtnl_qdisc_add(sk, q, NLM_F_CREATE | NLM_F_REPLACE);
	}
	rtnl_qdisc_put(q);
	if (err)
		qos_dbg("tbf %x: parent %x: %s", handle >> 16, parent, nl_geterror(err));
	return nl_to_errno(err);
}

/* TBF root (M:), the single class's leaf grafted on M:1. */
static int tbf_sync(struct nl_sock *sk, int ifindex, const struct qos_meta *meta)
{
	const struct qos_meta_class *mc = &meta->classes[0];
	int err;

	err = add_tbf(sk, ifindex, meta, TC_H_ROOT, meta->qdisc_handle, mc, mc->rate_bps,
			    qos_meta_frame(meta));
	return err ?: add_leaf(sk, ifindex, meta->qdisc_handle | 1, qos_leaf_handle(mc), mc);
}

/*
 * PRIO root (M:) with a band per class in priority order; a band whose
 * ceil is below the link gets a TBF (2N:) under it so that it cannot
 * starve the bands below, and the leaf under that. Packets the egress
 * program leaves alone (non-IP) take the default class's band through the
 * priomap.
 */
static int prio_sync(struct nl_sock *sk, int ifindex, const struct qos_meta *meta)
{
	uint8_t map[TC_PRIO_MAX + 1];
	struct rtnl_qdisc *q;
	uint32_t def_band = 0;
	unsigned int i;
	int err;

	for (i = 0; i < meta->nclasses; i++)
		if (meta->classes[i].id == meta->default_class)
			def_band = TC_H_MIN(meta->classes[i].classid) - 1;
	memset(map, def_band, sizeof(map));

	q = rtnl_qdisc_alloc();
	if (!q)
		return -ENOMEM;
	err = tc_init(TC_CAST(q), ifindex, TC_H_ROOT, meta->qdisc_handle, "prio");
	if (!err) {
		rtnl_qdisc_prio_set_bands(q, qos_prio_bands(meta));
		err = rtnl_qdisc_prio_set_priomap(q, map, sizeof(map));
	}
	err = err ?: rtnl_qdisc_add(sk, q, NLM_F_CREATE | NLM_F_REPLACE);
	rtnl_qdisc_put(q);
	if (err)
		return nl_to_errno(err);

	for (i = 0; i < meta->nclasses; i++) {
		const struct qos_meta_class *mc = &meta->classes[i];
		uint32_t parent = mc->classid;

		if (qos_prio_capped(meta, mc)) {
			err = add_tbf(sk, ifindex, meta, parent, qos_tbf_handle(mc), mc,
				      mc->ceil_bps,
			    qos_meta_frame(meta));
			if (err)
				return err;
			parent = qos_tbf_handle(mc) | 1;
		}
		err = add_leaf(sk, ifindex, parent, qos_leaf_handle(mc), mc);
		if (err)
			return err;
	}
	return 0;
}

unsigned int qos_prio_bands(const struct qos_meta *meta)
{
	/* PRIO takes no fewer than two bands. */
	return meta->nclasses < 2 ? 2 : meta->nclasses;
}

/* HTB, PRIO and TBF cannot change into one another: a fresh tree of another
 * kind under the same handle needs the old root gone first. */
static int clear_other_root(struct nl_sock *sk, int ifindex, const struct qos_meta *meta)
{
	struct qos_root_info ri;
	int err;

	err = qos_root_info(sk, ifindex, &ri);
	if (err || !ri.present || ri.handle != meta->qdisc_handle ||
	    (!strcmp(ri.kind, qos_root_kind(meta)) && qos_meta_queues(meta) == 1))
		return err;
	/* An mq root built anew is one whose number of trees changes: mq
	 * cannot take a child away (the queue would get noop, which drops). */
	return qos_tree_remove(sk, ifindex, ri.handle);
}

static bool meta_has_class(const struct qos_meta *m, uint32_t classid)
{
	unsigned int i;

	for (i = 0; m && i < m->nclasses && i < QOS_MAX_CLASSES; i++)
		if (m->classes[i].classid == classid)
			return true;
	return false;
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

/* The HTB tree of queue @q (the whole tree with one queue), under @parent. */
static int htb_sync(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		    uint32_t parent, unsigned int q, bool fresh)
{
	uint32_t major = qos_queue_handle(meta, q);
	uint32_t link = major | QOS_PARENT_MINOR;
	unsigned int i, n = qos_meta_queues(meta);
	int err;

	/* A new root grafts over the kernel's default in one step. HTB has no
	 * qdisc change operation, so an existing root is left as it is: its
	 * own default class no longer matters once the egress program puts
	 * every packet in a class. Until the leaf classes exist, HTB sends
	 * packets for the missing default class through its direct queue
	 * rather than dropping them. */
	if (fresh) {
		err = set_htb_root(sk, ifindex, parent, major,
				   TC_H_MIN(qos_classid(0, meta->default_class)),
				   NLM_F_CREATE | NLM_F_REPLACE);
		if (err)
			return err;
	}

	err = add_htb_class(sk, ifindex, meta, major, link, meta->rate_bps / n,
			    meta->rate_bps / n, 0, 0, qos_meta_frame(meta));
	if (err)
		return err;

	for (i = 0; i < meta->nclasses; i++) {
		struct qos_meta_class mc = qos_queue_class(meta, &meta->classes[i], q);

		err = add_htb_class(sk, ifindex, meta, link, mc.classid, mc.rate_bps,
				    mc.ceil_bps, mc.prio, mc.burst,
			    qos_meta_frame(meta));
		if (err)
			return err;
		err = add_leaf(sk, ifindex, mc.classid, qos_queue_leaf_handle(meta, &mc, q), &mc);
		if (err)
			return err;
	}

	return 0;
}

int qos_tree_sync(struct nl_sock *sk, int ifindex, const struct qos_meta *meta, bool fresh)
{
	unsigned int q, n = qos_meta_queues(meta);
	int err;

	if (fresh) {
		err = clear_other_root(sk, ifindex, meta);
		if (err)
			return err;
	}
	if (meta->sched == QOS_SCHED_TBF)
		return tbf_sync(sk, ifindex, meta);
	if (meta->sched == QOS_SCHED_PRIO)
		return prio_sync(sk, ifindex, meta);
	if (n == 1)
		return htb_sync(sk, ifindex, meta, TC_H_ROOT, 0, fresh);

	/* mq creates a default qdisc on every TX queue; each HTB is grafted
	 * over one of them, on the class of its queue (M:q+1). */
	if (fresh) {
		err = add_qdisc(sk, ifindex, TC_H_ROOT, meta->qdisc_handle, "mq", 0,
				NLM_F_CREATE | NLM_F_REPLACE);
		if (err)
			return err;
	}
	for (q = 0; q < n; q++) {
		err = htb_sync(sk, ifindex, meta, TC_H_MAKE(meta->qdisc_handle, q + 1), q, fresh);
		if (err)
			return err;
	}
	return 0;
}

int qos_tree_prune(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		   const struct qos_meta *old)
{
	unsigned int i, q;
	int err;

	/* PRIO bands and TBF's one class go with the qdisc. */
	if (meta->sched != QOS_SCHED_HTB || old->sched != QOS_SCHED_HTB)
		return 0;
	for (i = 0; i < old->nclasses && i < QOS_MAX_CLASSES; i++) {
		if (meta_has_class(meta, old->classes[i].classid))
			continue;
		for (q = 0; q < qos_meta_queues(old); q++) {
			err = del_htb_class(sk, ifindex,
					    qos_queue_class(old, &old->classes[i], q).classid);
			if (err && err != -ENOENT)
				return err;
		}
	}
	return 0;
}

int qos_tree_remove(struct nl_sock *sk, int ifindex, uint32_t handle)
{
	struct qos_root_info ri;
	struct rtnl_qdisc *q;
	int err;

	err = qos_root_info(sk, ifindex, &ri);
	if (err)
		return err;
	if (!ri.present || ri.handle != handle)
		return -ENOENT;
	q = rtnl_qdisc_alloc();
	if (!q)
		return -ENOMEM;
	rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
	rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
	rtnl_tc_set_handle(TC_CAST(q), handle);
	err = rtnl_qdisc_delete(sk, q);
	rtnl_qdisc_put(q);
	return nl_to_errno(err);
}

/* The kernel's statistics of a qdisc or class, as `tc -s` prints them. */
static void tc_stats(struct rtnl_tc *tc, struct qos_class_stats *st)
{
	st->bytes = rtnl_tc_get_stat(tc, RTNL_TC_BYTES);
	st->packets = rtnl_tc_get_stat(tc, RTNL_TC_PACKETS);
	st->drops = rtnl_tc_get_stat(tc, RTNL_TC_DROPS);
	st->overlimits = rtnl_tc_get_stat(tc, RTNL_TC_OVERLIMITS);
	st->requeues = rtnl_tc_get_stat(tc, RTNL_TC_REQUEUES);
	st->backlog_bytes = rtnl_tc_get_stat(tc, RTNL_TC_BACKLOG);
	st->backlog_packets = rtnl_tc_get_stat(tc, RTNL_TC_QLEN);
}

int qos_class_stats(struct nl_sock *sk, int ifindex, uint32_t classid,
		    struct qos_class_stats *st)
{
	struct nl_cache *cache;
	struct rtnl_class *cl;
	int err;

	memset(st, 0, sizeof(*st));
	err = rtnl_class_alloc_cache(sk, ifindex, &cache);
	if (err)
		return nl_to_errno(err);
	cl = rtnl_class_get(cache, ifindex, classid);
	if (!cl) {
		nl_cache_free(cache);
		return -ENOENT;
	}
	tc_stats(TC_CAST(cl), st);
	rtnl_class_put(cl);
	nl_cache_free(cache);
	return 0;
}

int qos_qdisc_stats(struct nl_sock *sk, int ifindex, uint32_t parent, uint32_t handle,
		    struct qos_class_stats *st)
{
	struct nl_cache *cache;
	struct rtnl_qdisc *q;
	bool ok;
	int err;

	memset(st, 0, sizeof(*st));
	err = rtnl_qdisc_alloc_cache(sk, &cache);
	if (err)
		return nl_to_errno(err);
	q = rtnl_qdisc_get_by_parent(cache, ifindex, parent);
	ok = q && rtnl_tc_get_handle(TC_CAST(q)) == handle;
	if (ok)
		tc_stats(TC_CAST(q), st);
	rtnl_qdisc_put(q);
	nl_cache_free(cache);
	return ok ? 0 : -ENOENT;
}
