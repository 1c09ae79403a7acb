// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The qdisc tree, built through libnl-route (never by running tc): the
 * part common to every scheduler kind. Each kind (kernel/sched_*.c)
 * describes its tree as tc objects; they are sent here one by one, with
 * the kind's options, in the order the kind gives (parents first).
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
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/fifo.h>
#include <netlink/route/tc.h>

#include "kernel/kfacts.h"
#include "kernel/qdisc.h"
#include "kernel/sched.h"
#include "lib/util.h"

/* Address a qdisc or class and name its kind: how every request starts. */
static int tc_init(struct rtnl_tc *tc, int ifindex, uint32_t parent, uint32_t handle,
		   const char *kind)
{
	rtnl_tc_set_ifindex(tc, ifindex);
	rtnl_tc_set_parent(tc, parent);
	rtnl_tc_set_handle(tc, handle);
	return rtnl_tc_set_kind(tc, kind);
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

/* The options of qdisc node @n: its scheduler kind's, or a fifo's limit. */
static int qdisc_opts(struct rtnl_qdisc *q, const struct qos_tc_node *n)
{
	const struct qos_sched_ops *ops = qos_sched_ops_by_kind(n->kind);

	if (ops && ops->qdisc_opts)
		return ops->qdisc_opts(q, n);
	if (qos_tc_arg(n, "limit") && (!strcmp(n->kind, "pfifo") || !strcmp(n->kind, "bfifo")))
		return rtnl_qdisc_fifo_set_limit(q, qos_tc_arg(n, "limit"));
	return 0;
}

/* Qdisc node @n, created or replaced. @meta: the link layer of a shaper. */
static int add_qdisc(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		     const struct qos_tc_node *n)
{
	struct rtnl_qdisc *q = rtnl_qdisc_alloc();
	int err;

	if (!q)
		return -ENOMEM;
	err = tc_init(TC_CAST(q), ifindex, n->parent, n->handle, n->kind);
	if (!err && (n->flags & QOS_TCN_SHAPER))
		set_linklayer(TC_CAST(q), meta);
	err = err ?: qdisc_opts(q, n);
	err = err ?: rtnl_qdisc_add(sk, q, NLM_F_CREATE | NLM_F_REPLACE);
	rtnl_qdisc_put(q);
	if (err)
		qos_dbg("qdisc %s %x: parent %x: %s", n->kind, n->handle >> 16, n->parent,
			nl_geterror(err));
	return qos_nl_errno(err);
}

/* Class node @n, created or changed. */
static int add_class(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		     const struct qos_tc_node *n, int flags)
{
	const struct qos_sched_ops *ops = qos_sched_ops_by_kind(n->kind);
	struct rtnl_class *cl = rtnl_class_alloc();
	int err;

	if (!cl)
		return -ENOMEM;
	err = tc_init(TC_CAST(cl), ifindex, n->parent, n->handle, n->kind);
	if (!err && (n->flags & QOS_TCN_SHAPER))
		set_linklayer(TC_CAST(cl), meta);
	if (!err && ops && ops->class_opts)
		err = ops->class_opts(cl, n);
	err = err ?: rtnl_class_add(sk, cl, flags);
	rtnl_class_put(cl);
	if (err)
		qos_dbg("%s class %x:%x: %s", n->kind, n->handle >> 16, n->handle & 0xffff,
			nl_geterror(err));
	return qos_nl_errno(err);
}

/*
 * Replace changes a leaf of the same kind in place, keeping its queue. A
 * leaf of another kind under the same handle is refused (EINVAL) by the
 * kernel: delete it (the class falls back to a default pfifo meanwhile,
 * nothing is dropped but that leaf's backlog) and add the new one.
 */
static int add_leaf(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		    const struct qos_tc_node *n)
{
	struct rtnl_qdisc *q;
	int err;

	err = add_qdisc(sk, ifindex, meta, n);
	if (err != -EINVAL)
		return err;
	q = rtnl_qdisc_alloc();
	if (!q)
		return -ENOMEM;
	rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
	rtnl_tc_set_parent(TC_CAST(q), n->parent);
	rtnl_tc_set_handle(TC_CAST(q), n->handle);
	err = qos_nl_errno(rtnl_qdisc_delete(sk, q));
	rtnl_qdisc_put(q);
	return err ?: add_qdisc(sk, ifindex, meta, n);
}

/* PRIO and TBF refuse to exist without parameters (libnl asserts on a
 * PRIO without a priomap): give the probe the smallest valid ones. HTB
 * gets libnl's defaults. */
static int probe_qdisc(struct nl_sock *sk, const char *kind, uint32_t handle)
{
	struct qos_tc_node n;

	qos_tc_node_init(&n, kind, 0, TC_H_ROOT, handle);
	if (!strcmp(kind, "htb")) {
		qos_tc_arg_add(&n, "default", QOS_TU_HEX, 0);
		qos_tc_arg_add(&n, "r2q", QOS_TU_NUM, QOS_HTB_R2Q);
	} else if (!strcmp(kind, "prio")) {
		qos_tc_arg_add(&n, "bands", QOS_TU_NUM, 2);
		qos_tc_arg_add(&n, "priomap", QOS_TU_REPEAT, 0);
	} else if (!strcmp(kind, "tbf")) {
		qos_tc_arg_add(&n, "rate", QOS_TU_BIT, 1000000);
		qos_tc_arg_add(&n, "burst", QOS_TU_BYTES, 2 * QOS_MTU_FRAME);
		qos_tc_arg_add(&n, "limit", QOS_TU_BYTES, 2 * QOS_MTU_FRAME);
	}
	return add_qdisc(sk, 1, NULL, &n);
}

/* Every kind qosctl may build, probed together: one throw-away namespace
 * costs tens of milliseconds, most of an apply. */
static const char *const probe_kinds[] = { "htb", "fq_codel", "prio", "tbf" };

/* 1 if this kernel has the qdisc @kind, 0 if not, -errno if the probe
 * itself could not run (no CAP_SYS_ADMIN for a namespace, say): that must
 * not read as a missing qdisc. The probe child exits with the kinds' bits,
 * or with PROBE_FAILED and the errno in the low bits. */
#define PROBE_FAILED 0x80

/* The probe: the kinds' bits, or -errno. */
static int probe_fork(void)
{
	int status;
	pid_t pid;

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
	return WEXITSTATUS(status);
}

/* The kinds' bits: from the record of an earlier probe of this kernel
 * (kernel/kfacts.c), else probed and recorded. */
static int probe_kinds_bits(void)
{
	char kinds[64] = "";
	uint32_t bits;
	unsigned int k;
	int ret;

	for (k = 0; k < ARRAY_SIZE(probe_kinds); k++)
		snprintf(kinds + strlen(kinds), sizeof(kinds) - strlen(kinds), "%s%s",
			 k ? "," : "", probe_kinds[k]);
	if (!qos_kfacts_read(kinds, &bits))
		return bits;
	ret = probe_fork();
	if (ret >= 0)
		qos_kfacts_write(kinds, ret);
	return ret;
}

int qos_qdisc_available(const char *kind)
{
	static int avail = -1;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(probe_kinds); i++)
		if (!strcmp(probe_kinds[i], kind))
			break;
	if (i == ARRAY_SIZE(probe_kinds))
		return 0;
	if (avail < 0) {
		int ret = probe_kinds_bits();

		if (ret < 0)
			return ret;
		avail = ret;
	}
	return !!(avail & 1 << i);
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
		return qos_nl_errno(err);
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

struct install {
	struct nl_sock *sk;
	int ifindex;
	bool fresh;
};

static int install_node(const struct qos_meta *meta, const struct qos_tc_node *n, void *ctx)
{
	const struct install *in = ctx;

	if ((n->flags & QOS_TCN_FRESH) && !in->fresh)
		return 0;
	if (n->flags & QOS_TCN_CLASS)
		return add_class(in->sk, in->ifindex, meta, n, NLM_F_CREATE);
	if (n->flags & QOS_TCN_LEAF)
		return add_leaf(in->sk, in->ifindex, meta, n);
	return add_qdisc(in->sk, in->ifindex, meta, n);
}

int qos_tree_sync(struct nl_sock *sk, int ifindex, const struct qos_meta *meta, bool fresh)
{
	const struct qos_sched_ops *ops = qos_sched_ops(meta->sched);
	struct install in = { .sk = sk, .ifindex = ifindex, .fresh = fresh };
	int err;

	if (!ops->walk)
		return 0;
	if (fresh) {
		err = clear_other_root(sk, ifindex, meta);
		if (err)
			return err;
	}
	return ops->walk(meta, install_node, &in);
}

int qos_tree_class_change(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			  const struct qos_tc_node *n)
{
	/* Without NLM_F_CREATE: a class that is gone stays gone (ENOENT). */
	return add_class(sk, ifindex, meta, n, 0);
}

int qos_tree_prune(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
		   const struct qos_meta *old)
{
	const struct qos_sched_ops *ops = qos_sched_ops(meta->sched);

	return ops->prune ? ops->prune(sk, ifindex, meta, old) : 0;
}

int qos_tree_class_stats(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			 const struct qos_meta_class *mc, struct qos_class_stats *st)
{
	return qos_sched_ops(meta->sched)->class_stats(sk, ifindex, meta, mc, st);
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
	return qos_nl_errno(err);
}

/* The kernel's statistics of a qdisc or class, as `tc -s` prints them. */
void qos_tc_stats(struct rtnl_tc *tc, struct qos_class_stats *st)
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
		return qos_nl_errno(err);
	cl = rtnl_class_get(cache, ifindex, classid);
	if (!cl) {
		nl_cache_free(cache);
		return -ENOENT;
	}
	qos_tc_stats(TC_CAST(cl), st);
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
		return qos_nl_errno(err);
	q = rtnl_qdisc_get_by_parent(cache, ifindex, parent);
	ok = q && rtnl_tc_get_handle(TC_CAST(q)) == handle;
	if (ok)
		qos_tc_stats(TC_CAST(q), st);
	rtnl_qdisc_put(q);
	nl_cache_free(cache);
	return ok ? 0 : -ENOENT;
}
