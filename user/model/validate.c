// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Profile checks beyond the format: CBQ's parameters mapped onto HTB, the
 * constraints of the PRIO and TBF schedulers, bursts of at least one
 * frame, and the bound on what priority classes may take. Every error
 * names the file, the line and the key, like the parser's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/profile.h"
#include "lib/util.h"

#define QOS_FRAME_BYTES		1514
/* Classes served before the default class may take at most this share of
 * the link together, unless the profile sets priority-max. */
#define QOS_PRIORITY_MAX_PCT	50.0
/* libnl hands TBF its rate as an int of bytes per second. */
#define QOS_TBF_RATE_MAX	(8ULL * INT32_MAX)

/*
 * CBQ (removed from Linux in 6.3) described a class by its share, its
 * priority, whether it may borrow (bounded) or lend (isolated), and how
 * many average packets it may send back to back (maxburst). On HTB:
 * share = rate, priority = prio, bounded = ceil at the rate, maxburst =
 * the bucket in full frames. HTB has no way to stop a class lending what
 * it leaves idle, and needs none for CBQ's purpose: an isolated class
 * gets its rate back whenever it has traffic.
 */
static int map_cbq(struct qos_profile *p, struct qos_class_spec *cl, char *err, size_t len)
{
	if ((cl->bounded || cl->isolated || cl->maxburst) && p->sched != QOS_SCHED_HTB)
		return qos_profile_errf(err, len, p, cl->cbq_line, "bounded",
			    "[class %s] CBQ parameters (bounded, isolated, maxburst) need scheduler = htb",
			    cl->name);
	if (cl->maxburst) {
		if (cl->burst)
			return qos_profile_errf(err, len, p, cl->cbq_line, "maxburst",
				    "[class %s] sets both burst and maxburst", cl->name);
		cl->burst = (uint64_t)cl->maxburst * QOS_FRAME_BYTES;
		cl->burst_line = cl->cbq_line;
	}
	if (cl->bounded) {
		if (cl->ceil.set && (cl->ceil.pct != cl->rate.pct ||
				     cl->ceil.share != cl->rate.share || cl->ceil.bps != cl->rate.bps))
			return qos_profile_errf(err, len, p, cl->cbq_line, "bounded",
				    "[class %s] is bounded (ceil = rate) but sets another ceil",
				    cl->name);
		cl->ceil = cl->rate;
	}
	return 0;
}

static int check_class_name(const struct qos_profile *p, const char *name, int line,
			    const char *key, char *err, size_t len)
{
	if (name[0] && !qos_profile_class(p, name))
		return qos_profile_errf(err, len, p, line, key, "no class named '%s'", name);
	return 0;
}

int qos_profile_check_ext(struct qos_profile *p, char *err, size_t len)
{
	unsigned int i, j;
	int ret;

	ret = check_class_name(p, p->nd_class, p->nd_line, "nd-class", err, len) ?:
	      check_class_name(p, p->nonip_class, p->nonip_line, "non-ip-class", err, len) ?:
	      check_class_name(p, p->ack_class, p->ack_line, "ack-class", err, len) ?:
	      check_class_name(p, p->reserve_class, p->reserve_line, "reserve-class", err, len);
	if (ret)
		return ret;
	if (p->reserve_class[0] && !strcmp(p->reserve_class, p->default_class))
		return qos_profile_errf(err, len, p, p->reserve_line, "reserve-class",
					"'%s' is the default class: a reservation must be "
					"served before what nobody reserved", p->reserve_class);
	if (p->ack_class[0] && !strcmp(p->ack_class, p->default_class))
		return qos_profile_errf(err, len, p, p->ack_line, "ack-class",
					"'%s' is the default class, where ACKs already are",
					p->ack_class);
	if (p->sched == QOS_SCHED_TBF && p->nclasses != 1)
		return qos_profile_errf(err, len, p, p->sched_line, "scheduler",
			    "tbf shapes the whole link as one queue: exactly one [class], not %u",
			    p->nclasses);

	for (i = 0; i < p->nclasses; i++) {
		struct qos_class_spec *cl = &p->classes[i];

		ret = map_cbq(p, cl, err, len);
		if (ret)
			return ret;
		if (cl->burst && cl->burst < QOS_FRAME_BYTES)
			return qos_profile_errf(err, len, p, cl->burst_line, "burst",
				    "[class %s] %llu bytes is less than one full frame (%d bytes)",
				    cl->name, (unsigned long long)cl->burst, QOS_FRAME_BYTES);
		if (cl->limit && cl->limit < QOS_FRAME_BYTES &&
		    (cl->leaf == QOS_LEAF_BFIFO || p->sched == QOS_SCHED_TBF))
			return qos_profile_errf(err, len, p, cl->limit_line, "limit",
				    "[class %s] a byte queue of %u holds less than one full frame (%d bytes)",
				    cl->name, cl->limit, QOS_FRAME_BYTES);
		/* A shaper's ceiling is its rate. */
		if (p->sched == QOS_SCHED_TBF && !cl->ceil.set)
			cl->ceil = cl->rate;
		if (p->sched != QOS_SCHED_PRIO)
			continue;
		for (j = 0; j < i; j++)
			if (p->classes[j].prio == cl->prio)
				return qos_profile_errf(err, len, p, cl->prio_line ?: cl->line, "priority",
					    "classes %s and %s share priority %u; PRIO bands need distinct priorities",
					    p->classes[j].name, cl->name, cl->prio);
	}
	return 0;
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

static uint64_t share_bps(const struct qos_bw *bw, uint64_t link)
{
	if (bw->pct)
		return (uint64_t)((double)link * bw->share / 100.0 + 0.5);
	return bw->bps;
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

int qos_profile_check_shares(const struct qos_profile *p, const struct qos_class_plan *plan,
			     uint64_t link_bps, char *err, size_t len)
{
	const struct qos_class_spec *def = qos_profile_class(p, p->default_class);
	uint64_t max, sum = 0;
	char names[128] = "", a[32], b[32];
	unsigned int i;

	max = p->priority_max.set ? share_bps(&p->priority_max, link_bps) :
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
