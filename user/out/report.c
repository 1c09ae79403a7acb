// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `qosctl show` and `qosctl stats`: a table by default (the stats table is
 * out/stats_text.c), JSON with -j, in the iproute2 habit, through the print
 * layer (out/print.h): a field both forms have is written by one call.
 */
#include <errno.h>
#include <string.h>

#include "lib/names.h"
#include "model/profile.h"
#include "out/policer.h"
#include "out/print.h"
#include "out/report.h"
#include "lib/util.h"

static void ctr_print(struct qos_pr *p, const char *key, const struct qos_ctr *c)
{
	qos_pr_open_object(p, key);
	qos_pr_u64(p, QP_JSON, "packets", NULL, c->packets);
	qos_pr_u64(p, QP_JSON, "bytes", NULL, c->bytes);
	qos_pr_close_object(p);
}

static void classid_print(struct qos_pr *p, enum qos_pr_where w, const char *fmt, uint32_t h)
{
	char cid[16];

	snprintf(cid, sizeof(cid), "%x:%x", h >> 16, h & 0xffff);
	qos_pr_string(p, w, "classid", fmt, cid);
}

/* A qdisc's (or class's) statistics: the members of an open object. */
static void qstats_members(struct qos_pr *p, const struct qos_class_stats *q)
{
	qos_pr_u64(p, QP_JSON, "sent_bytes", NULL, q->bytes);
	qos_pr_u64(p, QP_JSON, "sent_packets", NULL, q->packets);
	qos_pr_u64(p, QP_JSON, "drops", NULL, q->drops);
	qos_pr_u64(p, QP_JSON, "overlimits", NULL, q->overlimits);
	qos_pr_u64(p, QP_JSON, "requeues", NULL, q->requeues);
	qos_pr_u64(p, QP_JSON, "backlog_bytes", NULL, q->backlog_bytes);
	qos_pr_u64(p, QP_JSON, "backlog_packets", NULL, q->backlog_packets);
}

static void qstats_print(struct qos_pr *p, const char *key, const struct qos_class_stats *q)
{
	qos_pr_open_object(p, key);
	qstats_members(p, q);
	qos_pr_close_object(p);
}

/* The named rules the report holds, lowest ids first, with their hits;
 * in text with -s only, a row each under the table. */
static void rules_print(struct qos_pr *p, const struct qos_report *r, unsigned int view)
{
	int lw = view & QOS_STATS_FAMILY ? QOS_STATS_LW_FAM : QOS_STATS_LW;
	char lb[64], esc[QOS_ESC_LEN];
	unsigned int i;

	if (!qos_pr_json(p) && !(view & QOS_STATS_DETAILS))
		return;
	qos_pr_open_object(p, "rules");
	qos_pr_u32(p, QP_ANY, "installed", "rules: %u installed, ", r->nrules);
	qos_pr_u32(p, QP_ANY, "named", "%u named", r->nrules_named);
	if (r->nrules_named > r->nreport_rules)
		qos_pr_text(p, ", the first %u shown", r->nreport_rules);
	qos_pr_nl(p);
	qos_pr_open_array(p, "hits");
	for (i = 0; i < r->nreport_rules; i++) {
		const struct qos_report_rule *rr = &r->rules[i];

		qos_pr_open_object(p, NULL);
		snprintf(lb, sizeof(lb), "rule %s", qos_esc(rr->name, esc, sizeof(esc)));
		qos_pr_text(p, "%-*.*s ", lw, lw, lb);
		qos_pr_u64(p, QP_ANY, "packets", "%16llu ", rr->hits.packets);
		qos_pr_u64(p, QP_ANY, "bytes", "%20llu  ", rr->hits.bytes);
		qos_pr_u32(p, QP_ANY, "id", "id %u ", rr->id);
		qos_pr_string(p, QP_JSON, "name", NULL, rr->name);
		qos_pr_string(p, QP_ANY, "class", "class %s\n",
			      qos_report_class_name(r, rr->class_id));
		qos_pr_close_object(p);
	}
	qos_pr_close_array(p);
	qos_pr_close_object(p);
}

/* Per direction and family: the totals, and the verdicts if asked for. */
static void class_dirs_print(struct qos_pr *p, const struct qos_report_class *rc, bool details)
{
	int d, f, v;

	for (d = 0; d < QOS_DIR_MAX; d++) {
		qos_pr_open_object(p, qos_dir_names[d]);
		for (f = 0; f < QOS_FAM_MAX; f++) {
			qos_pr_open_object(p, qos_family_names[f]);
			qos_pr_u64(p, QP_JSON, "packets", NULL, rc->fam[d][f].packets);
			qos_pr_u64(p, QP_JSON, "bytes", NULL, rc->fam[d][f].bytes);
			if (details || rc->police.set) {
				qos_pr_open_object(p, "verdicts");
				for (v = 0; v < QOS_V_MAX; v++)
					ctr_print(p, qos_verdict_names[v], &rc->ctr[d][f][v]);
				qos_pr_close_object(p);
			}
			qos_pr_close_object(p);
		}
		qos_pr_close_object(p);
	}
}

static void class_stats_print(struct qos_pr *p, const struct qos_meta *meta,
			      const struct qos_report_class *rc, bool details)
{
	unsigned int q;

	qos_pr_open_object(p, NULL);
	qos_pr_string(p, QP_JSON, "name", NULL, rc->mc.name);
	qos_pr_u32(p, QP_JSON, "id", NULL, rc->mc.id);
	classid_print(p, QP_JSON, NULL, rc->mc.classid);
	class_dirs_print(p, rc, details);
	if (rc->police.set) {
		qos_pr_open_object(p, "police");
		qos_police_stats_print(p, &rc->police);
		qos_pr_close_object(p);
	}
	if (rc->have_q)
		qstats_print(p, "qdisc", &rc->q);
	if (rc->have_q && qos_meta_queues(meta) > 1) {
		qos_pr_open_array(p, "queues");
		for (q = 0; q < qos_meta_queues(meta) && q < QOS_MAX_QUEUES; q++) {
			qos_pr_open_object(p, NULL);
			qstats_members(p, &rc->qq[q]);
			classid_print(p, QP_JSON, NULL, qos_queue_class(meta, &rc->mc, q).classid);
			qos_pr_close_object(p);
		}
		qos_pr_close_array(p);
	}
	if (rc->have_iq)
		qstats_print(p, "ingress_qdisc", &rc->iq);
	qos_pr_close_object(p);
}

/* The device, its profile and rate: the first line of both tables. */
static void head_print(struct qos_pr *p, const struct qos_report *r, const char *rate_fmt)
{
	qos_pr_string(p, QP_ANY, "dev", "dev %s ", r->dev);
	qos_pr_string(p, QP_ANY, "profile", "profile %s ", r->meta.profile);
	qos_pr_rate(p, QP_ANY, "rate_bps", rate_fmt, r->meta.rate_bps);
	/* Download shaping: the ingress rate and the IFB, when there is one. */
	if (r->cfg.ifb.rate_bps) {
		qos_pr_u64(p, QP_JSON, "ingress_rate_bps", NULL, r->cfg.ifb.rate_bps);
		qos_pr_string(p, QP_JSON, "ifb", NULL, r->ifb[0] ? r->ifb : NULL);
	}
}

static void stats_json(struct qos_pr *p, const struct qos_report *r, bool details)
{
	unsigned int i, d, v;

	qos_pr_open_array(p, "classes");
	for (i = 0; i < r->meta.nclasses; i++)
		class_stats_print(p, &r->meta, &r->cls[i], details);
	qos_pr_close_array(p);
	qos_pr_open_object(p, "unparsed");
	for (d = 0; d < QOS_DIR_MAX; d++) {
		qos_pr_open_object(p, qos_dir_names[d]);
		for (v = QOS_UNP_NONE + 1; v < QOS_UNP_MAX; v++)
			ctr_print(p, qos_unparsed_names[v], &r->unparsed[d][v]);
		qos_pr_close_object(p);
	}
	qos_pr_close_object(p);
	if (r->have_root)
		qstats_print(p, "qdisc", &r->root);
	if (r->have_iroot)
		qstats_print(p, "ingress_qdisc", &r->iroot);
}

int qos_report_stats(FILE *f, const struct qos_report *r, bool json, unsigned int view)
{
	struct qos_pr *p = qos_pr_open(f, json);

	if (!p)
		return -ENOMEM;
	head_print(p, r, "rate %s");
	qos_pr_nl(p);
	if (json)
		stats_json(p, r, view & QOS_STATS_DETAILS);
	else
		qos_stats_text(p, r, view);
	rules_print(p, r, view);
	return qos_pr_close(p);
}

/* The code points of a class: a JSON array, or text ranges "0,8-10". */
static void dscp_print(struct qos_pr *p, const char *key, uint64_t set)
{
	int i, n = 0;

	qos_pr_open_array(p, key);
	for (i = 0; i < QOS_DSCP_MAX; i++) {
		int j = i;

		if (!(set & (1ULL << i)))
			continue;
		qos_pr_u32(p, QP_JSON, NULL, NULL, i);
		if (qos_pr_json(p))
			continue;
		while (j + 1 < QOS_DSCP_MAX && (set & (1ULL << (j + 1))))
			j++;
		qos_pr_text(p, "%s%d", n++ ? "," : "", i);
		if (j > i)
			qos_pr_text(p, "-%d", j);
		i = j;
	}
	if (!n)
		qos_pr_text(p, "-");
	qos_pr_close_array(p);
}

static const char *attach_name(const struct qos_report *r)
{
	return r->attach == QOS_ATTACH_TCX ? "tcx" : "clsact";
}

/* Where the programs run: clsact's filter, or the place in each tcx list. */
static void programs_text(struct qos_pr *p, const struct qos_report *r)
{
	char where[128];
	int d, n = 0;

	if (r->attach != QOS_ATTACH_TCX) {
		snprintf(where, sizeof(where), "clsact, prio %u handle 0x%x", QOS_TC_PRIO,
			 QOS_TC_HANDLE);
	} else {
		n = snprintf(where, sizeof(where), "tcx, place %s:",
			     r->meta.flags & QOS_META_F_TCX_LAST ? "last" : "first");
		for (d = 0; d < QOS_DIR_MAX; d++)
			if (r->prog_id[d] && n < (int)sizeof(where))
				n += snprintf(where + n, sizeof(where) - n, "%s %s %u of %u",
					      d && r->prog_id[0] ? "," : "", d ? "egress" : "ingress",
					      r->tcx_pos[d], r->tcx_n[d]);
	}
	if (r->prog_id[0])
		qos_pr_text(p, "programs: ingress id %u, egress id %u (%s)\n", r->prog_id[0],
			    r->prog_id[1], where);
	else
		qos_pr_text(p, "programs: egress id %u alone (%s): nothing acts at ingress\n",
			    r->prog_id[1], where);
}

/* How the programs are attached; null: no program at that hook. */
static void programs_print(struct qos_pr *p, const struct qos_report *r)
{
	int d;

	qos_pr_string(p, QP_JSON, "attach", NULL, attach_name(r));
	if (r->attach == QOS_ATTACH_TCX)
		qos_pr_string(p, QP_JSON, "tcx_place", NULL,
			      r->meta.flags & QOS_META_F_TCX_LAST ? "last" : "first");
	qos_pr_open_object(p, "programs");
	for (d = 0; d < QOS_DIR_MAX; d++)
		qos_pr_u64_opt(p, QP_JSON, d ? "egress" : "ingress", NULL, r->prog_id[d],
			       r->prog_id[d]);
	qos_pr_close_object(p);
	programs_text(p, r);
}

/* The shaping columns: "-" without a qdisc tree. */
static void class_shape_print(struct qos_pr *p, const struct qos_report *r,
			      const struct qos_meta_class *mc)
{
	enum qos_pr_where w = r->meta.sched == QOS_SCHED_NONE ? QP_JSON : QP_ANY;
	char leaf[32];

	classid_print(p, w, "%-8s ", mc->classid);
	qos_pr_rate(p, w, "rate_bps", "%-10s ", mc->rate_bps);
	qos_pr_rate(p, w, "ceil_bps", "%-10s ", mc->ceil_bps);
	qos_pr_u32(p, w, "priority", "%4u ", mc->prio);
	qos_pr_string(p, QP_JSON, "leaf", NULL, qos_leaf_name(mc->leaf));
	qos_pr_u32(p, QP_JSON, "leaf_limit", NULL, mc->leaf_limit);
	if (w == QP_JSON) {
		qos_pr_text(p, "%-8s %-10s %-10s %4s %-16s ", "-", "-", "-", "-", "-");
		return;
	}
	if (mc->leaf == QOS_LEAF_FQ_CODEL)
		snprintf(leaf, sizeof(leaf), "fq_codel");
	else
		snprintf(leaf, sizeof(leaf), "%s %u%s", qos_leaf_name(mc->leaf), mc->leaf_limit,
			 mc->leaf == QOS_LEAF_BFIFO ? "b" : "p");
	qos_pr_text(p, "%-16s ", leaf);
}

static void class_print(struct qos_pr *p, const struct qos_report *r, unsigned int i,
			const char *const names[QOS_MAX_CLASSES])
{
	const struct qos_meta_class *mc = &r->cls[i].mc;
	bool dflt = mc->id == r->meta.default_class;

	qos_pr_open_object(p, NULL);
	qos_pr_string(p, QP_ANY, "name", "%-10s ", mc->name);
	qos_pr_u32(p, QP_ANY, "id", "%3u ", mc->id);
	class_shape_print(p, r, mc);
	qos_pr_bool(p, QP_JSON, "default", NULL, dflt);
	dscp_print(p, "dscp4", r->cls[i].dscp[QOS_TABLE_IPV4]);
	qos_pr_text(p, " | ");
	dscp_print(p, "dscp6", r->cls[i].dscp[QOS_TABLE_IPV6]);
	qos_pr_text(p, dflt ? " (default)\n" : "\n");
	if (r->cls[i].police.set) {
		qos_pr_open_object(p, "police");
		qos_pr_text(p, "%-10s ", "");
		qos_police_config_print(p, &r->cls[i].police.pol, names);
		qos_pr_close_object(p);
	}
	qos_pr_close_object(p);
}

/* The probes' SLA verdicts: per probe, target, family and class. */
static void sla_print(struct qos_pr *p, const struct qos_sla_row *sla, int nsla)
{
	char d[48], l[48];
	int i, n;

	qos_pr_open_array(p, "sla");
	if (nsla)
		qos_pr_text(p, "%-16s %-24s %-6s %-10s %-20s %-16s %7s %5s %s\n", "sla probe",
			    "target", "family", "class", "rtt-p99 ms (bound)", "loss % (bound)",
			    "windows", "age s", "verdict");
	for (i = 0; i < nsla; i++) {
		const struct qos_sla_row *s = &sla[i];

		qos_pr_open_object(p, NULL);
		qos_pr_string(p, QP_ANY, "probe", "%-16s ", s->probe);
		qos_pr_string(p, QP_ANY, "target", "%-24s ", s->target);
		qos_pr_string(p, QP_ANY, "family", "%-6s ", s->family);
		qos_pr_string(p, QP_ANY, "class", "%-10s ", s->cls);
		qos_pr_s64(p, QP_JSON, "delay_p99_ns", NULL, s->delay_p99_ns);
		qos_pr_u64_opt(p, QP_JSON, "delay_p99_bound_ns", NULL, s->delay_p99_bound_ns,
			       s->delay_p99_bound_ns);
		qos_pr_double(p, QP_JSON, "loss_pct", NULL, s->loss_pct);
		qos_pr_double_opt(p, QP_JSON, "loss_bound_pct", NULL, s->loss_bound_pct,
				  s->loss_bound_pct >= 0);
		n = snprintf(d, sizeof(d), "%.3f ", s->delay_p99_ns / 1e6);
		snprintf(d + n, sizeof(d) - n, s->delay_p99_bound_ns ? "(%.3f)" : "(-)",
			 s->delay_p99_bound_ns / 1e6);
		n = snprintf(l, sizeof(l), "%.2f ", s->loss_pct);
		snprintf(l + n, sizeof(l) - n, s->loss_bound_pct >= 0 ? "(%.2f)" : "(-)",
			 s->loss_bound_pct);
		qos_pr_text(p, "%-20s %-16s ", d, l);
		qos_pr_u64(p, QP_ANY, "windows", "%7llu ", s->windows);
		qos_pr_u64(p, QP_JSON, "age_ns", NULL, s->age_ns);
		qos_pr_text(p, "%5llu ", (unsigned long long)(s->age_ns / 1000000000ULL));
		qos_pr_string(p, QP_ANY, "verdict", "%s\n", s->verdict);
		qos_pr_close_object(p);
	}
	qos_pr_close_array(p);
}

/* How the rates of a multi-queue tree are shared among its queues. */
static void queues_print(struct qos_pr *p, const struct qos_report *r)
{
	unsigned int n = qos_meta_queues(&r->meta);

	if (n > 1 && r->balance_pid) {
		qos_pr_text(p, "queues %u: mq root, a tree per TX queue, its rates shared by "
			    "demand by qosctl balance", n);
		qos_pr_open_object(p, "balance");
		qos_pr_u32(p, QP_ANY, "pid", " (pid %u", r->balance_pid);
		qos_pr_u32(p, QP_ANY, "period_ms", ", every %u ms)", r->balance_period_ms);
		qos_pr_close_object(p);
	} else {
		qos_pr_null(p, QP_JSON, "balance", NULL);
		if (n > 1)
			qos_pr_text(p, "queues %u: mq root, a tree per TX queue at 1/%u of every "
				    "rate (static split: no qosctl balance runs)", n, n);
	}
	if (n > 1)
		qos_pr_text(p, "; classids are TX queue 0's\n");
}

/* The rest of show's first line, and the device-wide settings. */
static void settings_print(struct qos_pr *p, const struct qos_report *r,
			   const char *const names[QOS_MAX_CLASSES])
{
	const struct qos_meta *m = &r->meta;
	bool ll = m->overhead || m->mpu || m->linklayer != QOS_LL_ETHERNET;
	char buf[32];

	qos_pr_string(p, QP_ANY, "scheduler", "scheduler %s ", qos_sched_name(m->sched));
	snprintf(buf, sizeof(buf), "%x:", m->qdisc_handle >> 16);
	qos_pr_string(p, QP_ANY, "handle", "handle %s ", buf);
	qos_pr_u32(p, QP_JSON, "queues", NULL, qos_meta_queues(m));
	snprintf(buf, sizeof(buf), "0x%08x", r->cfg.mark_mask);
	qos_pr_string(p, QP_ANY, "mark_mask", "mark-mask %s", buf);
	qos_pr_bool(p, QP_JSON, "wash", NULL, r->cfg.flags & QOS_CFG_F_WASH);
	qos_pr_text(p, r->cfg.flags & QOS_CFG_F_WASH ? " wash\n" : "\n");
	qos_pr_string(p, QP_JSON, "tunnel_dscp", NULL, qos_tunnel_dscp_name(r->cfg.tunnel_dscp));
	queues_print(p, r);
	if (r->cfg.ifb.rate_bps)
		qos_pr_text(p, "download shaping: ingress-rate %s through %s\n",
			    qos_fmt_rate(r->cfg.ifb.rate_bps, buf, sizeof(buf)),
			    r->ifb[0] ? r->ifb : "an IFB that is gone (apply again)");
	if (r->cfg.ack_class)
		qos_pr_string(p, QP_ANY, "ack_class", "pure TCP ACKs of the default class: class %s\n",
			      names[r->cfg.ack_class & (QOS_MAX_CLASSES - 1)] ?: "?");
	else
		qos_pr_null(p, QP_JSON, "ack_class", NULL);
	if (r->cfg.tunnel_dscp != QOS_TUNNEL_AUTO)
		qos_pr_text(p, "6in4 classified by its %s DSCP (tunnel-dscp %s)\n",
			    qos_tunnel_dscp_name(r->cfg.tunnel_dscp),
			    qos_tunnel_dscp_name(r->cfg.tunnel_dscp));
	qos_pr_u32(p, ll ? QP_ANY : QP_JSON, "overhead", "overhead %u ", m->overhead);
	qos_pr_u32(p, ll ? QP_ANY : QP_JSON, "mpu", "mpu %u ", m->mpu);
	qos_pr_string(p, ll ? QP_ANY : QP_JSON, "linklayer", "linklayer %s\n",
		      qos_linklayer_name(m->linklayer));
}

int qos_report_show(FILE *f, const struct qos_report *r, const struct qos_sla_row *sla,
		    int nsla, bool json)
{
	const char *names[QOS_MAX_CLASSES] = {};
	struct qos_pr *p = qos_pr_open(f, json);
	unsigned int i;

	if (!p)
		return -ENOMEM;
	for (i = 0; i < r->meta.nclasses; i++)
		names[r->cls[i].mc.id & (QOS_MAX_CLASSES - 1)] = r->cls[i].mc.name;
	head_print(p, r, "rate %s ");
	settings_print(p, r, names);
	programs_print(p, r);
	if (r->confirm_left >= 0) {
		qos_pr_s64(p, QP_JSON, "rollback_in_s", NULL, r->confirm_left);
		qos_pr_text(p, "unconfirmed: rolls back in %lds unless 'qosctl confirm dev %s'\n",
			    r->confirm_left, r->dev);
	}
	qos_pr_text(p, "%-10s %3s %-8s %-10s %-10s %4s %-16s %s\n", "class", "id", "classid",
		    "rate", "ceil", "prio", "leaf", "dscp (v4 | v6)");
	qos_pr_open_array(p, "classes");
	for (i = 0; i < r->meta.nclasses; i++)
		class_print(p, r, i, names);
	qos_pr_close_array(p);
	sla_print(p, sla, nsla);
	return qos_pr_close(p);
}
