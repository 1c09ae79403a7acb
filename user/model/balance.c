// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Re-balancing a multi-queue tree (model/balance.h). The idea is Linux
 * 7.0's cake_mq, which re-divides CAKE's rate among the instances of an
 * mq root from their measured load; here it is done per HTB class, so
 * Premium IP's cap and LBE's floor are the link's and not each queue's.
 */
#include <string.h>

#include "model/balance.h"
#include "model/tree.h"

/* HTB refuses a class of rate 0; libnl takes bytes per second. */
#define BAL_RATE_FLOOR	8

uint64_t qos_waterfill(uint64_t total, unsigned int n, const uint64_t *want, uint64_t min,
		       uint64_t *out)
{
	bool done[QOS_MAX_QUEUES] = {};
	unsigned int i, open = n;
	uint64_t left;

	if (!n || n > QOS_MAX_QUEUES)
		return total;
	if (min > total / n)
		min = total / n;
	for (i = 0; i < n; i++)
		out[i] = min;
	left = total - min * n;
	while (open && left) {
		uint64_t part = left / open;
		bool filled = false;

		for (i = 0; i < n; i++) {
			uint64_t need = want[i] > out[i] ? want[i] - out[i] : 0;

			if (done[i] || need > part)
				continue;
			out[i] += need;
			left -= need;
			done[i] = filled = true;
			open--;
		}
		if (filled)
			continue;
		/* Everyone open wants more than an equal part: give it,
		 * and the remainder a unit each to the first. */
		left -= part * open;
		for (i = 0; i < n; i++) {
			if (done[i])
				continue;
			out[i] += part + (left ? 1 : 0);
			left -= left ? 1 : 0;
		}
		return 0;
	}
	return left;
}

static uint64_t want_of(const struct qos_bal_demand *d, uint64_t min)
{
	if (d->busy)
		return UINT64_MAX;
	return d->bps / QOS_BAL_HEADROOM_DEN * QOS_BAL_HEADROOM_NUM + min;
}

/* Class @i's rate, and its ceiling if it is capped below the link. */
static void balance_class(const struct qos_meta *meta, const qos_bal_demands_t d,
			  unsigned int i, struct qos_bal_share *out)
{
	const struct qos_meta_class *mc = &meta->classes[i];
	uint64_t want[QOS_MAX_QUEUES] = {}, r[QOS_MAX_QUEUES] = {}, extra[QOS_MAX_QUEUES] = {};
	unsigned int q, n = out->nqueues;
	uint64_t min = mc->rate_bps / n / QOS_BAL_MIN_DIV;

	for (q = 0; q < n; q++)
		want[q] = want_of(&d[q][i], min);
	/* What nobody asked for is left out: it would raise an idle
	 * queue's link rate, which only its own classes could use. */
	qos_waterfill(mc->rate_bps, n, want, min, r);
	for (q = 0; q < n; q++)
		want[q] = want[q] == UINT64_MAX ? UINT64_MAX : want[q] > r[q] ? want[q] - r[q] : 0;
	if (mc->ceil_bps > mc->rate_bps && mc->ceil_bps < meta->rate_bps)
		qos_waterfill(mc->ceil_bps - mc->rate_bps, n, want, 0, extra);
	else
		memset(extra, 0, sizeof(extra));
	for (q = 0; q < n; q++) {
		out->q[q].rate_bps[i] = r[q] > BAL_RATE_FLOOR ? r[q] : BAL_RATE_FLOOR;
		out->q[q].ceil_bps[i] = out->q[q].rate_bps[i] + extra[q];
	}
}

/* What class @i of queue @q would take beyond its rate: up to its ceiling
 * if it is capped below the link, else all there is if it was held back,
 * else a quarter more than it sent. */
static uint64_t excess(const struct qos_meta *meta, const qos_bal_demands_t d,
		       const struct qos_bal_share *out, unsigned int q, unsigned int i)
{
	const struct qos_meta_class *mc = &meta->classes[i];
	uint64_t rate = out->q[q].rate_bps[i], want;

	if (mc->ceil_bps < meta->rate_bps)
		return out->q[q].ceil_bps[i] - rate;
	want = want_of(&d[q][i], 0);
	return want > rate ? want - rate : 0;
}

/*
 * The link: each queue its classes' rates, then what is left of the link
 * by the queues' demand beyond them, class by class in priority order as
 * HTB lends within one tree, so that LBE in one queue does not take from
 * BE held back in another what BE would get before it in a single tree.
 * What nobody wants goes evenly.
 */
static void balance_link(const struct qos_meta *meta, const qos_bal_demands_t d,
			 struct qos_bal_share *out)
{
	uint64_t want[QOS_MAX_QUEUES] = {}, extra[QOS_MAX_QUEUES] = {}, sum = 0, left;
	unsigned int q, i, prio, n = out->nqueues, nc = meta->nclasses, top = 0;

	for (q = 0; q < n; q++) {
		out->q[q].link_bps = 0;
		for (i = 0; i < nc; i++)
			out->q[q].link_bps += out->q[q].rate_bps[i];
		sum += out->q[q].link_bps;
	}
	for (i = 0; i < nc; i++)
		top = meta->classes[i].prio > top ? meta->classes[i].prio : top;
	left = meta->rate_bps > sum ? meta->rate_bps - sum : 0;
	for (prio = 0; prio <= top && left; prio++) {
		for (i = 0; i < nc && left; i++) {
			if (meta->classes[i].prio != prio)
				continue;
			for (q = 0; q < n; q++)
				want[q] = excess(meta, d, out, q, i);
			left = qos_waterfill(left, n, want, 0, extra);
			for (q = 0; q < n; q++)
				out->q[q].link_bps += extra[q];
		}
	}
	for (q = 0; q < n; q++)
		out->q[q].link_bps += left / n + (q < left % n);
	for (q = 0; q < n; q++)
		for (i = 0; i < nc; i++)
			if (out->q[q].ceil_bps[i] > out->q[q].link_bps ||
			    meta->classes[i].ceil_bps >= meta->rate_bps)
				out->q[q].ceil_bps[i] = out->q[q].link_bps;
}

void qos_balance(const struct qos_meta *meta, const qos_bal_demands_t d,
		 struct qos_bal_share *out)
{
	unsigned int i;

	memset(out, 0, sizeof(*out));
	out->nqueues = qos_meta_queues(meta);
	if (out->nqueues > QOS_MAX_QUEUES)
		out->nqueues = QOS_MAX_QUEUES;
	for (i = 0; i < meta->nclasses && i < QOS_MAX_CLASSES; i++)
		balance_class(meta, d, i, out);
	balance_link(meta, d, out);
}

void qos_balance_static(const struct qos_meta *meta, struct qos_bal_share *out)
{
	unsigned int q, i;

	memset(out, 0, sizeof(*out));
	out->nqueues = qos_meta_queues(meta);
	if (out->nqueues > QOS_MAX_QUEUES)
		out->nqueues = QOS_MAX_QUEUES;
	for (q = 0; q < out->nqueues; q++) {
		out->q[q].link_bps = meta->rate_bps / out->nqueues;
		for (i = 0; i < meta->nclasses && i < QOS_MAX_CLASSES; i++) {
			struct qos_meta_class c = qos_queue_class(meta, &meta->classes[i], q);

			out->q[q].rate_bps[i] = c.rate_bps;
			out->q[q].ceil_bps[i] = c.ceil_bps;
		}
	}
}
