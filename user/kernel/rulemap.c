// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rules in the kernel: read the installed rules back from the hash table
 * (the only record of them, so nothing on disk can disagree), and change
 * them without a moment where a packet sees neither the old nor the new
 * set: new entries are written first (stage), the configuration holding the
 * new shapes is swapped in by the caller, then entries of rules gone are
 * deleted (retire).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/policer.h"
#include "kernel/rulemap.h"
#include "lib/util.h"

#define BATCH		4096

/* Fold one map entry into the rule it belongs to: a rule has one entry per
 * table and port block, and an entry of the other table makes a rule of no
 * family AF_UNSPEC again. The value carries the whole port ranges. */
static int fold_entry(struct qos_rules *l, int32_t *by_id, const struct qos_rule_key *k,
		      const struct qos_rule_val *v)
{
	struct qos_rule r, *e;
	int ret;

	if (by_id[v->id] >= 0) {
		e = &l->r[by_id[v->id]];
		if (e->family != (k->table == QOS_TABLE_IPV4 ? AF_INET : AF_INET6))
			e->family = AF_UNSPEC;
		return 0;
	}
	qos_rule_init(&r);
	r.id = v->id;
	memcpy(r.name, v->name, sizeof(r.name) - 1);
	r.family = k->table == QOS_TABLE_IPV4 ? AF_INET : AF_INET6;
	memcpy(r.src, k->src, sizeof(r.src));
	memcpy(r.dst, k->dst, sizeof(r.dst));
	r.src_len = k->src_len;
	r.dst_len = k->dst_len;
	r.has_src = k->src_len > 0;
	r.has_dst = k->dst_len > 0;
	r.fl_mask = k->mask & QOS_FLOWLABEL_MASK;
	r.flowlabel = k->flowlabel;
	r.proto = k->mask & QOS_RULE_M_PROTO ? k->proto : -1;
	r.sport_lo = v->sport_lo;
	r.sport_hi = v->sport_hi;
	r.dport_lo = v->dport_lo;
	r.dport_hi = v->dport_hi;
	r.prio = v->rank >> QOS_RANK_PRIO_SHIFT;
	r.class_id = v->class_id;
	r.dscp = v->flags & QOS_RULE_F_SET_DSCP ? v->dscp : -1;
	r.profile = v->flags & QOS_RULE_F_PROFILE;
	r.reserve = v->flags & QOS_RULE_F_RESERVE;
	r.expires_ns = v->expires_ns;
	r.policer = v->policer;
	ret = qos_rules_add(l, &r);
	if (!ret)
		by_id[v->id] = l->n - 1;
	return ret;
}

/* The map and key an entry lives under: IPv4 entries under their short
 * key in rules4 (qos_common.h), IPv6 ones as they are in rules. */
static int entry_key(const struct qos_rule_maps *m, const struct qos_rule_key *k,
		     struct qos_rule_key4 *k4, const void **key)
{
	if (k->table != QOS_TABLE_IPV4) {
		*key = k;
		return m->rules;
	}
	*k4 = (struct qos_rule_key4){ k->src_len, k->dst_len, k->proto, 0, k->mask,
				      k->sport, k->dport, k->src[0], k->dst[0] };
	*key = k4;
	return m->rules4;
}

static void key_of4(const struct qos_rule_key4 *k4, struct qos_rule_key *k)
{
	*k = (struct qos_rule_key){ QOS_TABLE_IPV4, k4->src_len, k4->dst_len, k4->proto,
				    k4->mask, 0, k4->sport, k4->dport, { k4->src }, { k4->dst } };
}

int qos_rule_entry_put(const struct qos_rule_maps *m, const struct qos_rule_key *k,
		       const struct qos_rule_val *v)
{
	struct qos_rule_key4 k4;
	const void *key;
	int fd = entry_key(m, k, &k4, &key);

	return bpf_map_update_elem(fd, key, v, BPF_ANY) ? -errno : 0;
}

/* Fold the entries of one table (@v4: rules4) into @l. */
static int read_table(const struct qos_rule_maps *m, bool v4, struct qos_rules *l,
		      int32_t *by_id, void *keys, struct qos_rule_val *vals)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	size_t ksize = v4 ? sizeof(struct qos_rule_key4) : sizeof(struct qos_rule_key);
	struct qos_rule_key in, out, k;
	bool first = true;
	size_t i;
	int ret = 0;

	for (;;) {
		uint32_t count = BATCH;
		int err;

		err = bpf_map_lookup_batch(v4 ? m->rules4 : m->rules, first ? NULL : &in, &out,
					   keys, vals, &count, &opts);
		if (err && errno != ENOENT)
			return -errno;
		for (i = 0; i < count && !ret; i++) {
			const void *kp = (const char *)keys + i * ksize;

			if (vals[i].id >= m->capacity)
				continue;
			if (v4)
				key_of4(kp, &k);
			else
				memcpy(&k, kp, sizeof(k));
			ret = fold_entry(l, by_id, &k, &vals[i]);
		}
		if (ret || err)
			return ret;
		in = out;
		first = false;
	}
}

int qos_rules_read(const struct qos_rule_maps *m, struct qos_rules *l, bool hits)
{
	struct qos_rule_key *keys;
	struct qos_rule_val *vals;
	int32_t *by_id;
	size_t i;
	int ret = 0;

	memset(l, 0, sizeof(*l));
	keys = calloc(BATCH, sizeof(*keys));
	vals = calloc(BATCH, sizeof(*vals));
	by_id = malloc(m->capacity * sizeof(*by_id));
	if (!keys || !vals || !by_id) {
		ret = -ENOMEM;
		goto out;
	}
	memset(by_id, 0xff, m->capacity * sizeof(*by_id));
	ret = read_table(m, true, l, by_id, keys, vals) ?:
	      read_table(m, false, l, by_id, keys, vals);
	for (i = 0; hits && !ret && i < l->n; i++)
		ret = qos_rule_hits(m, l->r[i].id, &l->r[i].hits);
	for (i = 0; !ret && i < l->n; i++)
		if (l->r[i].policer)
			ret = qos_police_rule_read(m->policers, &l->r[i]);
out:
	free(keys);
	free(vals);
	free(by_id);
	if (ret)
		qos_rules_free(l);
	return ret;
}

static int write_rule(const struct qos_rule_maps *m, const struct qos_rule *r)
{
	struct qos_rule_key k[QOS_RULE_BLOCKS_MAX];
	struct qos_rule_val v;
	unsigned int t, b, n;

	qos_rule_val(r, &v);
	for (t = 0; t < QOS_TABLE_MAX; t++) {
		if (!(qos_rule_tables(r) & 1U << t))
			continue;
		n = qos_rule_keys(r, t, k);
		if (n > QOS_RULE_BLOCKS_MAX)
			return -E2BIG;
		for (b = 0; b < n; b++) {
			int ret = qos_rule_entry_put(m, &k[b], &v);

			if (ret)
				return ret;
		}
	}
	return 0;
}

/*
 * Delete the entries of @r that still carry its id: a rule of the next list
 * with the same match (a renamed or re-classed rule) has already written
 * the same keys with its own id, and must keep them.
 */
static void delete_rule(const struct qos_rule_maps *m, const struct qos_rule *r)
{
	struct qos_rule_key k[QOS_RULE_BLOCKS_MAX];
	struct qos_rule_val v;
	unsigned int t, b, n;

	for (t = 0; t < QOS_TABLE_MAX; t++) {
		if (!(qos_rule_tables(r) & 1U << t))
			continue;
		n = qos_rule_keys(r, t, k);
		for (b = 0; n <= QOS_RULE_BLOCKS_MAX && b < n; b++) {
			struct qos_rule_key4 k4;
			const void *key;
			int fd = entry_key(m, &k[b], &k4, &key);

			if (!bpf_map_lookup_elem(fd, key, &v) && v.id == r->id)
				bpf_map_delete_elem(fd, key);
		}
	}
}

int qos_rule_hits(const struct qos_rule_maps *m, uint32_t id, struct qos_ctr *sum)
{
	int ncpu = qos_cpu_rows(), cpu;
	struct qos_ctr c;

	if (ncpu < 0)
		return ncpu;
	memset(sum, 0, sizeof(*sum));
	for (cpu = 0; cpu < ncpu; cpu++) {
		uint32_t key = cpu * m->capacity + id;

		if (bpf_map_lookup_elem(m->stats, &key, &c))
			return -errno;
		sum->packets += c.packets;
		sum->bytes += c.bytes;
	}
	return 0;
}

/* The hit counters of a newly given id zeroed on every CPU: the id may be
 * one a rule left (qos_rules_stage()). */
static int zero_stats(const struct qos_rule_maps *m, uint32_t id)
{
	int ncpu = qos_cpu_rows(), cpu;
	const struct qos_ctr z = {};

	if (ncpu < 0)
		return ncpu;
	for (cpu = 0; cpu < ncpu; cpu++) {
		uint32_t key = cpu * m->capacity + id;

		if (bpf_map_update_elem(m->stats, &key, &z, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* Ids present in @l, as a byte per id. */
static uint8_t *id_set(const struct qos_rules *l, uint32_t capacity)
{
	uint8_t *s = calloc(capacity ? capacity : 1, 1);
	size_t i;

	for (i = 0; s && i < l->n; i++)
		if (l->r[i].id && l->r[i].id < capacity)
			s[l->r[i].id] = 1;
	return s;
}

/* Rule policer ids of a rule table of @capacity: one per rule it can hold,
 * as many as the qos_rule_pols hash sized with it. */
static uint32_t policer_end(uint32_t capacity)
{
	return QOS_POLICER_RULE_FIRST + capacity;
}

/* Policer ids in use by the rules of @l, as a byte per id below @end. */
static void policer_set(const struct qos_rules *l, uint8_t *used, uint32_t end)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->r[i].police_bps && l->r[i].policer < end)
			used[l->r[i].policer] = 1;
}

/* Rules with a policer of their own and no id for it (or one a smaller
 * table has not) take the lowest id free in both lists, as rule ids do. */
static int assign_policers(const struct qos_rule_maps *m, const struct qos_rules *cur,
			   struct qos_rules *next, char *err, size_t errlen)
{
	uint32_t idx = QOS_POLICER_RULE_FIRST, end = policer_end(m->capacity);
	uint8_t *used = calloc(end, 1);
	size_t i;
	int ret = 0;

	if (!used)
		return -ENOMEM;
	policer_set(cur, used, end);
	policer_set(next, used, end);
	for (i = 0; i < next->n && !ret; i++) {
		struct qos_rule *r = &next->r[i];

		if (!r->police_bps || (r->policer >= QOS_POLICER_RULE_FIRST && r->policer < end))
			continue;
		while (idx < end && used[idx])
			idx++;
		if (idx >= end) {
			snprintf(err, errlen, "more than %u rules with a policer", m->capacity);
			ret = -ENOSPC;
			break;
		}
		r->policer = idx;
		used[idx] = 1;
	}
	free(used);
	return ret;
}

/* New rules take the lowest ids free in both lists, so an id is not reused
 * while its previous rule is still installed. */
static int assign_ids(const struct qos_rule_maps *m, struct qos_rules *next, uint8_t *in_cur,
		      uint8_t *in_next, uint8_t *fresh, char *err, size_t errlen)
{
	uint32_t id = 1;
	size_t i;

	for (i = 0; i < next->n; i++) {
		if (next->r[i].id)
			continue;
		while (id < m->capacity && (in_cur[id] || in_next[id]))
			id++;
		if (id >= m->capacity) {
			snprintf(err, errlen, "the rule table is full (%u rules)", m->capacity - 1);
			return -ENOSPC;
		}
		next->r[i].id = id;
		in_next[id] = fresh[id] = 1;
	}
	return 0;
}

int qos_rules_stage(const struct qos_rule_maps *m, const struct qos_rules *cur,
		    struct qos_rules *next, struct qos_rule_set *set, uint32_t *flags, char *err,
		    size_t errlen)
{
	uint8_t *in_cur = id_set(cur, m->capacity), *in_next = id_set(next, m->capacity);
	uint8_t *fresh = calloc(m->capacity ? m->capacity : 1, 1);
	size_t i, added = 0;
	int ret;

	if (!in_cur || !in_next || !fresh) {
		ret = -ENOMEM;
		goto out;
	}
	/* A smaller table (new programs) cannot hold an id from a larger
	 * one: such a rule gets a new id, and its hits start again. */
	for (i = 0; i < next->n; i++)
		if (next->r[i].id >= m->capacity)
			next->r[i].id = 0;
	ret = assign_ids(m, next, in_cur, in_next, fresh, err, errlen);
	ret = ret ?: assign_policers(m, cur, next, err, errlen);
	ret = ret ?: qos_rules_validate(next, m->capacity, NULL, err, errlen);
	ret = ret ?: qos_rules_shapes(next, set, NULL, err, errlen);
	if (ret)
		goto out;
	*flags = qos_rules_flags(set);
	for (i = 0; i < next->n; i++)
		if (next->r[i].reserve)
			*flags |= QOS_RULES_RESERVE;
	for (i = 0; i < next->n; i++, added = i) {
		const struct qos_rule *r = &next->r[i];

		if (in_cur[r->id])
			continue;
		/* The counters of a rule's id stay when it goes, so that a
		 * rule keeping an id it had (a rollback) keeps its hits; a
		 * newly given id starts at zero, and one carried into new
		 * programs finds their counters at zero. */
		ret = fresh[r->id] ? zero_stats(m, r->id) : 0;
		/* Its policer before the entries that point at it. */
		if (!ret && r->police_bps)
			ret = qos_police_rule_write(m->policers, r);
		ret = ret ?: write_rule(m, r);
		if (ret) {
			snprintf(err, errlen, "writing rule %u: %s", r->id, strerror(-ret));
			break;
		}
	}
	if (ret) {
		struct qos_rules part = { .r = next->r, .n = added };

		qos_rules_unstage(m, cur, &part);
	}
out:
	free(in_cur);
	free(in_next);
	free(fresh);
	return ret;
}

/* Delete the policers of @gone that @keep does not use: no entry points at
 * them any more. */
static void retire_policers(const struct qos_rule_maps *m, const struct qos_rules *gone,
			    const struct qos_rules *keep)
{
	uint32_t end = policer_end(m->capacity);
	uint8_t *used = calloc(end, 1);
	size_t i;

	if (!used)
		return;
	policer_set(keep, used, end);
	for (i = 0; i < gone->n; i++) {
		uint32_t idx = gone->r[i].policer;

		if (gone->r[i].police_bps && idx >= QOS_POLICER_RULE_FIRST && idx < end &&
		    !used[idx])
			qos_police_rule_clear(m->policers, idx);
	}
	free(used);
}

/* The rules of @cur that @next does not have, deleted when @del; without
 * the memory to tell, every one (none deleted). */
static size_t rules_gone(const struct qos_rule_maps *m, const struct qos_rules *cur,
			 const struct qos_rules *next, bool del)
{
	uint8_t *in_next = id_set(next, m->capacity);
	size_t i, n = 0;

	if (!in_next)
		return del ? 0 : cur->n;
	for (i = 0; i < cur->n; i++) {
		if (cur->r[i].id < m->capacity && in_next[cur->r[i].id])
			continue;
		n++;
		if (del)
			delete_rule(m, &cur->r[i]);
	}
	free(in_next);
	return n;
}

bool qos_rules_gone(const struct qos_rule_maps *m, const struct qos_rules *cur,
		    const struct qos_rules *next)
{
	return rules_gone(m, cur, next, false) > 0;
}

void qos_rules_retire(const struct qos_rule_maps *m, const struct qos_rules *cur,
		      const struct qos_rules *next)
{
	rules_gone(m, cur, next, true);
	retire_policers(m, cur, next);
}

void qos_rules_unstage(const struct qos_rule_maps *m, const struct qos_rules *cur,
		       const struct qos_rules *next)
{
	uint8_t *in_cur = id_set(cur, m->capacity), *in_next = id_set(next, m->capacity);
	size_t i;

	if (in_cur && in_next) {
		for (i = 0; i < next->n; i++)
			if (next->r[i].id < m->capacity && !in_cur[next->r[i].id])
				delete_rule(m, &next->r[i]);
		retire_policers(m, next, cur);
		/* Entries of @cur that a staged rule with the same match
		 * overwrote. */
		for (i = 0; i < cur->n; i++)
			if (cur->r[i].id < m->capacity && !in_next[cur->r[i].id])
				write_rule(m, &cur->r[i]);
	}
	free(in_cur);
	free(in_next);
}
