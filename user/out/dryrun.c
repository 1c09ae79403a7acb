// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The dry-run prints the plan apply installs (txn/plan.c), with the
 * quantum and burst rules of kernel/qdisc.c; selftests/dryrun.sh holds the
 * two against each other with tc -j.
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

#include "out/dryrun.h"
#include "kernel/bpfobj.h"
#include "kernel/ifb.h"
#include "model/profile.h"
#include "model/reserve.h"
#include "kernel/qdisc.h"
#include "lib/util.h"
#include "model/linklayer.h"
#include "model/rule.h"

static const char *hd(uint32_t h, char *buf, size_t len)
{
	if (TC_H_MIN(h))
		snprintf(buf, len, "%x:%x", h >> 16, h & 0xffff);
	else
		snprintf(buf, len, "%x:", h >> 16);
	return buf;
}

static void print_leaf(FILE *f, const char *dev, uint32_t parent, uint32_t handle,
		       const struct qos_meta_class *mc)
{
	char a[16], b[16];

	fprintf(f, "tc qdisc replace dev %s parent %s handle %s %s", dev, hd(parent, a, sizeof(a)),
		hd(handle, b, sizeof(b)), qos_leaf_name(mc->leaf));
	if (mc->leaf == QOS_LEAF_PFIFO)
		fprintf(f, " limit %u", mc->leaf_limit);
	else if (mc->leaf == QOS_LEAF_BFIFO)
		fprintf(f, " limit %ub", mc->leaf_limit);
	fputc('\n', f);
}

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

static void print_tbf(FILE *f, const char *dev, const struct qos_meta *meta, const char *where,
		      uint32_t handle, const struct qos_meta_class *mc, uint64_t rate)
{
	uint32_t frame = qos_meta_frame(meta);
	char a[16], ll[64];

	fprintf(f, "tc qdisc replace dev %s %s handle %s tbf rate %llubit burst %ub limit %ub%s\n",
		dev, where, hd(handle, a, sizeof(a)),
		(unsigned long long)qos_ll_rate(meta, rate), qos_tree_burst(frame, rate, mc->burst),
		qos_tbf_limit(frame, mc), ll_args(meta, ll, sizeof(ll)));
}

/* The HTB tree of TX queue @q (the whole tree with one queue), at @where. */
static void print_htb(FILE *f, const char *dev, const struct qos_meta *meta, const char *where,
		      unsigned int q)
{
	uint32_t major = qos_queue_handle(meta, q), frame = qos_meta_frame(meta);
	uint64_t link = meta->rate_bps / qos_meta_queues(meta);
	char a[16], b[16], ll[64];
	unsigned int i;

	fprintf(f, "tc qdisc replace dev %s %s handle %s htb default %x r2q 10\n", dev, where,
		hd(major, a, sizeof(a)), 0x10 + meta->default_class);
	fprintf(f, "tc class replace dev %s parent %s classid %s htb rate %llubit ceil %llubit prio 0 quantum %u burst %ub cburst %ub%s\n",
		dev, hd(major, a, sizeof(a)), hd(major | 1, b, sizeof(b)),
		(unsigned long long)qos_ll_rate(meta, link),
		(unsigned long long)qos_ll_rate(meta, link),
		qos_htb_quantum(link), qos_tree_burst(frame, link, 0),
		qos_tree_burst(frame, link, 0), ll_args(meta, ll, sizeof(ll)));
	for (i = 0; i < meta->nclasses; i++) {
		const struct qos_meta_class mc = qos_queue_class(meta, &meta->classes[i], q);

		fprintf(f, "tc class replace dev %s parent %s classid %s htb rate %llubit ceil %llubit prio %u quantum %u burst %ub cburst %ub%s\n",
			dev, hd(major | 1, a, sizeof(a)), hd(mc.classid, b, sizeof(b)),
			(unsigned long long)qos_ll_rate(meta, mc.rate_bps),
			(unsigned long long)qos_ll_rate(meta, mc.ceil_bps), mc.prio,
			qos_htb_quantum(mc.rate_bps), qos_tree_burst(frame, mc.rate_bps, mc.burst),
			qos_tree_burst(frame, mc.ceil_bps, mc.burst), ll_args(meta, ll, sizeof(ll)));
		print_leaf(f, dev, mc.classid, qos_queue_leaf_handle(meta, &mc, q), &mc);
	}
}

static void print_tree(FILE *f, const char *dev, const struct qos_meta *meta)
{
	uint32_t major = meta->qdisc_handle;
	char a[16], where[48];
	unsigned int i;

	switch (meta->sched) {
	case QOS_SCHED_NONE:
		/* Police only: the root qdisc is not touched. */
		return;
	case QOS_SCHED_TBF:
		print_tbf(f, dev, meta, "root", major, &meta->classes[0],
			  meta->classes[0].rate_bps);
		print_leaf(f, dev, major | 1, qos_leaf_handle(&meta->classes[0]),
			   &meta->classes[0]);
		return;
	case QOS_SCHED_PRIO: {
		uint32_t def_band = 0;

		for (i = 0; i < meta->nclasses; i++)
			if (meta->classes[i].id == meta->default_class)
				def_band = TC_H_MIN(meta->classes[i].classid) - 1;
		fprintf(f, "tc qdisc replace dev %s root handle %s prio bands %u priomap", dev,
			hd(major, a, sizeof(a)), qos_prio_bands(meta));
		for (i = 0; i <= TC_PRIO_MAX; i++)
			fprintf(f, " %u", def_band);
		fputc('\n', f);
		for (i = 0; i < meta->nclasses; i++) {
			const struct qos_meta_class *mc = &meta->classes[i];
			uint32_t parent = mc->classid;

			if (qos_prio_capped(meta, mc)) {
				snprintf(where, sizeof(where), "parent %s", hd(parent, a, sizeof(a)));
				print_tbf(f, dev, meta, where, qos_tbf_handle(mc), mc,
					  mc->ceil_bps);
				parent = qos_tbf_handle(mc) | 1;
			}
			print_leaf(f, dev, parent, qos_leaf_handle(mc), mc);
		}
		return;
	}
	default:
		break;
	}

	if (qos_meta_queues(meta) == 1) {
		print_htb(f, dev, meta, "root", 0);
		return;
	}
	fprintf(f, "tc qdisc replace dev %s root handle %s mq\n", dev, hd(major, a, sizeof(a)));
	for (i = 0; i < qos_meta_queues(meta); i++) {
		snprintf(where, sizeof(where), "parent %s", hd(TC_H_MAKE(major, i + 1), a, sizeof(a)));
		print_htb(f, dev, meta, where, i);
	}
}

static const char *class_name(const struct qos_meta *meta, uint32_t id)
{
	return qos_meta_class_name(meta, id) ?: "-";
}

/* DSCP table of one family as runs: "0-7 be(3), 8 lbe(4), ...". */
static void print_table(FILE *f, const struct qos_meta *meta, const uint8_t *tab)
{
	int d = 0, e;

	while (d < QOS_DSCP_MAX) {
		for (e = d; e + 1 < QOS_DSCP_MAX && tab[e + 1] == tab[d]; e++)
			;
		if (e > d)
			fprintf(f, " %d-%d:%s", d, e, class_name(meta, tab[d]));
		else
			fprintf(f, " %d:%s", d, class_name(meta, tab[d]));
		d = e + 1;
	}
	fputc('\n', f);
}

static void print_cfg(FILE *f, const struct qos_meta *meta, const struct qos_cfg *cfg)
{
	static const char *const fam[QOS_TABLE_MAX] = { "ipv4", "ipv6" };
	char a[16];
	unsigned int i, t;

	fprintf(f, "# configuration (qos_cfg):\n");
	fprintf(f, "#   mark-mask 0x%08x shift %u default-class %s(%u) nd-class %s(%u) non-ip-class %s(%u)\n",
		cfg->mark_mask, cfg->mark_shift, class_name(meta, cfg->default_class),
		cfg->default_class, class_name(meta, cfg->nd_class), cfg->nd_class,
		class_name(meta, cfg->nonip_class), cfg->nonip_class);
	if (cfg->ack_class)
		fprintf(f, "#   ack-class %s(%u): pure TCP ACKs of the default class\n",
			class_name(meta, cfg->ack_class), cfg->ack_class);
	if (cfg->flags & QOS_CFG_F_WASH)
		fprintf(f, "#   wash: every class leaves with dscp 0 unless it has its own egress remark\n");
	if (cfg->tunnel_dscp != QOS_TUNNEL_AUTO)
		fprintf(f, "#   tunnel-dscp %s: 6in4 is classified by its %s DSCP\n",
			qos_tunnel_dscp_name(cfg->tunnel_dscp),
			qos_tunnel_dscp_name(cfg->tunnel_dscp));
	for (i = 0; i < meta->nclasses; i++) {
		const struct qos_meta_class *mc = &meta->classes[i];

		fprintf(f, "#   class %u %s -> %s", mc->id, mc->name,
			hd(cfg->classid[mc->id], a, sizeof(a)));
		for (t = 0; t < QOS_TABLE_MAX; t++)
			if (cfg->egress_remark[t][mc->id] & QOS_REMARK_F)
				fprintf(f, ", %s egress remark to dscp %u", fam[t],
					cfg->egress_remark[t][mc->id] & 0x3f);
		fputc('\n', f);
	}
	for (t = 0; t < QOS_TABLE_MAX; t++) {
		fprintf(f, "#   %s dscp:", fam[t]);
		print_table(f, meta, cfg->dscp_class[t]);
	}
}

#define MIB(b)	((double)(b) / (1 << 20))

/*
 * One line after a successful apply: the tree as the kernel now has it,
 * rates as resolved (a class's share of the link in bit/s, not the
 * profile's percentage), so a wrong unit shows at once.
 */
void qos_print_applied(FILE *f, const char *ifname, const struct qos_cfg *cfg)
{
	const struct qos_meta *meta = &cfg->meta;
	char a[32], b[32], ll[64], ifb[IF_NAMESIZE];
	unsigned int i;

	fprintf(f, "dev %s: applied %s at %s%s", ifname, meta->profile,
		qos_fmt_rate(meta->rate_bps, a, sizeof(a)), ll_args(meta, ll, sizeof(ll)));
	if (meta->sched == QOS_SCHED_NONE) {
		fputs(", policing only (root qdisc untouched)\n", f);
		return;
	}
	fprintf(f, ", %s", qos_sched_name(meta->sched));
	if (qos_meta_queues(meta) > 1)
		fprintf(f, " on each of %u TX queues under mq, at 1/%u of these rates",
			qos_meta_queues(meta), qos_meta_queues(meta));
	for (i = 0; i < meta->nclasses; i++) {
		const struct qos_meta_class *mc = &meta->classes[i];

		fprintf(f, "%s %s rate %s ceil %s prio %u", i ? ";" : ":", mc->name,
			qos_fmt_rate(mc->rate_bps, a, sizeof(a)),
			qos_fmt_rate(mc->ceil_bps, b, sizeof(b)), mc->prio);
	}
	if (cfg->ifb.rate_bps) {
		qos_ifb_name(meta->ifindex, ifb);
		fprintf(f, "; downloads shaped at %s through %s",
			qos_fmt_rate(cfg->ifb.rate_bps, a, sizeof(a)), ifb);
	}
	fputc('\n', f);
}

void qos_print_mem(FILE *f, const char *prefix, uint32_t rule_entries)
{
	int ncpus = libbpf_num_possible_cpus();
	struct qos_profile_mem m;
	uint64_t total;

	if (ncpus < 0) {
		fprintf(f, "%skernel memory: unknown (possible CPUs: %s)\n", prefix,
			strerror(-ncpus));
		return;
	}
	total = qos_mem_bytes(rule_entries, ncpus, &m);
	fprintf(f, "%skernel memory: %.1f MiB per interface on %d CPUs (rule table of %u: "
		"hash %.1f MiB full, counters %.1f MiB, policers %.1f MiB if each rule has one; "
		"other maps %.1f MiB)\n", prefix,
		MIB(total), ncpus, rule_entries, MIB(m.rule_hash), MIB(m.rule_stats),
		MIB(m.rule_police), MIB(m.counters + m.other));
}

/* Download shaping: the IFB and its tree, the device's twin at the
 * ingress rate. */
static void print_ifb(FILE *f, const char *ifname, const struct qos_plan *plan)
{
	char ifb[IF_NAMESIZE], rate[32];

	if (!qos_plan_has_ifb(plan))
		return;
	qos_ifb_name(if_nametoindex(ifname), ifb);
	fprintf(f, "# download shaping at %s: ingress redirects what arrives on %s to %s\n",
		qos_fmt_rate(plan->cfg.ifb.rate_bps, rate, sizeof(rate)), ifname, ifb);
	fprintf(f, "ip link add %s type ifb  # kept if qosctl created it already\n", ifb);
	fprintf(f, "ip link set %s up\n", ifb);
	print_tree(f, ifb, &plan->cfg.ifb);
}

/* The programs' hooks: tcx lists, or clsact filters as tc would add them. */
static void print_hooks(FILE *f, const char *ifname, const struct qos_plan *plan, bool clsact,
			bool tcx)
{
	const char *place = plan->cfg.meta.flags & QOS_META_F_TCX_LAST ? "last" : "first";
	bool in = qos_plan_needs_ingress(plan);

	if (tcx) {
		if (in)
			fprintf(f, "# tcx ingress of %s, %s: bpf qos_ingress\n", ifname, place);
		fprintf(f, "# tcx egress of %s, %s: bpf qos_egress\n", ifname, place);
	} else {
		if (!clsact)
			fprintf(f, "tc qdisc add dev %s clsact\n", ifname);
		if (in)
			fprintf(f, "# tc filter dev %s ingress pref %u handle 0x%x: bpf qos_ingress, "
				"direct-action\n", ifname, QOS_TC_PRIO, QOS_TC_HANDLE);
		fprintf(f, "# tc filter dev %s egress pref %u handle 0x%x: bpf qos_egress, "
			"direct-action\n", ifname, QOS_TC_PRIO, QOS_TC_HANDLE);
	}
	if (!in)
		fprintf(f, "# no ingress filter: no policer and no rule act at ingress, and the egress\n"
			   "#  program classifies by itself\n");
}

void qos_dry_run(FILE *f, const char *ifname, const char *path, uint64_t link_bps,
		 const struct qos_plan *plan, bool clsact, bool tcx)
{
	char rate[32];
	size_t i, live = 0;

	fprintf(f, "# qosctl apply %s dev %s rate %s --dry-run: nothing was changed\n", path,
		ifname, qos_fmt_rate(link_bps, rate, sizeof(rate)));
	if (qos_meta_queues(&plan->cfg.meta) > 1)
		fprintf(f, "# queues %u: a tree per TX queue at 1/%u of every rate; the egress "
			"program spreads flows over them by their hash\n",
			qos_meta_queues(&plan->cfg.meta), qos_meta_queues(&plan->cfg.meta));
	print_tree(f, ifname, &plan->cfg.meta);
	print_ifb(f, ifname, plan);
	print_hooks(f, ifname, plan, clsact, tcx);
	fprintf(f, "# (qosctl loads the programs from its embedded object, or keeps the ones\n"
		   "#  running when they are the same; nothing is pinned)\n");
	print_cfg(f, &plan->cfg.meta, &plan->cfg);
	for (i = 0; i < plan->rules.n; i++)
		live += !plan->rules.r[i].profile;
	fprintf(f, "# rules: %zu from the profile, %zu live kept; rule table of %u entries\n",
		plan->rules.n - live, live, plan->rule_entries);
	qos_print_mem(f, "# ", plan->rule_entries);
}
