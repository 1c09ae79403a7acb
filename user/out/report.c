// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `qosctl show` and `qosctl stats`: a table by default (the stats table is
 * out/stats_text.c), JSON with -j (json-c), in the iproute2 habit.
 */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>

#include "model/profile.h"
#include "out/policer.h"
#include "out/report.h"
#include "lib/util.h"

static struct qos_ctr fam_total(const struct qos_report_class *rc, int d, int f)
{
	struct qos_ctr s = {};
	int v;

	for (v = 0; v < QOS_V_MAX; v++) {
		s.packets += rc->ctr[d][f][v].packets;
		s.bytes += rc->ctr[d][f][v].bytes;
	}
	return s;
}

static json_object *ctr_json(const struct qos_ctr *c)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "packets", json_object_new_uint64(c->packets));
	json_object_object_add(o, "bytes", json_object_new_uint64(c->bytes));
	return o;
}

static void fmt_classid(uint32_t h, char *buf, size_t len)
{
	snprintf(buf, len, "%x:%x", h >> 16, h & 0xffff);
}

static json_object *qstats_json(const struct qos_class_stats *q)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "sent_bytes", json_object_new_uint64(q->bytes));
	json_object_object_add(o, "sent_packets", json_object_new_uint64(q->packets));
	json_object_object_add(o, "drops", json_object_new_uint64(q->drops));
	json_object_object_add(o, "overlimits", json_object_new_uint64(q->overlimits));
	json_object_object_add(o, "requeues", json_object_new_uint64(q->requeues));
	json_object_object_add(o, "backlog_bytes", json_object_new_uint64(q->backlog_bytes));
	json_object_object_add(o, "backlog_packets", json_object_new_uint64(q->backlog_packets));
	return o;
}

/* The named rules the report holds, with their hits. */
static json_object *rules_json(const struct qos_report *r)
{
	json_object *o = json_object_new_object();
	json_object *a = json_object_new_array();
	unsigned int i;

	json_object_object_add(o, "installed", json_object_new_uint64(r->nrules));
	json_object_object_add(o, "named", json_object_new_uint64(r->nrules_named));
	for (i = 0; i < r->nreport_rules; i++) {
		const struct qos_report_rule *rr = &r->rules[i];
		json_object *ro = ctr_json(&rr->hits);

		json_object_object_add(ro, "id", json_object_new_uint64(rr->id));
		json_object_object_add(ro, "name", json_object_new_string(rr->name));
		json_object_object_add(ro, "class",
				       json_object_new_string(qos_report_class_name(r, rr->class_id)));
		json_object_array_add(a, ro);
	}
	json_object_object_add(o, "hits", a);
	return o;
}

static json_object *class_stats_json(const struct qos_meta *meta,
				     const struct qos_report_class *rc, bool details)
{
	json_object *o = json_object_new_object();
	unsigned int q;
	char cid[16];
	int d, f, v;

	fmt_classid(rc->mc.classid, cid, sizeof(cid));
	json_object_object_add(o, "name", json_object_new_string(rc->mc.name));
	json_object_object_add(o, "id", json_object_new_int(rc->mc.id));
	json_object_object_add(o, "classid", json_object_new_string(cid));
	for (d = 0; d < QOS_DIR_MAX; d++) {
		json_object *dir = json_object_new_object();

		for (f = 0; f < QOS_FAM_MAX; f++) {
			struct qos_ctr tot = fam_total(rc, d, f);
			json_object *fo = ctr_json(&tot);

			if (details || rc->police.set) {
				json_object *vo = json_object_new_object();

				for (v = 0; v < QOS_V_MAX; v++)
					json_object_object_add(vo, qos_verdict_names[v],
							       ctr_json(&rc->ctr[d][f][v]));
				json_object_object_add(fo, "verdicts", vo);
			}
			json_object_object_add(dir, qos_family_names[f], fo);
		}
		json_object_object_add(o, qos_dir_names[d], dir);
	}
	if (rc->police.set)
		json_object_object_add(o, "police", qos_police_stats_json(&rc->police));
	if (rc->have_q)
		json_object_object_add(o, "qdisc", qstats_json(&rc->q));
	if (rc->have_q && qos_meta_queues(meta) > 1) {
		json_object *qa = json_object_new_array();

		for (q = 0; q < qos_meta_queues(meta) && q < QOS_MAX_QUEUES; q++) {
			json_object *qo = qstats_json(&rc->qq[q]);

			fmt_classid(qos_queue_class(meta, &rc->mc, q).classid, cid, sizeof(cid));
			json_object_object_add(qo, "classid", json_object_new_string(cid));
			json_object_array_add(qa, qo);
		}
		json_object_object_add(o, "queues", qa);
	}
	if (rc->have_iq)
		json_object_object_add(o, "ingress_qdisc", qstats_json(&rc->iq));
	return o;
}

/* Download shaping: the ingress rate and the IFB, when there is one. */
static void ingress_json(json_object *o, const struct qos_report *r)
{
	if (!r->cfg.ifb.rate_bps)
		return;
	json_object_object_add(o, "ingress_rate_bps", json_object_new_uint64(r->cfg.ifb.rate_bps));
	json_object_object_add(o, "ifb", r->ifb[0] ? json_object_new_string(r->ifb) : NULL);
}

static void print_json(FILE *f, json_object *o)
{
	fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

void qos_report_stats(FILE *f, const struct qos_report *r, bool json, unsigned int view)
{
	bool details = view & QOS_STATS_DETAILS;
	unsigned int i, d, v;

	if (json) {
		json_object *o = json_object_new_object();
		json_object *cls = json_object_new_array();
		json_object *unp = json_object_new_object();

		json_object_object_add(o, "dev", json_object_new_string(r->dev));
		json_object_object_add(o, "profile", json_object_new_string(r->meta.profile));
		json_object_object_add(o, "rate_bps", json_object_new_uint64(r->meta.rate_bps));
		ingress_json(o, r);
		for (i = 0; i < r->meta.nclasses; i++)
			json_object_array_add(cls, class_stats_json(&r->meta, &r->cls[i], details));
		json_object_object_add(o, "classes", cls);
		for (d = 0; d < QOS_DIR_MAX; d++) {
			json_object *dir = json_object_new_object();

			for (v = QOS_UNP_NONE + 1; v < QOS_UNP_MAX; v++)
				json_object_object_add(dir, qos_unparsed_names[v],
						       ctr_json(&r->unparsed[d][v]));
			json_object_object_add(unp, qos_dir_names[d], dir);
		}
		json_object_object_add(o, "unparsed", unp);
		if (r->have_root)
			json_object_object_add(o, "qdisc", qstats_json(&r->root));
		if (r->have_iroot)
			json_object_object_add(o, "ingress_qdisc", qstats_json(&r->iroot));
		json_object_object_add(o, "rules", rules_json(r));
		print_json(f, o);
		return;
	}
	qos_stats_text(f, r, view);
}

static json_object *dscp_json(uint64_t set)
{
	json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < QOS_DSCP_MAX; i++)
		if (set & (1ULL << i))
			json_object_array_add(a, json_object_new_int(i));
	return a;
}

static void print_dscp(FILE *f, uint64_t set)
{
	int i, n = 0;

	for (i = 0; i < QOS_DSCP_MAX; i++) {
		int j = i;

		if (!(set & (1ULL << i)))
			continue;
		while (j + 1 < QOS_DSCP_MAX && (set & (1ULL << (j + 1))))
			j++;
		fprintf(f, "%s%d", n++ ? "," : "", i);
		if (j > i)
			fprintf(f, "-%d", j);
		i = j;
	}
	if (!n)
		fputc('-', f);
}

static const char *attach_name(const struct qos_report *r)
{
	return r->attach == QOS_ATTACH_TCX ? "tcx" : "clsact";
}

static json_object *show_class_json(const struct qos_report *r, unsigned int i,
				    const char *const names[QOS_MAX_CLASSES])
{
	const struct qos_meta_class *mc = &r->cls[i].mc;
	json_object *c = json_object_new_object();
	char cid[16];

	fmt_classid(mc->classid, cid, sizeof(cid));
	json_object_object_add(c, "name", json_object_new_string(mc->name));
	json_object_object_add(c, "id", json_object_new_int(mc->id));
	json_object_object_add(c, "classid", json_object_new_string(cid));
	json_object_object_add(c, "rate_bps", json_object_new_uint64(mc->rate_bps));
	json_object_object_add(c, "ceil_bps", json_object_new_uint64(mc->ceil_bps));
	json_object_object_add(c, "priority", json_object_new_int(mc->prio));
	json_object_object_add(c, "leaf", json_object_new_string(qos_leaf_name(mc->leaf)));
	json_object_object_add(c, "leaf_limit", json_object_new_int64(mc->leaf_limit));
	json_object_object_add(c, "default",
			       json_object_new_boolean(mc->id == r->meta.default_class));
	json_object_object_add(c, "dscp4", dscp_json(r->cls[i].dscp[QOS_TABLE_IPV4]));
	json_object_object_add(c, "dscp6", dscp_json(r->cls[i].dscp[QOS_TABLE_IPV6]));
	if (r->cls[i].police.set)
		json_object_object_add(c, "police",
				       qos_police_config_json(&r->cls[i].police.pol, names));
	return c;
}

/* The probes' SLA verdicts: per probe, target, family and class. */
static json_object *sla_json(const struct pstate_sla *sla, int nsla)
{
	json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < nsla; i++) {
		const struct pstate_sla *s = &sla[i];
		json_object *e = json_object_new_object();

		json_object_object_add(e, "probe", json_object_new_string(s->probe));
		json_object_object_add(e, "target", json_object_new_string(s->target));
		json_object_object_add(e, "family", json_object_new_string(s->family));
		json_object_object_add(e, "class", json_object_new_string(s->cls));
		json_object_object_add(e, "delay_p99_ns", json_object_new_int64(s->delay_p99_ns));
		json_object_object_add(e, "delay_p99_bound_ns", s->delay_p99_bound_ns ?
				       json_object_new_uint64(s->delay_p99_bound_ns) : NULL);
		json_object_object_add(e, "loss_pct", json_object_new_double(s->loss_pct));
		json_object_object_add(e, "loss_bound_pct", s->loss_bound_pct >= 0 ?
				       json_object_new_double(s->loss_bound_pct) : NULL);
		json_object_object_add(e, "windows", json_object_new_uint64(s->windows));
		json_object_object_add(e, "age_ns", json_object_new_uint64(s->age_ns));
		json_object_object_add(e, "verdict",
				       json_object_new_string(pstate_verdict_names[s->verdict]));
		json_object_array_add(a, e);
	}
	return a;
}

static void show_sla(FILE *f, const struct pstate_sla *sla, int nsla)
{
	char d[48], l[48];
	int i;

	fprintf(f, "%-16s %-24s %-6s %-10s %-20s %-16s %7s %5s %s\n", "sla probe", "target",
		"family", "class", "rtt-p99 ms (bound)", "loss % (bound)", "windows", "age s",
		"verdict");
	for (i = 0; i < nsla; i++) {
		const struct pstate_sla *s = &sla[i];
		int n;

		n = snprintf(d, sizeof(d), "%.3f ", s->delay_p99_ns / 1e6);
		snprintf(d + n, sizeof(d) - n, s->delay_p99_bound_ns ? "(%.3f)" : "(-)",
			 s->delay_p99_bound_ns / 1e6);
		n = snprintf(l, sizeof(l), "%.2f ", s->loss_pct);
		snprintf(l + n, sizeof(l) - n, s->loss_bound_pct >= 0 ? "(%.2f)" : "(-)",
			 s->loss_bound_pct);
		fprintf(f, "%-16s %-24s %-6s %-10s %-20s %-16s %7llu %5llu %s\n", s->probe,
			s->target, s->family, s->cls, d, l, (unsigned long long)s->windows,
			(unsigned long long)(s->age_ns / 1000000000ULL),
			pstate_verdict_names[s->verdict]);
	}
}

static void show_json(FILE *f, const struct qos_report *r,
		      const char *const names[QOS_MAX_CLASSES], const struct pstate_sla *sla,
		      int nsla)
{
	json_object *o = json_object_new_object();
	json_object *progs = json_object_new_object();
	json_object *cls = json_object_new_array();
	char cid[16], mask[16];
	unsigned int i;

	json_object_object_add(o, "dev", json_object_new_string(r->dev));
	json_object_object_add(o, "profile", json_object_new_string(r->meta.profile));
	json_object_object_add(o, "rate_bps", json_object_new_uint64(r->meta.rate_bps));
	ingress_json(o, r);
	json_object_object_add(o, "scheduler",
			       json_object_new_string(qos_sched_name(r->meta.sched)));
	snprintf(cid, sizeof(cid), "%x:", r->meta.qdisc_handle >> 16);
	json_object_object_add(o, "handle", json_object_new_string(cid));
	json_object_object_add(o, "queues", json_object_new_int64(qos_meta_queues(&r->meta)));
	snprintf(mask, sizeof(mask), "0x%08x", r->cfg.mark_mask);
	json_object_object_add(o, "mark_mask", json_object_new_string(mask));
	json_object_object_add(o, "wash", json_object_new_boolean(r->cfg.flags & QOS_CFG_F_WASH));
	json_object_object_add(o, "tunnel_dscp",
			       json_object_new_string(qos_tunnel_dscp_name(r->cfg.tunnel_dscp)));
	json_object_object_add(o, "ack_class",
			       r->cfg.ack_class ?
			       json_object_new_string(names[r->cfg.ack_class & (QOS_MAX_CLASSES - 1)] ?: "?") :
			       NULL);
	json_object_object_add(o, "overhead", json_object_new_int64(r->meta.overhead));
	json_object_object_add(o, "mpu", json_object_new_int64(r->meta.mpu));
	json_object_object_add(o, "linklayer",
			       json_object_new_string(qos_linklayer_name(r->meta.linklayer)));
	json_object_object_add(o, "attach", json_object_new_string(attach_name(r)));
	if (r->attach == QOS_ATTACH_TCX)
		json_object_object_add(o, "tcx_place", json_object_new_string(
			r->meta.flags & QOS_META_F_TCX_LAST ? "last" : "first"));
	/* null: no program attached at that hook. */
	for (i = 0; i < QOS_DIR_MAX; i++)
		json_object_object_add(progs, i ? "egress" : "ingress",
				       r->prog_id[i] ? json_object_new_int64(r->prog_id[i]) : NULL);
	json_object_object_add(o, "programs", progs);
	if (r->confirm_left >= 0)
		json_object_object_add(o, "rollback_in_s", json_object_new_int64(r->confirm_left));
	for (i = 0; i < r->meta.nclasses; i++)
		json_object_array_add(cls, show_class_json(r, i, names));
	json_object_object_add(o, "classes", cls);
	json_object_object_add(o, "sla", sla_json(sla, nsla));
	print_json(f, o);
}

/* Where the programs run: clsact's filter, or the place in each tcx list. */
static void show_programs(FILE *f, const struct qos_report *r)
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
		fprintf(f, "programs: ingress id %u, egress id %u (%s)\n", r->prog_id[0],
			r->prog_id[1], where);
	else
		fprintf(f, "programs: egress id %u alone (%s): nothing acts at ingress\n",
			r->prog_id[1], where);
}

static void show_class(FILE *f, const struct qos_report *r, unsigned int i,
		       const char *const names[QOS_MAX_CLASSES])
{
	const struct qos_meta_class *mc = &r->cls[i].mc;
	char a[32], b[32], cid[16], leaf[32];

	if (r->meta.sched == QOS_SCHED_NONE) {
		/* No qdisc tree: nothing but the DSCPs and policers. */
		fprintf(f, "%-10s %3u %-8s %-10s %-10s %4s %-16s ", mc->name, mc->id, "-", "-",
			"-", "-", "-");
	} else {
		fmt_classid(mc->classid, cid, sizeof(cid));
		if (mc->leaf == QOS_LEAF_FQ_CODEL)
			snprintf(leaf, sizeof(leaf), "fq_codel");
		else
			snprintf(leaf, sizeof(leaf), "%s %u%s", qos_leaf_name(mc->leaf),
				 mc->leaf_limit, mc->leaf == QOS_LEAF_BFIFO ? "b" : "p");
		fprintf(f, "%-10s %3u %-8s %-10s %-10s %4u %-16s ", mc->name, mc->id, cid,
			qos_fmt_rate(mc->rate_bps, a, sizeof(a)),
			qos_fmt_rate(mc->ceil_bps, b, sizeof(b)), mc->prio, leaf);
	}
	print_dscp(f, r->cls[i].dscp[QOS_TABLE_IPV4]);
	fputs(" | ", f);
	print_dscp(f, r->cls[i].dscp[QOS_TABLE_IPV6]);
	fputs(mc->id == r->meta.default_class ? " (default)\n" : "\n", f);
	if (r->cls[i].police.set) {
		fprintf(f, "%-10s ", "");
		qos_police_print_config(f, &r->cls[i].police.pol, names);
	}
}

void qos_report_show(FILE *f, const struct qos_report *r, const struct pstate_sla *sla, int nsla,
		     bool json)
{
	const char *names[QOS_MAX_CLASSES] = {};
	char a[32], cid[16];
	unsigned int i;

	for (i = 0; i < r->meta.nclasses; i++)
		names[r->cls[i].mc.id & (QOS_MAX_CLASSES - 1)] = r->cls[i].mc.name;
	if (json) {
		show_json(f, r, names, sla, nsla);
		return;
	}
	snprintf(cid, sizeof(cid), "%x:", r->meta.qdisc_handle >> 16);
	fprintf(f, "dev %s profile %s rate %s scheduler %s handle %s mark-mask 0x%08x%s\n",
		r->dev, r->meta.profile, qos_fmt_rate(r->meta.rate_bps, a, sizeof(a)),
		qos_sched_name(r->meta.sched), cid, r->cfg.mark_mask,
		r->cfg.flags & QOS_CFG_F_WASH ? " wash" : "");
	if (qos_meta_queues(&r->meta) > 1)
		fprintf(f, "queues %u: mq root, a tree per TX queue at 1/%u of every rate; "
			"classids are TX queue 0's\n", qos_meta_queues(&r->meta),
			qos_meta_queues(&r->meta));
	if (r->cfg.ifb.rate_bps)
		fprintf(f, "download shaping: ingress-rate %s through %s\n",
			qos_fmt_rate(r->cfg.ifb.rate_bps, a, sizeof(a)),
			r->ifb[0] ? r->ifb : "an IFB that is gone (apply again)");
	if (r->cfg.ack_class)
		fprintf(f, "pure TCP ACKs of the default class: class %s\n",
			names[r->cfg.ack_class & (QOS_MAX_CLASSES - 1)] ?: "?");
	if (r->cfg.tunnel_dscp != QOS_TUNNEL_AUTO)
		fprintf(f, "6in4 classified by its %s DSCP (tunnel-dscp %s)\n",
			qos_tunnel_dscp_name(r->cfg.tunnel_dscp),
			qos_tunnel_dscp_name(r->cfg.tunnel_dscp));
	if (r->meta.overhead || r->meta.mpu || r->meta.linklayer != QOS_LL_ETHERNET)
		fprintf(f, "overhead %u mpu %u linklayer %s\n", r->meta.overhead, r->meta.mpu,
			qos_linklayer_name(r->meta.linklayer));
	show_programs(f, r);
	if (r->confirm_left >= 0)
		fprintf(f, "unconfirmed: rolls back in %lds unless 'qosctl confirm dev %s'\n",
			r->confirm_left, r->dev);
	fprintf(f, "%-10s %3s %-8s %-10s %-10s %4s %-16s %s\n", "class", "id", "classid",
		"rate", "ceil", "prio", "leaf", "dscp (v4 | v6)");
	for (i = 0; i < r->meta.nclasses; i++)
		show_class(f, r, i, names);
	if (nsla)
		show_sla(f, sla, nsla);
}
