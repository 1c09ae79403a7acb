// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rates from two readings of the counters. The interval is measured on
 * the monotonic clock around the readings, not assumed from the sleep, so
 * a slow reading does not inflate the rates.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "out/print.h"
#include "out/report.h"
#include "out/watch.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Counters only grow, but a re-apply with other classes can shuffle the
 * report: match classes by id, and clamp a counter that went back. */
static const struct qos_report_class *find(const struct qos_report *r, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < r->meta.nclasses; i++)
		if (r->cls[i].mc.id == id)
			return &r->cls[i];
	return NULL;
}

static double per_s(uint64_t now, uint64_t then, double dt)
{
	return now > then ? (double)(now - then) / dt : 0.0;
}

static double drops_s(const struct qos_report_class *na, const struct qos_report_class *nb,
		      int d, int fm, double dt)
{
	double s = 0;
	int f;

	for (f = 0; f < QOS_FAM_MAX; f++) {
		if (fm >= 0 && f != fm)
			continue;
		s += per_s(nb->ctr[d][f][QOS_V_DROP].packets,
			   na ? na->ctr[d][f][QOS_V_DROP].packets : nb->ctr[d][f][QOS_V_DROP].packets,
			   dt);
	}
	return s;
}

/* pkt/s and bit/s of @d over family @fm (-1: all). */
static void rates(const struct qos_report_class *na, const struct qos_report_class *nb, int d,
		  int fm, double dt, double *pps, double *bps)
{
	struct qos_ctr tb = {}, ta = {};
	int f;

	for (f = 0; f < QOS_FAM_MAX; f++) {
		struct qos_ctr x = nb->fam[d][f], y = na ? na->fam[d][f] : x;

		if (fm >= 0 && f != fm)
			continue;
		tb.packets += x.packets;
		tb.bytes += x.bytes;
		ta.packets += y.packets;
		ta.bytes += y.bytes;
	}
	*pps = per_s(tb.packets, ta.packets, dt);
	*bps = 8 * per_s(tb.bytes, ta.bytes, dt);
}

/* The 100-column views: a row per class and direction, or per family. */
static void text_class(struct qos_pr *p, const struct qos_report_class *na,
		       const struct qos_report_class *nb, double dt, bool fams)
{
	double pps, bps, qd = na ? per_s(nb->q.drops, na->q.drops, dt) : 0;
	int d, fm;

	for (d = 0; d < QOS_DIR_MAX; d++) {
		for (fm = fams ? 0 : -1; fm < (fams ? QOS_FAM_MAX : 0); fm++) {
			rates(na, nb, d, fm, dt, &pps, &bps);
			qos_pr_text(p, "%-10s %-8s", d || fm > 0 ? "" : nb->mc.name,
				    fm > 0 ? "" : qos_dir_names[d]);
			if (fams)
				qos_pr_text(p, " %-8s", qos_family_names[fm]);
			qos_pr_text(p, " %14.1f %14.0f %15.1f", pps, bps, drops_s(na, nb, d, fm, dt));
			if (!fams && (d != QOS_DIR_EGRESS || !nb->have_q))
				qos_pr_text(p, " %14s", "-");
			else if (!fams)
				qos_pr_text(p, " %14.1f", qd);
			qos_pr_nl(p);
		}
	}
	if (fams && nb->have_q)
		qos_pr_text(p, "%-10s %-8s %-8s %14.1f %14.0f %15s %14.1f\n", "", "queue", "",
			    na ? per_s(nb->q.packets, na->q.packets, dt) : 0,
			    na ? 8 * per_s(nb->q.bytes, na->q.bytes, dt) : 0, "", qd);
}

/* --wide: a column pair per family, the queue's drops on the first row. */
static void text_wide(struct qos_pr *p, const struct qos_report_class *na,
		      const struct qos_report_class *nb, double dt)
{
	double drops = na ? per_s(nb->q.drops, na->q.drops, dt) : 0;
	unsigned int d, fm;

	for (d = 0; d < QOS_DIR_MAX; d++) {
		qos_pr_text(p, "%-10s %-8s", d ? "" : nb->mc.name, qos_dir_names[d]);
		for (fm = 0; fm < QOS_FAM_MAX; fm++) {
			struct qos_ctr tb = nb->fam[d][fm];
			struct qos_ctr ta = na ? na->fam[d][fm] : tb;

			qos_pr_text(p, " %10.1f %12.0f", per_s(tb.packets, ta.packets, dt),
				    8 * per_s(tb.bytes, ta.bytes, dt));
		}
		qos_pr_text(p, d ? "\n" : " %9.1f\n", drops);
	}
}

/* The rates of one class per direction and family (JSON), or its rows. */
static void class_print(struct qos_pr *p, const struct qos_report_class *na,
			const struct qos_report_class *nb, double dt, unsigned int view)
{
	double pps, bps;
	unsigned int d, fm;

	qos_pr_open_object(p, NULL);
	qos_pr_string(p, QP_JSON, "name", NULL, nb->mc.name);
	qos_pr_double(p, QP_JSON, "qdisc_drops_per_s", NULL,
		      na ? per_s(nb->q.drops, na->q.drops, dt) : 0);
	for (d = 0; d < QOS_DIR_MAX; d++) {
		qos_pr_open_object(p, qos_dir_names[d]);
		for (fm = 0; fm < QOS_FAM_MAX; fm++) {
			rates(na, nb, d, fm, dt, &pps, &bps);
			qos_pr_open_object(p, qos_family_names[fm]);
			qos_pr_double(p, QP_JSON, "pps", NULL, pps);
			qos_pr_double(p, QP_JSON, "bps", NULL, bps);
			qos_pr_close_object(p);
		}
		qos_pr_close_object(p);
	}
	if (view & QOS_STATS_WIDE)
		text_wide(p, na, nb, dt);
	else
		text_class(p, na, nb, dt, view & QOS_STATS_FAMILY);
	qos_pr_close_object(p);
}

/* One interval: a table, or one JSON object (always per family). */
static int interval_print(FILE *f, bool json, const struct qos_report *a,
			  const struct qos_report *b, double dt, unsigned int view)
{
	struct qos_pr *p = qos_pr_open(f, json);
	unsigned int i;

	if (!p)
		return -ENOMEM;
	qos_pr_string(p, QP_ANY, "dev", "dev %s ", b->dev);
	qos_pr_string(p, QP_ANY, "profile", "profile %s ", b->meta.profile);
	qos_pr_double(p, QP_ANY, "interval_s", "interval %.2fs\n", dt);
	if (view & QOS_STATS_WIDE)
		qos_pr_text(p, "%-10s %-8s %10s %12s %10s %12s %10s %12s %9s\n", "class", "dir",
			    "ipv4 pps", "ipv4 bit/s", "ipv6 pps", "ipv6 bit/s", "6in4 pps",
			    "6in4 bit/s", "drops/s");
	else
		qos_pr_text(p, "%-10s %-8s%s %14s %14s %15s %14s\n", "class", "dir",
			    view & QOS_STATS_FAMILY ? " family  " : "", "pkt/s", "bit/s",
			    "police-drops/s", "queue-drops/s");
	qos_pr_open_array(p, "classes");
	for (i = 0; i < b->meta.nclasses; i++)
		class_print(p, find(a, b->cls[i].mc.id), &b->cls[i], dt, view);
	qos_pr_close_array(p);
	return qos_pr_close(p);
}

int qos_stats_watch(const char *ifname, unsigned int secs, unsigned int count, bool json,
		    unsigned int view, FILE *f, char *err, size_t errlen)
{
	static struct qos_report r[2];
	unsigned int n, cur = 0;
	double t[2];
	int ret;

	t[0] = now_s();
	ret = qos_report_read_name(ifname, &r[0], err, errlen);
	for (n = 0; !ret && (!count || n < count); n++) {
		sleep(secs);
		cur ^= 1;
		t[cur] = now_s();
		ret = qos_report_read_name(ifname, &r[cur], err, errlen);
		if (ret)
			break;
		ret = interval_print(f, json, &r[cur ^ 1], &r[cur], t[cur] - t[cur ^ 1], view);
		if (ret) {
			snprintf(err, errlen, "%s", strerror(-ret));
			break;
		}
		fflush(f);
	}
	return ret;
}
