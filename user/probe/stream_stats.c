// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Per-stream statistics. Delays are computed once the stream is over, in
 * sequence order, from the slots; only the arrival order (reordering) and
 * the duplicate count are taken as replies come.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe/stream_stats.h"

int pstats_init(struct pstats *s, uint32_t count)
{
	memset(s, 0, sizeof(*s));
	s->slot = calloc(count ? count : 1, sizeof(*s->slot));
	if (!s->slot)
		return -ENOMEM;
	s->count = count;
	return 0;
}

void pstats_free(struct pstats *s)
{
	free(s->slot);
	s->slot = NULL;
}

void pstats_reply(struct pstats *s, uint32_t seq, const struct pstats_slot *r)
{
	struct pstats_slot *sl;

	if (seq >= s->count)
		return;
	sl = &s->slot[seq];
	if (sl->replies++)
		return;
	if (s->any && seq < s->max_seq)
		s->reordered++;
	if (!s->any || seq > s->max_seq)
		s->max_seq = seq;
	s->any = true;
	sl->t2 = r->t2;
	sl->t3 = r->t3;
	sl->t4 = r->t4;
	sl->t4_kernel = r->t4_kernel;
	sl->synced = r->synced;
	sl->refl_dscp = r->refl_dscp;
	sl->refl_rp = r->refl_rp;
	sl->refl_ttl = r->refl_ttl;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int64_t rank(const int64_t *v, uint32_t n, unsigned int pct)
{
	uint64_t r = ((uint64_t)n * pct + 99) / 100;

	return v[r ? r - 1 : 0];
}

void pstats_dist(int64_t *v, uint32_t n, struct pstats_dist *d)
{
	double sum = 0;
	uint32_t i;

	memset(d, 0, sizeof(*d));
	d->n = n;
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp64);
	for (i = 0; i < n; i++)
		sum += v[i];
	d->min = v[0];
	d->max = v[n - 1];
	d->p50 = rank(v, n, 50);
	d->p90 = rank(v, n, 90);
	d->p99 = rank(v, n, 99);
	d->mean = sum / n;
}

int64_t pstats_rtt(const struct pstats_slot *sl)
{
	int64_t t1 = sl->t1k ? sl->t1k : sl->t1;

	return (sl->t4 - t1) - (sl->t3 - sl->t2);
}

void pstats_sum(const struct pstats *s, uint8_t dscp, struct pstats_sum *sum)
{
	int64_t *rtt = calloc(s->count + 1, sizeof(*rtt));
	int64_t *fwd = calloc(s->count + 1, sizeof(*fwd));
	int64_t *back = calloc(s->count + 1, sizeof(*back));
	int64_t prev = 0;
	bool have_prev = false;
	uint32_t i, n = 0;

	memset(sum, 0, sizeof(*sum));
	sum->sent = s->sent;
	sum->reordered = s->reordered;
	sum->refl_dscp = -1;
	sum->refl_ttl = -1;
	sum->owd_valid = true;
	for (i = 0; i < s->sent && i < s->count; i++) {
		const struct pstats_slot *sl = &s->slot[i];
		int64_t d, t1 = sl->t1k ? sl->t1k : sl->t1;

		if (!sl->replies)
			continue;
		sum->received++;
		sum->duplicates += sl->replies - 1;
		sum->tx_kernel += sl->t1k != 0;
		sum->rx_kernel += sl->t4_kernel;
		if (sl->refl_dscp >= 0) {
			sum->refl_dscp = sl->refl_dscp;
			sum->refl_dscp_replies++;
			sum->remarked += sl->refl_dscp != dscp;
			sum->cos_refused += sl->refl_rp;
		}
		sum->refl_ttl = sl->refl_ttl;
		if (!rtt || !fwd || !back)
			continue;
		d = pstats_rtt(sl);
		rtt[n] = d;
		fwd[n] = sl->t2 - t1;
		back[n] = sl->t4 - sl->t3;
		if (!sl->synced || fwd[n] < 0 || back[n] < 0)
			sum->owd_valid = false;
		n++;
		if (have_prev)
			sum->jitter_ns += ((d > prev ? d - prev : prev - d) - sum->jitter_ns) / 16;
		prev = d;
		have_prev = true;
	}
	sum->lost = sum->sent - sum->received;
	if (!n)
		sum->owd_valid = false;
	if (rtt && fwd && back) {
		pstats_dist(rtt, n, &sum->rtt);
		pstats_dist(fwd, n, &sum->fwd);
		pstats_dist(back, n, &sum->back);
	}
	free(rtt);
	free(fwd);
	free(back);
}
