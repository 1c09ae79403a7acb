// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The tuple-space compiler: rules (model/rule.c) into the masked keys,
 * values and per-family shapes of the search in bpf/lib/rules.h, the
 * checks of a whole rule set against the table, and the identity of a
 * match that a re-apply keeps ids by. Documentation/classifier.rst
 * explains the model.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "model/rule.h"

#define RANK_SPEC_SHIFT	24
#define SPEC_MAX	511

/* Rule tables (enum qos_table bits) a rule has an entry in: a rule that
 * names no address family matches both. */
unsigned int qos_rule_tables(const struct qos_rule *r)
{
	if (r->family == AF_INET)
		return 1U << QOS_TABLE_IPV4;
	if (r->family == AF_INET6)
		return 1U << QOS_TABLE_IPV6;
	return 1U << QOS_TABLE_IPV4 | 1U << QOS_TABLE_IPV6;
}

static void prefix_mask(uint8_t len, __be32 mask[4])
{
	uint8_t *b = (uint8_t *)mask;
	int i;

	for (i = 0; i < 16; i++) {
		int bits = (int)len - i * 8;

		b[i] = bits >= 8 ? 0xff : bits <= 0 ? 0 : (uint8_t)(0xff << (8 - bits));
	}
}

static uint16_t port_mask(uint8_t len)
{
	return len ? (uint16_t)(0xffff << (16 - len)) : 0;
}

static void rule_key(const struct qos_rule *r, unsigned int t, uint16_t sp, uint8_t sl,
		     uint16_t dp, uint8_t dl, struct qos_rule_key *k)
{
	memset(k, 0, sizeof(*k));
	k->table = t;
	k->src_len = r->src_len;
	k->dst_len = r->dst_len;
	k->proto = r->proto >= 0 ? r->proto : 0;
	k->mask = r->fl_mask | (r->proto >= 0 ? QOS_RULE_M_PROTO : 0) |
		  (uint32_t)sl << QOS_RULE_M_SPORT_SHIFT | (uint32_t)dl << QOS_RULE_M_DPORT_SHIFT;
	k->flowlabel = r->flowlabel & r->fl_mask;
	k->sport = htons(sp & port_mask(sl));
	k->dport = htons(dp & port_mask(dl));
	memcpy(k->src, r->src, sizeof(k->src));
	memcpy(k->dst, r->dst, sizeof(k->dst));
}

unsigned int qos_rule_keys(const struct qos_rule *r, unsigned int t, struct qos_rule_key *k)
{
	uint16_t sv[32], dv[32];
	uint8_t sl[32], dl[32];
	unsigned int ns, nd, i, j, n = 0;

	ns = qos_port_blocks(r->sport_lo, r->sport_hi, sv, sl);
	nd = qos_port_blocks(r->dport_lo, r->dport_hi, dv, dl);
	if (ns * nd > QOS_RULE_BLOCKS_MAX)
		return ns * nd;
	for (i = 0; i < ns; i++)
		for (j = 0; j < nd; j++)
			rule_key(r, t, sv[i], sl[i], dv[j], dl[j], &k[n++]);
	return n;
}

/* Bits of a port range for the rank: 16 for one port, 16 - log2 of the
 * range's size (rounded down) for a range, 0 for any. */
static uint32_t port_bits(uint16_t lo, uint16_t hi)
{
	return 16 - (31 - __builtin_clz((uint32_t)hi - lo + 1));
}

uint64_t qos_rule_rank(const struct qos_rule *r)
{
	uint32_t spec = r->src_len + r->dst_len + __builtin_popcount(r->fl_mask) +
			(r->proto >= 0 ? 8 : 0) + port_bits(r->sport_lo, r->sport_hi) +
			port_bits(r->dport_lo, r->dport_hi);

	return (uint64_t)r->prio << QOS_RANK_PRIO_SHIFT |
	       (uint64_t)(SPEC_MAX - spec) << RANK_SPEC_SHIFT | r->id;
}

void qos_rule_val(const struct qos_rule *r, struct qos_rule_val *v)
{
	memset(v, 0, sizeof(*v));
	v->rank = qos_rule_rank(r);
	v->id = r->id;
	v->class_id = r->class_id;
	v->flags = (r->dscp >= 0 ? QOS_RULE_F_SET_DSCP : 0) | (r->profile ? QOS_RULE_F_PROFILE : 0) |
		   (r->reserve ? QOS_RULE_F_RESERVE : 0);
	v->expires_ns = r->expires_ns;
	v->dscp = r->dscp >= 0 ? r->dscp : 0;
	v->policer = r->police_bps ? r->policer : 0;
	v->sport_lo = r->sport_lo;
	v->sport_hi = r->sport_hi;
	v->dport_lo = r->dport_lo;
	v->dport_hi = r->dport_hi;
	memcpy(v->name, r->name, sizeof(v->name));
}

/* What identifies a match: its key with the ports' first blocks, and the
 * whole port ranges. */
struct rule_match {
	struct qos_rule_key key;
	uint16_t ports[4];
};

static void rule_match(const struct qos_rule *r, struct rule_match *m)
{
	memset(m, 0, sizeof(*m));
	rule_key(r, 0, 0, 0, 0, 0, &m->key);
	m->ports[0] = r->sport_lo;
	m->ports[1] = r->sport_hi;
	m->ports[2] = r->dport_lo;
	m->ports[3] = r->dport_hi;
}

bool qos_rule_same_match(const struct qos_rule *a, const struct qos_rule *b)
{
	struct rule_match ma, mb;

	if (qos_rule_tables(a) != qos_rule_tables(b))
		return false;
	rule_match(a, &ma);
	rule_match(b, &mb);
	return !memcmp(&ma, &mb, sizeof(ma));
}

bool qos_rule_same(const struct qos_rule *a, const struct qos_rule *b)
{
	return qos_rule_same_match(a, b) && a->prio == b->prio && a->class_id == b->class_id &&
	       a->dscp == b->dscp && !strcmp(a->name, b->name) &&
	       a->police_bps == b->police_bps && a->police_burst == b->police_burst &&
	       !memcmp(&a->police_act, &b->police_act, sizeof(a->police_act));
}

/* Everything qos_rule_same() compares, packed so that memcmp() orders it. */
struct rule_ident {
	struct rule_match match;
	uint32_t tables;
	uint32_t prio;
	uint32_t class_id;
	int32_t dscp;
	char name[QOS_RULE_NAME_LEN];
	uint64_t police_bps;
	uint64_t police_burst;
	struct qos_police_action police_act;
	uint16_t pad;
	uint32_t id;			/* payload, not compared */
};

#define RULE_IDENT_CMP_LEN offsetof(struct rule_ident, id)

static void rule_ident(const struct qos_rule *r, struct rule_ident *x)
{
	memset(x, 0, sizeof(*x));
	x->tables = qos_rule_tables(r);
	rule_match(r, &x->match);
	x->prio = r->prio;
	x->class_id = r->class_id;
	x->dscp = r->dscp;
	x->police_bps = r->police_bps;
	x->police_burst = r->police_burst;
	x->police_act = r->police_act;
	/* Up to the NUL only: the bytes after it are not part of the name. */
	memcpy(x->name, r->name, strnlen(r->name, sizeof(x->name) - 1));
	x->id = r->id;
}

static int ident_cmp(const void *a, const void *b)
{
	return memcmp(a, b, RULE_IDENT_CMP_LEN);
}

int qos_rules_keep_ids(const struct qos_rules *cur, struct qos_rules *next)
{
	struct rule_ident *idx, want, *hit;
	size_t i, n = 0;

	idx = calloc(cur->n ?: 1, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (i = 0; i < cur->n; i++)
		if (cur->r[i].profile)
			rule_ident(&cur->r[i], &idx[n++]);
	qsort(idx, n, sizeof(*idx), ident_cmp);
	for (i = 0; i < next->n; i++) {
		if (next->r[i].id || !next->r[i].profile)
			continue;
		rule_ident(&next->r[i], &want);
		hit = bsearch(&want, idx, n, sizeof(*idx), ident_cmp);
		if (hit)
			next->r[i].id = hit->id;
	}
	free(idx);
	return 0;
}

static const char *rule_label(const struct qos_rule *r, char *buf, size_t len)
{
	char m[160];

	if (r->name[0])
		snprintf(buf, len, "rule %s", r->name);
	else
		snprintf(buf, len, "rule '%s'", qos_rule_fmt_match(r, m, sizeof(m)));
	return buf;
}

struct keyed {
	struct qos_rule_key key;
	uint32_t idx;
};

static int keyed_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct keyed *)a)->key, &((const struct keyed *)b)->key,
		      sizeof(struct qos_rule_key));
}

static int shape_cmp(const void *a, const void *b)
{
	const struct qos_rule_shape *x = a, *y = b;

	return x->min_rank < y->min_rank ? -1 : x->min_rank > y->min_rank;
}

int qos_rules_shapes(const struct qos_rules *l, struct qos_rule_set *sh, size_t *bad, char *err,
			size_t errlen)
{
	size_t i;
	uint32_t j, t;

	memset(sh, 0, sizeof(*sh));
	for (i = 0; i < l->n; i++) {
		const struct qos_rule *r = &l->r[i];
		unsigned int tables = qos_rule_tables(r);
		uint64_t rank = qos_rule_rank(r);

		for (t = 0; t < QOS_TABLE_MAX; t++) {
			struct qos_rule_key ks[QOS_RULE_BLOCKS_MAX];
			unsigned int b, nk;
			char lb[200];

			if (!(tables & 1U << t))
				continue;
			nk = qos_rule_keys(r, t, ks);
			if (nk > QOS_RULE_BLOCKS_MAX) {
				snprintf(err, errlen, "%s: ports cut into %u blocks, more than %d",
					 rule_label(r, lb, sizeof(lb)), nk, QOS_RULE_BLOCKS_MAX);
				if (bad)
					*bad = i;
				return -E2BIG;
			}
			for (b = 0; b < nk; b++) {
				const struct qos_rule_key *k = &ks[b];
				struct qos_rule_shape *s;

				for (j = 0; j < sh->n[t]; j++) {
					s = &sh->shape[t][j];
					if (s->src_len == k->src_len && s->dst_len == k->dst_len &&
					    s->mask == k->mask)
						break;
				}
				if (j == sh->n[t]) {
					if (j == QOS_RULE_SHAPES_MAX) {
						snprintf(err, errlen,
							 "%s: more than %d %s rule shapes (distinct prefix lengths, flow-label masks, protocol or not, port block sizes)",
							 rule_label(r, lb, sizeof(lb)),
							 QOS_RULE_SHAPES_MAX, t ? "IPv6" : "IPv4");
						if (bad)
							*bad = i;
						return -E2BIG;
					}
					s = &sh->shape[t][sh->n[t]++];
					s->table = t;
					s->src_len = k->src_len;
					s->dst_len = k->dst_len;
					s->mask = k->mask;
					s->proto_mask = k->mask & QOS_RULE_M_PROTO ? 0xff : 0;
					s->sport_mask = htons(port_mask(
						k->mask >> QOS_RULE_M_SPORT_SHIFT & QOS_RULE_M_PORT_LEN));
					s->dport_mask = htons(port_mask(
						k->mask >> QOS_RULE_M_DPORT_SHIFT & QOS_RULE_M_PORT_LEN));
					prefix_mask(k->src_len, s->src);
					prefix_mask(k->dst_len, s->dst);
					s->min_rank = rank;
				}
				if (rank < s->min_rank)
					s->min_rank = rank;
			}
		}
	}
	for (t = 0; t < QOS_TABLE_MAX; t++)
		qsort(sh->shape[t], sh->n[t], sizeof(sh->shape[t][0]), shape_cmp);
	return 0;
}

int qos_rules_validate(const struct qos_rules *l, uint32_t capacity, size_t *bad, char *err,
		       size_t errlen)
{
	struct qos_rule_key one[QOS_RULE_BLOCKS_MAX];
	struct keyed *ks;
	struct qos_rule_set sh;
	size_t i, n = 0, cap = 0;
	unsigned int t;
	bool same;
	char a[200], b[200];
	int ret;

	/* Rule ids start at 1: capacity - 1 rules fit. */
	if (l->n >= capacity) {
		snprintf(err, errlen, "%zu rules, more than the rule table holds (%u)", l->n,
			 capacity - 1);
		if (bad)
			*bad = capacity - 1;
		return -ENOSPC;
	}
	ret = qos_rules_shapes(l, &sh, bad, err, errlen);
	if (ret)
		return ret;
	/* The shapes passed: every rule has at most QOS_RULE_BLOCKS_MAX keys. */
	for (i = 0; i < l->n; i++)
		for (t = 0; t < QOS_TABLE_MAX; t++)
			if (qos_rule_tables(&l->r[i]) & 1U << t)
				cap += qos_rule_keys(&l->r[i], t, one);
	/* The hash has as many entries as the table has ids. */
	if (cap >= capacity) {
		snprintf(err, errlen,
			 "%zu rules take %zu entries (one per family and port block), more than the rule table holds (%u)",
			 l->n, cap, capacity - 1);
		if (bad)
			*bad = l->n - 1;
		return -ENOSPC;
	}
	ks = calloc(cap + 1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	for (i = 0; i < l->n; i++) {
		for (t = 0; t < QOS_TABLE_MAX; t++) {
			unsigned int b, nk;

			if (!(qos_rule_tables(&l->r[i]) & 1U << t))
				continue;
			nk = qos_rule_keys(&l->r[i], t, one);
			for (b = 0; b < nk; b++) {
				ks[n].key = one[b];
				ks[n++].idx = i;
			}
		}
	}
	qsort(ks, n, sizeof(*ks), keyed_cmp);
	for (i = 1; i < n; i++) {
		if (keyed_cmp(&ks[i - 1], &ks[i]))
			continue;
		/* Ranges that are not the same can still share a block:
		 * 0-1535 and 0-1023 both hold 0-1023, and one entry cannot
		 * belong to two rules. */
		same = qos_rule_same_match(&l->r[ks[i].idx], &l->r[ks[i - 1].idx]);
		snprintf(err, errlen, "%s %s %s%s", rule_label(&l->r[ks[i].idx], a, sizeof(a)),
			 same ? "has the same match as" : "shares an aligned port block with",
			 rule_label(&l->r[ks[i - 1].idx], b, sizeof(b)),
			 same ? "" : " (one entry cannot hold both): split the ranges so that they do not");
		if (bad)
			*bad = ks[i].idx;
		free(ks);
		return -EEXIST;
	}
	free(ks);
	return 0;
}

uint32_t qos_rules_flags(const struct qos_rule_set *sh)
{
	uint32_t f = (sh->n[QOS_TABLE_IPV4] ? QOS_RULES_V4 : 0) |
		     (sh->n[QOS_TABLE_IPV6] ? QOS_RULES_V6 : 0);
	unsigned int t, i;

	for (t = 0; t < QOS_TABLE_MAX; t++) {
		for (i = 0; i < sh->n[t]; i++) {
			if (sh->shape[t][i].proto_mask)
				f |= QOS_RULES_L4;
			if (sh->shape[t][i].sport_mask || sh->shape[t][i].dport_mask)
				f |= QOS_RULES_PORTS;
		}
	}
	return f;
}
