// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A profile against a link: rates and shares resolved at the link rate and
 * checked (sums, ceilings, what priority classes may take, TBF's limit),
 * bursts against the device's MTU. Errors and warnings name the file, the
 * line and the key (model/perr.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/util.h"
#include "model/perr.h"
#include "model/policer.h"
#include "model/profile.h"

/* Classes served before the default class may take at most this share of
 * the link together, unless the profile sets priority-max. */
#define QOS_PRIORITY_MAX_PCT	50.0
/* libnl hands TBF its rate as an int of bytes per second. */
#define QOS_TBF_RATE_MAX	(8ULL * INT32_MAX)

static uint64_t bw_resolve(const struct qos_bw *bw, uint64_t link)
{
	if (bw->pct)
		return (uint64_t)((double)link * bw->share / 100.0 + 0.5);
	return bw->bps;
}

static void bw_check(const struct qos_profile *p, const struct qos_bw *bw, const char *key,
		     uint64_t bps, uint64_t link_bps)
{
	qos_profile_rate_check(p, bw->line, key, bw->text, bps, bw->pct ? link_bps : 0);
}

static void frame_check(const struct qos_profile *p, const struct qos_class_spec *cl, int line,
			const char *key, const char *what, uint64_t bytes, uint32_t mtu)
{
	if (bytes && bytes < mtu + QOS_ETH_HLEN)
		qos_warn("%s:%d: %s: [class %s] %s of %llu bytes is less than a full frame at MTU %u (%u bytes)",
			 p->path, line, key, cl->name, what, (unsigned long long)bytes, mtu,
			 mtu + QOS_ETH_HLEN);
}

void qos_profile_check_mtu(const struct qos_profile *p, uint32_t mtu)
{
	static const char *const keys[] = { "police-burst", "police-excess-burst",
					    "police-peak-burst" };
	unsigned int i, k;

	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = &p->classes[i];
		const struct qos_police_size *sz[] = { &cl->police.burst, &cl->police.excess_burst,
						       &cl->police.peak_burst };

		/* maxburst is in frames of the device's MTU (txn/plan.c). */
		if (p->sched != QOS_SCHED_NONE && !cl->maxburst)
			frame_check(p, cl, cl->burst_line, "burst", "a burst", cl->burst, mtu);
		if (cl->leaf == QOS_LEAF_BFIFO || p->sched == QOS_SCHED_TBF)
			frame_check(p, cl, cl->limit_line, "limit", "a byte queue", cl->limit, mtu);
		for (k = 0; cl->police.set && k < ARRAY_SIZE(keys); k++)
			if (sz[k]->kind == QOS_PSZ_BYTES)
				frame_check(p, cl, sz[k]->line, keys[k], "a bucket", sz[k]->v, mtu);
	}
}

/*
 * PRIO serves a band only while the bands before it are empty: a class has
 * its rate only if the ceilings of the classes served before it leave it
 * that much. (HTB keeps every rate whatever the priorities; their sum is
 * checked by qos_profile_resolve().)
 */
static void prio_guarantees(const struct qos_profile *p, const struct qos_class_plan *plan,
			    uint64_t link_bps)
{
	char names[128], a[32], b[32], c[32], d[32];
	unsigned int i, j;

	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = plan[i].spec;
		uint64_t taken = 0;

		names[0] = '\0';
		for (j = 0; j < p->nclasses; j++) {
			if (plan[j].spec->prio >= cl->prio)
				continue;
			taken += plan[j].ceil_bps;
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 names[0] ? ", " : "", plan[j].spec->name);
		}
		if (!taken || (taken < link_bps && link_bps - taken >= plan[i].rate_bps))
			continue;
		qos_fmt_rate(plan[i].rate_bps, a, sizeof(a));
		qos_fmt_rate(link_bps, c, sizeof(c));
		if (taken >= link_bps)
			qos_warn("%s:%d: rate: [class %s] guaranteed %s, but the classes served before it (%s) may take the whole link (%s)",
				 p->path, cl->rate.line, cl->name, a, names, c);
		else
			qos_warn("%s:%d: rate: [class %s] guaranteed %s, but the classes served before it (%s) may take %s of %s, leaving %s",
				 p->path, cl->rate.line, cl->name, a, names,
				 qos_fmt_rate(taken, b, sizeof(b)), c,
				 qos_fmt_rate(link_bps - taken, d, sizeof(d)));
	}
}

static int check_shares(const struct qos_profile *p, const struct qos_class_plan *plan,
			uint64_t link_bps, char *err, size_t len)
{
	const struct qos_class_spec *def = qos_profile_class(p, p->default_class);
	uint64_t max, sum = 0;
	char names[128] = "", a[32], b[32];
	unsigned int i;

	max = p->priority_max.set ? bw_resolve(&p->priority_max, link_bps) :
	      (uint64_t)((double)link_bps * QOS_PRIORITY_MAX_PCT / 100.0 + 0.5);

	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = plan[i].spec;
		int line = cl->ceil.set ? cl->ceil.line : cl->rate.line;

		if ((p->sched == QOS_SCHED_TBF ||
		     (p->sched == QOS_SCHED_PRIO && plan[i].ceil_bps < link_bps)) &&
		    (p->sched == QOS_SCHED_TBF ? plan[i].rate_bps : plan[i].ceil_bps) >
			    QOS_TBF_RATE_MAX)
			return qos_profile_errf(err, len, p, line, p->sched == QOS_SCHED_TBF ? "rate" : "ceil",
				    "[class %s] TBF rates stop at %s", cl->name,
				    qos_fmt_rate(QOS_TBF_RATE_MAX, a, sizeof(a)));
		/* Served before the default class: a strict-priority queue
		 * whose ceiling is all that stops it starving the rest. */
		if (cl->prio >= def->prio)
			continue;
		sum += plan[i].ceil_bps;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 names[0] ? ", " : "", cl->name);
		if (sum > max + p->nclasses)
			return qos_profile_errf(err, len, p, line, cl->ceil.set ? "ceil" : "rate",
				    "classes served before the default class (%s) may take %s, more than priority-max %s",
				    names, qos_fmt_rate(sum, a, sizeof(a)),
				    qos_fmt_rate(max, b, sizeof(b)));
	}
	if (p->sched == QOS_SCHED_PRIO)
		prio_guarantees(p, plan, link_bps);
	return 0;
}

int qos_profile_resolve(const struct qos_profile *p, uint64_t link_bps, uint32_t mtu,
			struct qos_class_plan *plan, char *err, size_t errlen)
{
	uint64_t sum = 0;
	unsigned int i;
	char a[32], b[32];

	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = &p->classes[i];
		struct qos_class_plan *pl = &plan[i];

		memset(pl, 0, sizeof(*pl));
		pl->spec = cl;
		if (cl->police.set &&
		    qos_police_resolve(p, cl, link_bps, mtu, &pl->police, err, errlen))
			return -EINVAL;
		/* Without a qdisc tree, rates have nothing to shape. */
		if (p->sched == QOS_SCHED_NONE)
			continue;
		pl->rate_bps = bw_resolve(&cl->rate, link_bps);
		pl->ceil_bps = cl->ceil.set ? bw_resolve(&cl->ceil, link_bps) : link_bps;
		if (!pl->rate_bps)
			return qos_profile_errf(err, errlen, p, cl->rate.line, "rate",
				    "[class %s] rate rounds to 0 at link rate %s", cl->name,
				    qos_fmt_rate(link_bps, a, sizeof(a)));
		if (pl->rate_bps > link_bps)
			return qos_profile_errf(err, errlen, p, cl->rate.line, "rate",
				    "[class %s] rate %s exceeds the link rate %s", cl->name,
				    qos_fmt_rate(pl->rate_bps, a, sizeof(a)),
				    qos_fmt_rate(link_bps, b, sizeof(b)));
		if (pl->ceil_bps > link_bps)
			return qos_profile_errf(err, errlen, p, cl->ceil.line, "ceil",
				    "[class %s] ceil %s exceeds the link rate %s", cl->name,
				    qos_fmt_rate(pl->ceil_bps, a, sizeof(a)),
				    qos_fmt_rate(link_bps, b, sizeof(b)));
		if (pl->ceil_bps < pl->rate_bps)
			return qos_profile_errf(err, errlen, p, cl->ceil.set ? cl->ceil.line : cl->rate.line,
				    "ceil", "[class %s] ceil %s is below its rate %s", cl->name,
				    qos_fmt_rate(pl->ceil_bps, a, sizeof(a)),
				    qos_fmt_rate(pl->rate_bps, b, sizeof(b)));
		/* Warnings once the rates are resolved: a profile is parsed
		 * also where none is due (list, the name check). */
		bw_check(p, &cl->rate, "rate", pl->rate_bps, link_bps);
		if (cl->ceil.set && cl->ceil.line != cl->rate.line)	/* not a copy */
			bw_check(p, &cl->ceil, "ceil", pl->ceil_bps, link_bps);
		sum += pl->rate_bps;
		if (sum > link_bps + p->nclasses)	/* allow per-class rounding */
			return qos_profile_errf(err, errlen, p, cl->rate.line, "rate",
				    "guaranteed rates add up to %s, more than the link rate %s",
				    qos_fmt_rate(sum, a, sizeof(a)),
				    qos_fmt_rate(link_bps, b, sizeof(b)));
	}
	return check_shares(p, plan, link_bps, err, errlen);
}
