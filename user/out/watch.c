// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rates from two readings of the counters. The interval is measured on
 * the monotonic clock around the readings, not assumed from the sleep, so
 * a slow reading does not inflate the rates.
 */
#include <errno.h>
#include <json-c/json.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "out/report.h"
#include "out/watch.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct qos_ctr total(const struct qos_report_class *rc, int d, int fm)
{
	struct qos_ctr s = {};
	int v;

	for (v = 0; v < QOS_V_MAX; v++) {
		s.packets += rc->ctr[d][fm][v].packets;
		s.bytes += rc->ctr[d][fm][v].bytes;
	}
	return s;
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
		struct qos_ctr x = total(nb, d, f), y = na ? total(na, d, f) : x;

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
static void text_class(FILE *f, const struct qos_report_class *na,
		       const struct qos_report_class *nb, double dt, bool fams)
{
	double pps, bps, qd = na ? per_s(nb->q.drops, na->q.drops, dt) : 0;
	int d, fm;

	for (d = 0; d < QOS_DIR_MAX; d++) {
		for (fm = fams ? 0 : -1; fm < (fams ? QOS_FAM_MAX : 0); fm++) {
			rates(na, nb, d, fm, dt, &pps, &bps);
			fprintf(f, "%-10s %-8s", d || fm > 0 ? "" : nb->mc.name,
				fm > 0 ? "" : qos_dir_names[d]);
			if (fams)
				fprintf(f, " %-8s", qos_family_names[fm]);
			fprintf(f, " %14.1f %14.0f %15.1f", pps, bps, drops_s(na, nb, d, fm, dt));
			if (!fams && (d != QOS_DIR_EGRESS || !nb->have_q))
				fprintf(f, " %14s", "-");
			else if (!fams)
				fprintf(f, " %14.1f", qd);
			fputc('\n', f);
		}
	}
	if (fams && nb->have_q)
		fprintf(f, "%-10s %-8s %-8s %14.1f %14.0f %15s %14.1f\n", "", "queue", "",
			na ? per_s(nb->q.packets, na->q.packets, dt) : 0,
			na ? 8 * per_s(nb->q.bytes, na->q.bytes, dt) : 0, "", qd);
}

/* --wide: a column pair per family, the queue's drops on the first row. */
static void text_wide(FILE *f, const struct qos_report_class *na,
		      const struct qos_report_class *nb, double dt)
{
	double drops = na ? per_s(nb->q.drops, na->q.drops, dt) : 0;
	unsigned int d, fm;

	for (d = 0; d < QOS_DIR_MAX; d++) {
		fprintf(f, "%-10s %-8s", d ? "" : nb->mc.name, qos_dir_names[d]);
		for (fm = 0; fm < QOS_FAM_MAX; fm++) {
			struct qos_ctr tb = total(nb, d, fm);
			struct qos_ctr ta = na ? total(na, d, fm) : tb;

			fprintf(f, " %10.1f %12.0f", per_s(tb.packets, ta.packets, dt),
				8 * per_s(tb.bytes, ta.bytes, dt));
		}
		fprintf(f, d ? "\n" : " %9.1f\n", drops);
	}
}

static void text_interval(FILE *f, const struct qos_report *a, const struct qos_report *b,
			  double dt, unsigned int view)
{
	bool fams = view & QOS_STATS_FAMILY;
	unsigned int i;

	fprintf(f, "dev %s profile %s interval %.2fs\n", b->dev, b->meta.profile, dt);
	if (view & QOS_STATS_WIDE)
		fprintf(f, "%-10s %-8s %10s %12s %10s %12s %10s %12s %9s\n", "class", "dir",
			"ipv4 pps", "ipv4 bit/s", "ipv6 pps", "ipv6 bit/s", "6in4 pps",
			"6in4 bit/s", "drops/s");
	else
		fprintf(f, "%-10s %-8s%s %14s %14s %15s %14s\n", "class", "dir",
			fams ? " family  " : "", "pkt/s", "bit/s", "police-drops/s",
			"queue-drops/s");
	for (i = 0; i < b->meta.nclasses; i++) {
		const struct qos_report_class *nb = &b->cls[i];
		const struct qos_report_class *na = find(a, nb->mc.id);

		if (view & QOS_STATS_WIDE)
			text_wide(f, na, nb, dt);
		else
			text_class(f, na, nb, dt, fams);
	}
}

static void json_interval(FILE *f, const struct qos_report *a, const struct qos_report *b,
			  double dt)
{
	json_object *o = json_object_new_object(), *cls = json_object_new_array();
	unsigned int i, d, fm;

	json_object_object_add(o, "dev", json_object_new_string(b->dev));
	json_object_object_add(o, "profile", json_object_new_string(b->meta.profile));
	json_object_object_add(o, "interval_s", json_object_new_double(dt));
	for (i = 0; i < b->meta.nclasses; i++) {
		const struct qos_report_class *nb = &b->cls[i];
		const struct qos_report_class *na = find(a, nb->mc.id);
		double drops = na ? per_s(nb->q.drops, na->q.drops, dt) : 0;
		json_object *c = json_object_new_object();

		json_object_object_add(c, "name", json_object_new_string(nb->mc.name));
		json_object_object_add(c, "qdisc_drops_per_s", json_object_new_double(drops));
		for (d = 0; d < QOS_DIR_MAX; d++) {
			json_object *dir = json_object_new_object();

			for (fm = 0; fm < QOS_FAM_MAX; fm++) {
				json_object *r = json_object_new_object();
				double pps, bps;

				rates(na, nb, d, fm, dt, &pps, &bps);
				json_object_object_add(r, "pps", json_object_new_double(pps));
				json_object_object_add(r, "bps", json_object_new_double(bps));
				json_object_object_add(dir, qos_family_names[fm], r);
			}
			json_object_object_add(c, qos_dir_names[d], dir);
		}
		json_object_array_add(cls, c);
	}
	json_object_object_add(o, "classes", cls);
	fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
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
		if (json)
			json_interval(f, &r[cur ^ 1], &r[cur], t[cur] - t[cur ^ 1]);
		else
			text_interval(f, &r[cur ^ 1], &r[cur], t[cur] - t[cur ^ 1], view);
		fflush(f);
	}
	return ret;
}
