// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `qosctl stats` as a table, in iproute2's habit: by default a row per
 * class and direction with both address families together, within 100
 * columns; -s adds the verdicts, policer colours, queue and unparsed
 * reasons as rows under it; --per-family gives a row per family, --wide a
 * column per family (the full table, 115 columns and more).
 */
#include <stdio.h>

#include "lib/names.h"
#include "lib/util.h"
#include "model/policer.h"
#include "out/policer.h"
#include "out/print.h"
#include "out/report.h"

#define LW	QOS_STATS_LW
#define LW_FAM	QOS_STATS_LW_FAM

/* The model's counter of direction @d, family @fam and verdict @verdict
 * (-1: all of them), summed when it was read. */
static struct qos_ctr sum(const struct qos_report_class *rc, int d, int fam, int verdict)
{
	if (fam >= 0 && verdict >= 0)
		return rc->ctr[d][fam][verdict];
	if (fam >= 0)
		return rc->fam[d][fam];
	if (verdict >= 0)
		return rc->verdict[d][verdict];
	return rc->total[d];
}

static const char *num(uint64_t v, char *buf, size_t len)
{
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

/* Label, packets, bytes, then the drop columns that are given. */
static void row(struct qos_pr *p, int lw, const char *label, uint64_t pkts, uint64_t bytes,
		const char *pdrops, const char *qdrops)
{
	qos_pr_text(p, "%-*s %16llu %20llu", lw, label, (unsigned long long)pkts,
		    (unsigned long long)bytes);
	if (pdrops || qdrops)
		qos_pr_text(p, " %13s", pdrops ?: "");
	if (qdrops)
		qos_pr_text(p, " %12s", qdrops);
	qos_pr_nl(p);
}

static const char *label(char *buf, size_t len, bool fam, const char *a, const char *b,
			 const char *c)
{
	if (fam)
		snprintf(buf, len, "%-10s %-8s %s", a, b, c);
	else
		snprintf(buf, len, "%-10s %s", a, b);
	return buf;
}

/* -s: the verdicts other than pass, per family with @fam >= 0. */
static void verdict_rows(struct qos_pr *p, const struct qos_report_class *rc, int d, int fam)
{
	char lb[64], vn[16];
	int v;

	for (v = QOS_V_PASS + 1; v < QOS_V_MAX; v++) {
		struct qos_ctr c = sum(rc, d, fam, v);

		snprintf(vn, sizeof(vn), "  %s", qos_verdict_names[v]);
		label(lb, sizeof(lb), fam >= 0, "", fam >= 0 ? "" : vn, vn);
		row(p, fam >= 0 ? LW_FAM : LW, lb, c.packets, c.bytes, NULL, NULL);
	}
}

static void dir_rows(struct qos_pr *p, const struct qos_report_class *rc, int d, unsigned int view)
{
	bool fams = view & QOS_STATS_FAMILY, details = view & QOS_STATS_DETAILS;
	const struct qos_class_stats *q = qos_report_q(rc, d);
	const char *cls = d ? "" : rc->mc.name;
	char lb[64], pd[24], qd[24];
	struct qos_ctr c, drop;
	int fm;

	if (!fams) {
		c = sum(rc, d, -1, -1);
		drop = sum(rc, d, -1, QOS_V_DROP);
		label(lb, sizeof(lb), false, cls, qos_dir_names[d], NULL);
		row(p, LW, lb, c.packets, c.bytes, num(drop.packets, pd, sizeof(pd)),
		    q ? num(q->drops, qd, sizeof(qd)) : "-");
		if (details)
			verdict_rows(p, rc, d, -1);
		return;
	}
	for (fm = 0; fm < QOS_FAM_MAX; fm++) {
		c = sum(rc, d, fm, -1);
		drop = sum(rc, d, fm, QOS_V_DROP);
		label(lb, sizeof(lb), true, fm ? "" : cls, fm ? "" : qos_dir_names[d],
		      qos_family_names[fm]);
		row(p, LW_FAM, lb, c.packets, c.bytes, num(drop.packets, pd, sizeof(pd)), NULL);
		if (details)
			verdict_rows(p, rc, d, fm);
	}
}

/* -s: what the packet and drop columns leave out of a qdisc's statistics. */
static void queue_detail(struct qos_pr *p, const struct qos_class_stats *q)
{
	qos_pr_text(p, "%-*s overlimits %llu, requeues %llu, backlog %llub %llup\n", LW, "",
		    (unsigned long long)q->overlimits, (unsigned long long)q->requeues,
		    (unsigned long long)q->backlog_bytes, (unsigned long long)q->backlog_packets);
}

/* -s: policer colours (both families, or each), then the class's queue. */
static void class_details(struct qos_pr *p, const struct qos_report_class *rc, bool fams)
{
	int lw = fams ? LW_FAM : LW, c, fm, d;
	char lb[64], qd[24];

	for (c = 0; rc->police.set && c < TB_COLOR_MAX; c++) {
		for (fm = 0; fams && fm < QOS_FAM_MAX; fm++) {
			const struct qos_ctr *x = &rc->police.ctr[fm][c];

			label(lb, sizeof(lb), true, "", fm ? "" : qos_color_names[c],
			      qos_family_names[fm]);
			row(p, lw, lb, x->packets, x->bytes, NULL, NULL);
		}
		if (!fams)
			row(p, lw, label(lb, sizeof(lb), false, "", qos_color_names[c], NULL),
			    rc->color[c].packets, rc->color[c].bytes, NULL, NULL);
	}
	/* The device's queue (egress), then the IFB's (ingress). */
	for (d = QOS_DIR_MAX; d-- > 0;) {
		const struct qos_class_stats *q = qos_report_q(rc, d);

		if (!q)
			continue;
		row(p, lw, label(lb, sizeof(lb), fams, "", d ? "queue" : "ifb queue", ""),
		    q->packets, q->bytes, "", num(q->drops, qd, sizeof(qd)));
		queue_detail(p, q);
	}
}

/* The root qdisc: everything the tree sent and dropped, whatever dropped it. */
static void root_rows(struct qos_pr *p, const struct qos_report *r, unsigned int view)
{
	bool fams = view & QOS_STATS_FAMILY;
	char lb[64], kind[24], qd[24];
	const struct qos_class_stats *q;
	int d;

	/* The device's root (egress), then the IFB's (ingress). */
	for (d = QOS_DIR_MAX; d-- > 0;) {
		q = qos_report_root(r, d);
		if (!q)
			continue;
		snprintf(kind, sizeof(kind), "%s %s", d ? "root" : "ifb",
			 d ? qos_root_kind(&r->meta) : qos_sched_name(r->meta.sched));
		label(lb, sizeof(lb), fams, kind, qos_dir_names[d], "-");
		row(p, fams ? LW_FAM : LW, lb, q->packets, q->bytes, "",
		    num(q->drops, qd, sizeof(qd)));
		if (view & QOS_STATS_DETAILS)
			queue_detail(p, q);
	}
}

static void unparsed_rows(struct qos_pr *p, const struct qos_report *r, unsigned int view)
{
	bool fams = view & QOS_STATS_FAMILY;
	int lw = fams ? LW_FAM : LW, d, v;
	char lb[64];

	for (d = 0; d < QOS_DIR_MAX; d++) {
		const struct qos_ctr *t = &r->unparsed_total[d];

		label(lb, sizeof(lb), fams, d ? "" : "unparsed", qos_dir_names[d], "-");
		row(p, lw, lb, t->packets, t->bytes, NULL, NULL);
		for (v = QOS_UNP_NONE + 1; (view & QOS_STATS_DETAILS) && v < QOS_UNP_MAX; v++) {
			snprintf(lb, sizeof(lb), " %s", qos_unparsed_names[v]);
			row(p, lw, lb, r->unparsed[d][v].packets, r->unparsed[d][v].bytes, NULL,
			    NULL);
		}
	}
}

static void wide_qdisc(struct qos_pr *p, const char *a, const char *b,
		       const struct qos_class_stats *q)
{
	qos_pr_text(p, "%-10s %-8s sent %llu bytes %llu pkts, dropped %llu, overlimits %llu, "
		    "requeues %llu, backlog %llub %llup\n", a, b, (unsigned long long)q->bytes, (unsigned long long)q->packets,
		    (unsigned long long)q->drops, (unsigned long long)q->overlimits,
		    (unsigned long long)q->requeues, (unsigned long long)q->backlog_bytes,
		    (unsigned long long)q->backlog_packets);
}

/* The full table: a column pair per family. */
static void wide(struct qos_pr *p, const struct qos_report *r, bool details)
{
	unsigned int i, d, fm, v;

	qos_pr_text(p, "%-10s %-8s %14s %16s %14s %16s %14s %16s\n", "class", "dir", "ipv4 pkts",
		    "ipv4 bytes", "ipv6 pkts", "ipv6 bytes", "6in4 pkts", "6in4 bytes");
	for (i = 0; i < r->meta.nclasses; i++) {
		const struct qos_report_class *rc = &r->cls[i];

		for (d = 0; d < QOS_DIR_MAX; d++) {
			qos_pr_text(p, "%-10s %-8s", d ? "" : rc->mc.name, qos_dir_names[d]);
			for (fm = 0; fm < QOS_FAM_MAX; fm++) {
				struct qos_ctr tot = sum(rc, d, fm, -1);

				qos_pr_text(p, " %14llu %16llu", (unsigned long long)tot.packets,
					    (unsigned long long)tot.bytes);
			}
			qos_pr_nl(p);
			for (v = 1; (details || rc->police.set) && v < QOS_V_MAX; v++) {
				qos_pr_text(p, "%-10s   %-6s", "", qos_verdict_names[v]);
				for (fm = 0; fm < QOS_FAM_MAX; fm++)
					qos_pr_text(p, " %14llu %16llu",
						    (unsigned long long)rc->ctr[d][fm][v].packets,
						    (unsigned long long)rc->ctr[d][fm][v].bytes);
				qos_pr_nl(p);
			}
		}
		if (rc->police.set)
			qos_police_stats_print(p, &rc->police);
		if (rc->have_q)
			wide_qdisc(p, "", "qdisc", &rc->q);
	}
	if (r->have_root)
		wide_qdisc(p, "root", qos_root_kind(&r->meta), &r->root);
	qos_pr_text(p, "unparsed (passed untouched):");
	for (d = 0; d < QOS_DIR_MAX; d++)
		for (v = QOS_UNP_NONE + 1; v < QOS_UNP_MAX; v++)
			qos_pr_text(p, " %s %s %llu", qos_dir_names[d], qos_unparsed_names[v],
				    (unsigned long long)r->unparsed[d][v].packets);
	qos_pr_nl(p);
}

void qos_stats_text(struct qos_pr *p, const struct qos_report *r, unsigned int view)
{
	bool fams = view & QOS_STATS_FAMILY;
	unsigned int i, d;

	if (view & QOS_STATS_WIDE) {
		wide(p, r, view & QOS_STATS_DETAILS);
		return;
	}
	if (fams)
		qos_pr_text(p, "%-10s %-8s %-8s %16s %20s %13s %12s\n", "class", "dir", "family",
			    "packets", "bytes", "police-drops", "queue-drops");
	else
		qos_pr_text(p, "%-10s %-8s %16s %20s %13s %12s\n", "class", "dir", "packets", "bytes",
			    "police-drops", "queue-drops");
	for (i = 0; i < r->meta.nclasses; i++) {
		for (d = 0; d < QOS_DIR_MAX; d++)
			dir_rows(p, &r->cls[i], d, view);
		if (view & QOS_STATS_DETAILS)
			class_details(p, &r->cls[i], fams);
	}
	root_rows(p, r, view);
	unparsed_rows(p, r, view);
}
