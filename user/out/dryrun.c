// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The dry-run prints the plan apply installs (txn/plan.c): the tree as its
 * scheduler kind walks it for the installer (kernel/sched.h), every node a
 * tc command; selftests/dryrun.sh holds the two against each other with
 * tc -j.
 *
 * The output is a shell script: tc commands, and the map contents as
 * comments. Sizes are printed in bytes and rates in bit/s, as tc reads
 * them, so nothing is rounded on the way.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <linux/pkt_sched.h>

#include <bpf/libbpf.h>

#include "kernel/bpfobj.h"
#include "kernel/ifb.h"
#include "kernel/sched.h"
#include "lib/util.h"
#include "model/linklayer.h"
#include "model/profile.h"
#include "model/reserve.h"
#include "model/rule.h"
#include "out/dryrun.h"
#include "out/print.h"

/* The link layer as tc's shapers take it, after a rate; nothing for the
 * default. PTM is in the rates (qos_ll_rate()). */
static const char *ll_args(const struct qos_meta *meta, char *buf, size_t len)
{
	if (!meta->overhead && !meta->mpu && meta->linklayer != QOS_LL_ATM)
		return "";
	snprintf(buf, len, " overhead %u mpu %u linklayer %s", meta->overhead, meta->mpu,
		 meta->linklayer == QOS_LL_ATM ? "atm" : "ethernet");
	return buf;
}

/* One option as tc reads it: " rate 20000000bit", " limit 16". */
static void print_arg(struct qos_pr *p, const struct qos_tc_arg *a)
{
	static const char *const unit[] = {
		[QOS_TU_NUM] = "%llu", [QOS_TU_HEX] = "%llx", [QOS_TU_BIT] = "%llubit",
		[QOS_TU_BYTES] = "%llub", [QOS_TU_WORD] = "%s", [QOS_TU_REPEAT] = "%llu",
	};
	char fmt[48];
	unsigned int i;

	snprintf(fmt, sizeof(fmt), " %s %s", a->key, unit[a->unit]);
	if (a->unit == QOS_TU_WORD) {
		qos_pr_string(p, QP_ANY, a->key, fmt, a->s);
	} else if (a->unit == QOS_TU_REPEAT) {
		qos_pr_text(p, " %s", a->key);
		qos_pr_open_array(p, a->key);
		for (i = 0; i < a->n; i++)
			qos_pr_u64(p, QP_ANY, NULL, " %llu", a->v);
		qos_pr_close_array(p);
	} else {
		qos_pr_u64(p, QP_ANY, a->key, fmt, a->v);
	}
}

struct tree_print {
	struct qos_pr *p;
	const char *dev;
};

/* A node of the tree as the tc command that makes it. */
static int print_node(const struct qos_meta *meta, const struct qos_tc_node *n, void *ctx)
{
	const struct tree_print *t = ctx;
	bool cls = n->flags & QOS_TCN_CLASS;
	struct qos_pr *p = t->p;
	char a[16];
	unsigned int i;

	qos_pr_open_object(p, NULL);
	qos_pr_string(p, QP_ANY, "object", "tc %s replace", cls ? "class" : "qdisc");
	qos_pr_text(p, " dev %s", t->dev);
	if (n->parent == TC_H_ROOT)
		qos_pr_string(p, QP_ANY, "parent", " %s", "root");
	else
		qos_pr_string(p, QP_ANY, "parent", " parent %s",
			      qos_tc_handle_str(n->parent, a, sizeof(a)));
	qos_pr_string(p, QP_ANY, cls ? "classid" : "handle", cls ? " classid %s" : " handle %s",
		      qos_tc_handle_str(n->handle, a, sizeof(a)));
	qos_pr_string(p, QP_ANY, "kind", " %s", n->kind);
	for (i = 0; i < n->nargs; i++)
		print_arg(p, &n->args[i]);
	qos_pr_nl(p);
	qos_pr_close_object(p);
	return 0;
}

/* The tree of @meta on @dev, as its scheduler kind walks it. */
static void print_tree(struct qos_pr *p, const char *key, const char *dev,
		       const struct qos_meta *meta)
{
	const struct qos_sched_ops *ops = qos_sched_ops(meta->sched);
	struct tree_print t = { .p = p, .dev = dev };

	if (!ops->walk)
		return;
	qos_pr_open_array(p, key);
	ops->walk(meta, print_node, &t);
	qos_pr_close_array(p);
}

static const char *class_name(const struct qos_meta *meta, uint32_t id)
{
	return qos_meta_class_name(meta, id) ?: "-";
}

/* DSCP table of one family as runs: "0-7 be(3), 8 lbe(4), ...". */
static void print_table(struct qos_pr *p, const struct qos_meta *meta, const uint8_t *tab)
{
	int d = 0, e;

	while (d < QOS_DSCP_MAX) {
		for (e = d; e + 1 < QOS_DSCP_MAX && tab[e + 1] == tab[d]; e++)
			;
		if (e > d)
			qos_pr_text(p, " %d-%d:%s", d, e, class_name(meta, tab[d]));
		else
			qos_pr_text(p, " %d:%s", d, class_name(meta, tab[d]));
		d = e + 1;
	}
	qos_pr_nl(p);
}

static void print_cfg_class(struct qos_pr *p, const struct qos_cfg *cfg,
			    const struct qos_meta_class *mc)
{
	static const char *const fam[QOS_TABLE_MAX] = { "ipv4", "ipv6" };
	char a[16];
	unsigned int t;

	qos_pr_text(p, "#   class %u %s -> %s", mc->id, mc->name,
		    qos_tc_handle_str(cfg->classid[mc->id], a, sizeof(a)));
	for (t = 0; t < QOS_TABLE_MAX; t++)
		if (cfg->egress_remark[t][mc->id] & QOS_REMARK_F)
			qos_pr_text(p, ", %s egress remark to dscp %u", fam[t],
				    cfg->egress_remark[t][mc->id] & 0x3f);
	qos_pr_nl(p);
}

static void print_cfg(struct qos_pr *p, const struct qos_meta *meta, const struct qos_cfg *cfg)
{
	static const char *const fam[QOS_TABLE_MAX] = { "ipv4", "ipv6" };
	unsigned int i, t;

	qos_pr_text(p, "# configuration (qos_cfg):\n");
	qos_pr_text(p, "#   mark-mask 0x%08x shift %u default-class %s(%u) nd-class %s(%u) non-ip-class %s(%u)\n",
		    cfg->mark_mask, cfg->mark_shift, class_name(meta, cfg->default_class),
		    cfg->default_class, class_name(meta, cfg->nd_class), cfg->nd_class,
		    class_name(meta, cfg->nonip_class), cfg->nonip_class);
	if (cfg->ack_class)
		qos_pr_text(p, "#   ack-class %s(%u): pure TCP ACKs of the default class\n",
			    class_name(meta, cfg->ack_class), cfg->ack_class);
	if (cfg->flags & QOS_CFG_F_WASH)
		qos_pr_text(p, "#   wash: every class leaves with dscp 0 unless it has its own egress remark\n");
	if (cfg->tunnel_dscp != QOS_TUNNEL_AUTO)
		qos_pr_text(p, "#   tunnel-dscp %s: 6in4 is classified by its %s DSCP\n",
			    qos_tunnel_dscp_name(cfg->tunnel_dscp),
			    qos_tunnel_dscp_name(cfg->tunnel_dscp));
	for (i = 0; i < meta->nclasses; i++)
		print_cfg_class(p, cfg, &meta->classes[i]);
	for (t = 0; t < QOS_TABLE_MAX; t++) {
		qos_pr_text(p, "#   %s dscp:", fam[t]);
		print_table(p, meta, cfg->dscp_class[t]);
	}
}

#define MIB(b)	((double)(b) / (1 << 20))

/*
 * One line after a successful apply: the tree as the kernel now has it,
 * rates as resolved (a class's share of the link in bit/s, not the
 * profile's percentage), so a wrong unit shows at once.
 */
static void print_applied(struct qos_pr *p, const char *ifname, const struct qos_cfg *cfg)
{
	const struct qos_meta *meta = &cfg->meta;
	const struct qos_sched_ops *ops = qos_sched_ops(meta->sched);
	char a[32], b[32], ll[64], ifb[IF_NAMESIZE];
	unsigned int i;

	qos_pr_text(p, "dev %s: applied %s at %s%s", ifname, meta->profile,
		    qos_fmt_rate(meta->rate_bps, a, sizeof(a)), ll_args(meta, ll, sizeof(ll)));
	if (!ops->walk) {
		qos_pr_text(p, ", policing only (root qdisc untouched)\n");
		return;
	}
	qos_pr_text(p, ", %s", ops->name);
	if (qos_meta_queues(meta) > 1)
		qos_pr_text(p, " on each of %u TX queues under mq, at 1/%u of these rates",
			    qos_meta_queues(meta), qos_meta_queues(meta));
	for (i = 0; i < meta->nclasses; i++) {
		const struct qos_meta_class *mc = &meta->classes[i];

		qos_pr_text(p, "%s %s rate %s ceil %s prio %u", i ? ";" : ":", mc->name,
			    qos_fmt_rate(mc->rate_bps, a, sizeof(a)),
			    qos_fmt_rate(mc->ceil_bps, b, sizeof(b)), mc->prio);
	}
	if (cfg->ifb.rate_bps) {
		qos_ifb_name(meta->ifindex, ifb);
		qos_pr_text(p, "; downloads shaped at %s through %s",
			    qos_fmt_rate(cfg->ifb.rate_bps, a, sizeof(a)), ifb);
	}
	qos_pr_nl(p);
}

void qos_print_applied(FILE *f, const char *ifname, const struct qos_cfg *cfg)
{
	struct qos_pr *p = qos_pr_open(f, false);

	if (!p)
		return;
	print_applied(p, ifname, cfg);
	qos_pr_close(p);
}

static void print_mem(struct qos_pr *p, const char *prefix, uint32_t rule_entries)
{
	int ncpus = libbpf_num_possible_cpus(), rows = qos_cpu_rows();
	struct qos_profile_mem m;
	uint64_t total;

	if (ncpus < 0 || rows < 0) {
		qos_pr_text(p, "%skernel memory: unknown (possible CPUs: %s)\n", prefix,
			    strerror(ncpus < 0 ? -ncpus : -rows));
		return;
	}
	total = qos_mem_bytes(rule_entries, ncpus, rows, &m);
	qos_pr_text(p, "%skernel memory: %.1f MiB per interface on %d CPUs (rule table of %u: "
		    "hash %.1f MiB full, counters %.1f MiB, policers %.1f MiB if each rule has one; "
		    "other maps %.1f MiB)\n", prefix,
		    MIB(total), ncpus, rule_entries, MIB(m.rule_hash), MIB(m.rule_stats),
		    MIB(m.rule_police), MIB(m.counters + m.other));
}

void qos_print_mem(FILE *f, const char *prefix, uint32_t rule_entries)
{
	struct qos_pr *p = qos_pr_open(f, false);

	if (!p)
		return;
	print_mem(p, prefix, rule_entries);
	qos_pr_close(p);
}

/* Download shaping: the IFB and its tree, the device's twin at the
 * ingress rate. */
static void print_ifb(struct qos_pr *p, const char *ifname, const struct qos_plan *plan)
{
	char ifb[IF_NAMESIZE], rate[32];

	if (!qos_plan_has_ifb(plan))
		return;
	qos_ifb_name(if_nametoindex(ifname), ifb);
	qos_pr_text(p, "# download shaping at %s: ingress redirects what arrives on %s to %s\n",
		    qos_fmt_rate(plan->cfg.ifb.rate_bps, rate, sizeof(rate)), ifname, ifb);
	qos_pr_text(p, "ip link add %s type ifb  # kept if qosctl created it already\n", ifb);
	qos_pr_text(p, "ip link set %s up\n", ifb);
	print_tree(p, "ifb_tc", ifb, &plan->cfg.ifb);
}

/* The programs' hooks: tcx lists, or clsact filters as tc would add them. */
static void print_hooks(struct qos_pr *p, const char *ifname, const struct qos_plan *plan,
			bool clsact, bool tcx)
{
	const char *place = plan->cfg.meta.flags & QOS_META_F_TCX_LAST ? "last" : "first";
	bool in = qos_plan_needs_ingress(plan);

	if (tcx) {
		if (in)
			qos_pr_text(p, "# tcx ingress of %s, %s: bpf qos_ingress\n", ifname, place);
		qos_pr_text(p, "# tcx egress of %s, %s: bpf qos_egress\n", ifname, place);
	} else {
		if (!clsact)
			qos_pr_text(p, "tc qdisc add dev %s clsact\n", ifname);
		if (in)
			qos_pr_text(p, "# tc filter dev %s ingress pref %u handle 0x%x: bpf qos_ingress, "
				    "direct-action\n", ifname, QOS_TC_PRIO, QOS_TC_HANDLE);
		qos_pr_text(p, "# tc filter dev %s egress pref %u handle 0x%x: bpf qos_egress, "
			    "direct-action\n", ifname, QOS_TC_PRIO, QOS_TC_HANDLE);
	}
	if (!in)
		qos_pr_text(p, "# no ingress filter: no policer and no rule act at ingress, and the egress\n"
			    "#  program classifies by itself\n");
}

void qos_dry_run(FILE *f, const char *ifname, const char *path, uint64_t link_bps,
		 const struct qos_plan *plan, bool clsact, bool tcx)
{
	const struct qos_meta *meta = &plan->cfg.meta;
	struct qos_pr *p = qos_pr_open(f, false);
	char rate[32];
	size_t i, live = 0;

	if (!p)
		return;
	qos_pr_text(p, "# qosctl apply %s dev %s rate %s --dry-run: nothing was changed\n", path,
		    ifname, qos_fmt_rate(link_bps, rate, sizeof(rate)));
	if (qos_meta_queues(meta) > 1)
		qos_pr_text(p, "# queues %u: a tree per TX queue at 1/%u of every rate; the egress "
			    "program spreads flows over them by their hash\n",
			    qos_meta_queues(meta), qos_meta_queues(meta));
	print_tree(p, "tc", ifname, meta);
	print_ifb(p, ifname, plan);
	print_hooks(p, ifname, plan, clsact, tcx);
	qos_pr_text(p, "# (qosctl loads the programs from its embedded object, or keeps the ones\n"
		    "#  running when they are the same; nothing is pinned)\n");
	print_cfg(p, meta, &plan->cfg);
	for (i = 0; i < plan->rules.n; i++)
		live += !plan->rules.r[i].profile;
	qos_pr_text(p, "# rules: %zu from the profile, %zu live kept; rule table of %u entries\n",
		    plan->rules.n - live, live, plan->rule_entries);
	print_mem(p, "# ", plan->rule_entries);
	qos_pr_close(p);
}
