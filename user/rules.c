// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rule manager: parse rules, turn them into the masked keys and shapes of
 * the tuple-space search in bpf/lib/rules.h, and install them without
 * reloading anything. Documentation/classifier.rst explains the model.
 *
 * The pinned maps are the only state: every command reads the installed
 * rules back from the hash table, so no file can disagree with the kernel.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "loader.h"
#include "rules.h"
#include "util.h"

#define RANK_PRIO_SHIFT	40
#define RANK_SPEC_SHIFT	24
#define SPEC_MAX	511
#define BATCH		4096

void qos_rule_init(struct qos_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->proto = -1;
	r->dscp = -1;
	r->prio = QOS_RULE_PRIO_DEFAULT;
}

static int parse_prefix(const char *s, int *family, uint8_t addr[16], uint8_t *plen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	uint32_t len, max;
	int fam, i;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%.*s", slash ? (int)(slash - s) : (int)strlen(s), s);
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, buf, addr) == 1)
		fam = AF_INET;
	else if (inet_pton(AF_INET6, buf, addr) == 1)
		fam = AF_INET6;
	else
		return -EINVAL;
	max = fam == AF_INET ? 32 : 128;
	len = max;
	if (slash && (qos_parse_u32(slash + 1, &len) || len > max))
		return -ERANGE;
	/* Host bits set is a typo more often than not; ip-route refuses too. */
	for (i = 0; i < 16; i++) {
		int bits = (int)len - i * 8;
		uint8_t keep = bits >= 8 ? 0xff : bits <= 0 ? 0 : (uint8_t)(0xff << (8 - bits));

		if (addr[i] & ~keep)
			return -EDOM;
	}
	*family = fam;
	*plen = len;
	return 0;
}

static const struct {
	const char *name;
	int proto;
} protos[] = {
	{ "icmp", 1 }, { "tcp", 6 }, { "udp", 17 }, { "gre", 47 }, { "esp", 50 },
	{ "ah", 51 }, { "icmpv6", 58 }, { "ipv6-icmp", 58 }, { "sctp", 132 },
};

static const char *proto_name(int proto)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(protos); i++)
		if (protos[i].proto == proto)
			return protos[i].name;
	return NULL;
}

int qos_rule_set(struct qos_rule *r, const char *key, const char *val, char *err, size_t errlen)
{
	uint32_t u, m;
	uint8_t d;
	size_t i;
	int fam, ret;

	if (!strcmp(key, "src") || !strcmp(key, "dst")) {
		bool src = key[0] == 's';

		ret = parse_prefix(val, &fam, src ? r->src : r->dst, src ? &r->src_len : &r->dst_len);
		if (ret == -EDOM) {
			snprintf(err, errlen, "'%s' has host bits set beyond the prefix length", val);
			return -EINVAL;
		}
		if (ret) {
			snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 prefix (ADDR[/LEN])", val);
			return -EINVAL;
		}
		if (r->family != AF_UNSPEC && r->family != fam) {
			snprintf(err, errlen, "'%s' is not of the rule's address family", val);
			return -EINVAL;
		}
		r->family = fam;
		if (src)
			r->has_src = true;
		else
			r->has_dst = true;
	} else if (!strcmp(key, "flowlabel")) {
		const char *slash = strchr(val, '/');
		char num[16];

		if (!strcmp(val, "any")) {
			r->flowlabel = r->fl_mask = 0;
			return 0;
		}
		snprintf(num, sizeof(num), "%.*s", slash ? (int)(slash - val) : 15, val);
		m = QOS_FLOWLABEL_MASK;
		if (qos_parse_u32(num, &u) || u > QOS_FLOWLABEL_MASK ||
		    (slash && (qos_parse_u32(slash + 1, &m) || !m || m > QOS_FLOWLABEL_MASK))) {
			snprintf(err, errlen,
				 "'%s' is not a flow label LABEL[/MASK] (20 bits, e.g. 0x12345/0xff000)",
				 val);
			return -EINVAL;
		}
		if (u & ~m) {
			snprintf(err, errlen, "'%s': label has bits outside the mask", val);
			return -EINVAL;
		}
		if (r->family == AF_INET) {
			snprintf(err, errlen, "a flow label is IPv6 only, the rule is IPv4");
			return -EINVAL;
		}
		r->family = AF_INET6;
		r->flowlabel = u;
		r->fl_mask = m;
	} else if (!strcmp(key, "proto")) {
		for (i = 0; i < ARRAY_SIZE(protos); i++) {
			if (!strcasecmp(val, protos[i].name)) {
				r->proto = protos[i].proto;
				return 0;
			}
		}
		if (qos_parse_u32(val, &u) || u > 255) {
			snprintf(err, errlen, "'%s' is not a protocol (tcp, udp, icmpv6, ... or 0-255)",
				 val);
			return -EINVAL;
		}
		r->proto = u;
	} else if (!strcmp(key, "priority")) {
		if (qos_parse_u32(val, &u) || u > 0xffff) {
			snprintf(err, errlen, "'%s' is not a priority (0-65535, lower wins)", val);
			return -EINVAL;
		}
		r->prio = u;
	} else if (!strcmp(key, "class")) {
		if (!*val || strlen(val) >= sizeof(r->class_name)) {
			snprintf(err, errlen, "'%s' is not a class name", val);
			return -EINVAL;
		}
		snprintf(r->class_name, sizeof(r->class_name), "%s", val);
	} else if (!strcmp(key, "set-dscp")) {
		if (qos_parse_dscp(val, &d)) {
			snprintf(err, errlen, "'%s' is not a DSCP (0-63, ef, csN, afXY, le, va)", val);
			return -EINVAL;
		}
		r->dscp = d;
	} else if (!strcmp(key, "name")) {
		if (!*val || strlen(val) >= sizeof(r->name) || strpbrk(val, " \t\"")) {
			snprintf(err, errlen, "rule name '%s' must be 1-%d characters without spaces",
				 val, QOS_RULE_NAME_LEN - 1);
			return -EINVAL;
		}
		snprintf(r->name, sizeof(r->name), "%s", val);
	} else {
		snprintf(err, errlen,
			 "unknown rule key (src, dst, flowlabel, proto, priority, class, set-dscp)");
		return -ENOENT;
	}
	return 0;
}

int qos_rule_check(const struct qos_rule *r, char *err, size_t errlen)
{
	if (!r->class_name[0]) {
		snprintf(err, errlen, "the rule names no class (class NAME)");
		return -EINVAL;
	}
	return 0;
}

/* Rule tables (enum qos_table bits) a rule has an entry in: a rule that
 * names no address family matches both. */
static unsigned int rule_tables(const struct qos_rule *r)
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

static void rule_key(const struct qos_rule *r, unsigned int t, struct qos_rule_key *k)
{
	memset(k, 0, sizeof(*k));
	k->table = t;
	k->src_len = r->src_len;
	k->dst_len = r->dst_len;
	k->proto = r->proto >= 0 ? r->proto : 0;
	k->mask = r->fl_mask | (r->proto >= 0 ? QOS_RULE_M_PROTO : 0);
	k->flowlabel = r->flowlabel & r->fl_mask;
	memcpy(k->src, r->src, sizeof(k->src));
	memcpy(k->dst, r->dst, sizeof(k->dst));
}

static uint64_t rule_rank(const struct qos_rule *r)
{
	uint32_t spec = r->src_len + r->dst_len + __builtin_popcount(r->fl_mask) +
			(r->proto >= 0 ? 8 : 0);

	return (uint64_t)r->prio << RANK_PRIO_SHIFT |
	       (uint64_t)(SPEC_MAX - spec) << RANK_SPEC_SHIFT | r->id;
}

static void rule_val(const struct qos_rule *r, struct qos_rule_val *v)
{
	memset(v, 0, sizeof(*v));
	v->rank = rule_rank(r);
	v->id = r->id;
	v->class_id = r->class_id;
	v->flags = (r->dscp >= 0 ? QOS_RULE_F_SET_DSCP : 0) | (r->profile ? QOS_RULE_F_PROFILE : 0);
	v->dscp = r->dscp >= 0 ? r->dscp : 0;
	memcpy(v->name, r->name, sizeof(v->name));
}

bool qos_rule_same_match(const struct qos_rule *a, const struct qos_rule *b)
{
	struct qos_rule_key ka, kb;

	if (rule_tables(a) != rule_tables(b))
		return false;
	rule_key(a, 0, &ka);
	rule_key(b, 0, &kb);
	return !memcmp(&ka, &kb, sizeof(ka));
}

bool qos_rule_same(const struct qos_rule *a, const struct qos_rule *b)
{
	return qos_rule_same_match(a, b) && a->prio == b->prio && a->class_id == b->class_id &&
	       a->dscp == b->dscp && !strcmp(a->name, b->name);
}

/* Everything qos_rule_same() compares, packed so that memcmp() orders it. */
struct rule_ident {
	struct qos_rule_key key;
	uint32_t tables;
	uint32_t prio;
	uint32_t class_id;
	int32_t dscp;
	char name[QOS_RULE_NAME_LEN];
	uint32_t id;			/* payload, not compared */
};

#define RULE_IDENT_CMP_LEN offsetof(struct rule_ident, id)

static void rule_ident(const struct qos_rule *r, struct rule_ident *x)
{
	memset(x, 0, sizeof(*x));
	x->tables = rule_tables(r);
	rule_key(r, 0, &x->key);
	x->prio = r->prio;
	x->class_id = r->class_id;
	x->dscp = r->dscp;
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

const char *qos_rule_fmt_match(const struct qos_rule *r, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	size_t n = 0;

	buf[0] = '\0';
	if (r->has_src) {
		inet_ntop(r->family, r->src, a, sizeof(a));
		n += snprintf(buf + n, len - n, "src %s/%u ", a, r->src_len);
	}
	if (r->has_dst && n < len) {
		inet_ntop(r->family, r->dst, a, sizeof(a));
		n += snprintf(buf + n, len - n, "dst %s/%u ", a, r->dst_len);
	}
	if (r->fl_mask && n < len) {
		if (r->fl_mask == QOS_FLOWLABEL_MASK)
			n += snprintf(buf + n, len - n, "flowlabel 0x%05x ", r->flowlabel);
		else
			n += snprintf(buf + n, len - n, "flowlabel 0x%05x/0x%05x ", r->flowlabel,
				      r->fl_mask);
	}
	if (r->proto >= 0 && n < len) {
		if (proto_name(r->proto))
			n += snprintf(buf + n, len - n, "proto %s ", proto_name(r->proto));
		else
			n += snprintf(buf + n, len - n, "proto %d ", r->proto);
	}
	if (!n)
		n = snprintf(buf, len, "%s ", r->family == AF_INET ? "ipv4" :
				       r->family == AF_INET6 ? "ipv6" : "any");
	if (n && n <= len)
		buf[n - 1] = '\0';
	return buf;
}

int qos_rules_add(struct qos_rules *l, const struct qos_rule *r)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct qos_rule *p = realloc(l->r, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->r = p;
		l->cap = cap;
	}
	l->r[l->n++] = *r;
	return 0;
}

void qos_rules_free(struct qos_rules *l)
{
	free(l->r);
	memset(l, 0, sizeof(*l));
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

/* The shapes of @l, per table, sorted by the lowest rank among their rules. */
struct shapes {
	uint32_t n[QOS_TABLE_MAX];
	struct qos_rule_shape s[QOS_TABLE_MAX][QOS_RULE_SHAPES_MAX];
};

static int shape_cmp(const void *a, const void *b)
{
	const struct qos_rule_shape *x = a, *y = b;

	return x->min_rank < y->min_rank ? -1 : x->min_rank > y->min_rank;
}

static int build_shapes(const struct qos_rules *l, struct shapes *sh, size_t *bad, char *err,
			size_t errlen)
{
	size_t i;
	uint32_t j, t;

	memset(sh, 0, sizeof(*sh));
	for (i = 0; i < l->n; i++) {
		const struct qos_rule *r = &l->r[i];
		unsigned int tables = rule_tables(r);
		uint64_t rank = rule_rank(r);

		for (t = 0; t < QOS_TABLE_MAX; t++) {
			struct qos_rule_key k;
			struct qos_rule_shape *s;
			char lb[200];

			if (!(tables & 1U << t))
				continue;
			rule_key(r, t, &k);
			for (j = 0; j < sh->n[t]; j++) {
				s = &sh->s[t][j];
				if (s->src_len == k.src_len && s->dst_len == k.dst_len &&
				    s->mask == k.mask)
					break;
			}
			if (j == sh->n[t]) {
				if (j == QOS_RULE_SHAPES_MAX) {
					snprintf(err, errlen,
						 "%s: more than %d %s rule shapes (distinct prefix lengths, flow-label masks, protocol or not)",
						 rule_label(r, lb, sizeof(lb)), QOS_RULE_SHAPES_MAX,
						 t ? "IPv6" : "IPv4");
					if (bad)
						*bad = i;
					return -E2BIG;
				}
				s = &sh->s[t][sh->n[t]++];
				s->table = t;
				s->src_len = k.src_len;
				s->dst_len = k.dst_len;
				s->mask = k.mask;
				s->proto_mask = k.mask & QOS_RULE_M_PROTO ? 0xff : 0;
				prefix_mask(k.src_len, s->src);
				prefix_mask(k.dst_len, s->dst);
				s->min_rank = rank;
			}
			if (rank < s->min_rank)
				s->min_rank = rank;
		}
	}
	for (t = 0; t < QOS_TABLE_MAX; t++)
		qsort(sh->s[t], sh->n[t], sizeof(sh->s[t][0]), shape_cmp);
	return 0;
}

int qos_rules_validate(const struct qos_rules *l, uint32_t capacity, size_t *bad, char *err,
		       size_t errlen)
{
	struct keyed *ks;
	struct shapes sh;
	size_t i, n = 0;
	unsigned int t;
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
	ret = build_shapes(l, &sh, bad, err, errlen);
	if (ret)
		return ret;
	ks = calloc(l->n * QOS_TABLE_MAX + 1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	for (i = 0; i < l->n; i++) {
		for (t = 0; t < QOS_TABLE_MAX; t++) {
			if (!(rule_tables(&l->r[i]) & 1U << t))
				continue;
			rule_key(&l->r[i], t, &ks[n].key);
			ks[n++].idx = i;
		}
	}
	qsort(ks, n, sizeof(*ks), keyed_cmp);
	for (i = 1; i < n; i++) {
		if (keyed_cmp(&ks[i - 1], &ks[i]))
			continue;
		snprintf(err, errlen, "%s has the same match as %s",
			 rule_label(&l->r[ks[i].idx], a, sizeof(a)),
			 rule_label(&l->r[ks[i - 1].idx], b, sizeof(b)));
		if (bad)
			*bad = ks[i].idx;
		free(ks);
		return -EEXIST;
	}
	free(ks);
	return 0;
}

static const char *const map_names[] = { "qos_rules", "qos_rule_stats", "qos_rule_sets",
					 "qos_cfg" };

int qos_rule_maps_open(const char *pin_dir, struct qos_rule_maps *m)
{
	int *fds[] = { &m->rules, &m->stats, &m->sets, &m->cfg };
	struct bpf_map_info info = {};
	uint32_t ilen = sizeof(info);
	char path[512];
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(fds); i++)
		*fds[i] = -1;
	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		snprintf(path, sizeof(path), "%s/%s", pin_dir, map_names[i]);
		*fds[i] = bpf_obj_get(path);
		if (*fds[i] < 0) {
			err = -errno;
			qos_rule_maps_close(m);
			return err;
		}
	}
	if (bpf_obj_get_info_by_fd(m->rules, &info, &ilen)) {
		err = -errno;
		qos_rule_maps_close(m);
		return err;
	}
	m->capacity = info.max_entries;
	return 0;
}

void qos_rule_maps_close(struct qos_rule_maps *m)
{
	int *fds[] = { &m->rules, &m->stats, &m->sets, &m->cfg };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

uint32_t qos_rule_pinned_capacity(const char *pin_dir)
{
	struct bpf_map_info info = {};
	uint32_t ilen = sizeof(info);
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/qos_rules", pin_dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		info.max_entries = 0;
	close(fd);
	return info.max_entries;
}

/* Fold one map entry into the rule it belongs to: a rule of no family has
 * one entry per table, and its second entry makes it AF_UNSPEC again. */
static int fold_entry(struct qos_rules *l, int32_t *by_id, const struct qos_rule_key *k,
		      const struct qos_rule_val *v)
{
	struct qos_rule r, *e;
	int ret;

	if (by_id[v->id] >= 0) {
		e = &l->r[by_id[v->id]];
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
	r.prio = v->rank >> RANK_PRIO_SHIFT;
	r.class_id = v->class_id;
	r.dscp = v->flags & QOS_RULE_F_SET_DSCP ? v->dscp : -1;
	r.profile = v->flags & QOS_RULE_F_PROFILE;
	ret = qos_rules_add(l, &r);
	if (!ret)
		by_id[v->id] = l->n - 1;
	return ret;
}

int qos_rules_read(const struct qos_rule_maps *m, struct qos_rules *l, bool hits)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct qos_rule_key *keys;
	struct qos_rule_val *vals;
	struct qos_rule_key in, out;
	bool first = true;
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
	for (;;) {
		uint32_t count = BATCH;
		int err;

		err = bpf_map_lookup_batch(m->rules, first ? NULL : &in, &out, keys, vals, &count,
					   &opts);
		if (err && errno != ENOENT) {
			ret = -errno;
			goto out;
		}
		for (i = 0; i < count && !ret; i++)
			if (vals[i].id < m->capacity)
				ret = fold_entry(l, by_id, &keys[i], &vals[i]);
		if (ret || err)
			break;
		in = out;
		first = false;
	}
	for (i = 0; hits && !ret && i < l->n; i++)
		ret = qos_ctr_read(m->stats, l->r[i].id, &l->r[i].hits);
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
	struct qos_rule_key k;
	struct qos_rule_val v;
	unsigned int t;

	rule_val(r, &v);
	for (t = 0; t < QOS_TABLE_MAX; t++) {
		if (!(rule_tables(r) & 1U << t))
			continue;
		rule_key(r, t, &k);
		if (bpf_map_update_elem(m->rules, &k, &v, BPF_ANY))
			return -errno;
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
	struct qos_rule_key k;
	struct qos_rule_val v;
	unsigned int t;

	for (t = 0; t < QOS_TABLE_MAX; t++) {
		if (!(rule_tables(r) & 1U << t))
			continue;
		rule_key(r, t, &k);
		if (!bpf_map_lookup_elem(m->rules, &k, &v) && v.id == r->id)
			bpf_map_delete_elem(m->rules, &k);
	}
}

static int zero_stats(const struct qos_rule_maps *m, uint32_t id)
{
	int ncpu = libbpf_num_possible_cpus();
	struct qos_ctr *z;
	int ret = 0;

	if (ncpu < 0)
		return ncpu;
	z = calloc(ncpu, sizeof(*z));
	if (!z)
		return -ENOMEM;
	if (bpf_map_update_elem(m->stats, &id, z, BPF_ANY))
		ret = -errno;
	free(z);
	return ret;
}

/* Ids present in @l, as a byte per id. */
static uint8_t *id_set(const struct qos_rules *l, uint32_t capacity)
{
	uint8_t *s = calloc(capacity, 1);
	size_t i;

	for (i = 0; s && i < l->n; i++)
		if (l->r[i].id && l->r[i].id < capacity)
			s[l->r[i].id] = 1;
	return s;
}

int qos_rules_commit(const struct qos_rule_maps *m, const struct qos_rules *cur,
		     struct qos_rules *next, uint32_t *rules, bool write_cfg, char *err,
		     size_t errlen)
{
	uint8_t *in_cur = NULL, *in_next = NULL;
	uint32_t spare, id = 1;
	struct qos_rule_set set = {};
	struct qos_cfg cfg;
	struct shapes sh;
	size_t i, added = 0;
	int ret;

	in_cur = id_set(cur, m->capacity);
	in_next = id_set(next, m->capacity);
	if (!in_cur || !in_next) {
		ret = -ENOMEM;
		goto out;
	}
	/* New rules take the lowest ids free in both lists, so an id is not
	 * reused while its previous rule is still installed. */
	for (i = 0; i < next->n; i++) {
		if (next->r[i].id)
			continue;
		while (id < m->capacity && (in_cur[id] || in_next[id]))
			id++;
		if (id >= m->capacity) {
			snprintf(err, errlen, "the rule table is full (%u rules)", m->capacity - 1);
			ret = -ENOSPC;
			goto out;
		}
		next->r[i].id = id;
		in_next[id] = 1;
	}
	ret = qos_rules_validate(next, m->capacity, NULL, err, errlen);
	if (ret)
		goto out;
	ret = build_shapes(next, &sh, NULL, err, errlen);
	if (ret)
		goto out;

	for (i = 0; i < next->n; i++, added = i) {
		const struct qos_rule *r = &next->r[i];

		if (in_cur[r->id])
			continue;
		ret = zero_stats(m, r->id);
		ret = ret ?: write_rule(m, r);
		if (ret) {
			snprintf(err, errlen, "writing rule %u: %s", r->id, strerror(-ret));
			goto undo;
		}
	}

	spare = !(*rules & QOS_RULES_SET);
	memcpy(set.n, sh.n, sizeof(set.n));
	memcpy(set.shape, sh.s, sizeof(set.shape));
	if (bpf_map_update_elem(m->sets, &spare, &set, BPF_ANY)) {
		ret = -errno;
		snprintf(err, errlen, "writing the rule shapes: %s", strerror(-ret));
		goto undo;
	}
	*rules = spare | (sh.n[QOS_TABLE_IPV4] ? QOS_RULES_V4 : 0) |
		 (sh.n[QOS_TABLE_IPV6] ? QOS_RULES_V6 : 0);
	for (i = 0; i < QOS_TABLE_MAX * QOS_RULE_SHAPES_MAX; i++)
		if (sh.s[i / QOS_RULE_SHAPES_MAX][i % QOS_RULE_SHAPES_MAX].proto_mask)
			*rules |= QOS_RULES_L4;
	if (write_cfg) {
		ret = qos_cfg_read(m->cfg, &cfg);
		if (!ret) {
			cfg.rules = *rules;
			ret = qos_cfg_write(m->cfg, &cfg);
		}
		if (ret) {
			snprintf(err, errlen, "switching the rule set: %s", strerror(-ret));
			goto undo;
		}
	}

	for (i = 0; i < cur->n; i++)
		if (!in_next[cur->r[i].id])
			delete_rule(m, &cur->r[i]);
	goto out;

undo:
	for (i = 0; i < added; i++)
		if (!in_cur[next->r[i].id])
			delete_rule(m, &next->r[i]);
	/* Entries of @cur that an added rule with the same match overwrote. */
	for (i = 0; i < cur->n; i++)
		if (!in_next[cur->r[i].id])
			write_rule(m, &cur->r[i]);
out:
	free(in_cur);
	free(in_next);
	return ret;
}

void qos_rules_revert(const struct qos_rule_maps *m, const struct qos_rules *cur,
		      const struct qos_rules *next)
{
	uint8_t *in_cur = id_set(cur, m->capacity), *in_next = id_set(next, m->capacity);
	size_t i;

	if (in_cur && in_next) {
		for (i = 0; i < next->n; i++)
			if (!in_cur[next->r[i].id])
				delete_rule(m, &next->r[i]);
		for (i = 0; i < cur->n; i++)
			if (!in_next[cur->r[i].id])
				write_rule(m, &cur->r[i]);
	}
	free(in_cur);
	free(in_next);
}

/* What a rule command works on: the interface's maps and its profile's
 * classes, under a lock so two commands do not interleave their commits. */
struct rule_ctx {
	struct qos_rule_maps m;
	struct qos_meta meta;
	struct qos_rules cur;
	int lock;
};

static void ctx_close(struct rule_ctx *c)
{
	qos_rules_free(&c->cur);
	qos_rule_maps_close(&c->m);
	if (c->lock >= 0)
		close(c->lock);
}

static int ctx_open(struct rule_ctx *c, const char *dev, bool hits, char *err, size_t errlen)
{
	struct qos_maps qm;
	char dir[200];
	int ret;

	memset(c, 0, sizeof(*c));
	c->lock = -1;
	c->m.rules = c->m.stats = c->m.sets = c->m.cfg = -1;
	ret = qos_pin_dir(dev, dir, sizeof(dir));
	if (ret) {
		snprintf(err, errlen, "dev %s: name too long", dev);
		return ret;
	}
	ret = qos_maps_open_applied(dev, &qm, err, errlen);
	if (ret)
		return ret;
	ret = qos_meta_read(qm.meta, &c->meta);
	qos_maps_close(&qm);
	if (ret || c->meta.version != QOS_META_VERSION) {
		snprintf(err, errlen, "dev %s: incomplete qosctl state (run apply or remove)", dev);
		return ret ?: -EINVAL;
	}
	c->lock = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->lock < 0 || flock(c->lock, LOCK_EX)) {
		ret = -errno;
		snprintf(err, errlen, "dev %s: locking %s: %s", dev, dir, strerror(errno));
		ctx_close(c);
		return ret;
	}
	ret = qos_rule_maps_open(dir, &c->m);
	if (ret) {
		snprintf(err, errlen, "dev %s: the applied programs have no rule tables (re-apply the profile): %s",
			 dev, strerror(-ret));
		ctx_close(c);
		return ret;
	}
	ret = qos_rules_read(&c->m, &c->cur, hits);
	if (ret) {
		snprintf(err, errlen, "dev %s: reading the rules: %s", dev, strerror(-ret));
		ctx_close(c);
	}
	return ret;
}

static const char *class_name(const struct qos_meta *meta, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < meta->nclasses && i < QOS_MAX_CLASSES; i++)
		if (meta->classes[i].id == id)
			return meta->classes[i].name;
	return "?";
}

static int class_id(const struct qos_meta *meta, const char *name, uint32_t *id)
{
	uint32_t i;

	for (i = 0; i < meta->nclasses && i < QOS_MAX_CLASSES; i++) {
		if (!strcmp(meta->classes[i].name, name)) {
			*id = meta->classes[i].id;
			return 0;
		}
	}
	return -ENOENT;
}

/* "KEY VALUE ..." words into @r. */
static int parse_words(int argc, char **argv, struct qos_rule *r, char *err, size_t errlen)
{
	char msg[256];
	int i;

	for (i = 0; i < argc; i += 2) {
		if (i + 1 >= argc || !*argv[i + 1]) {
			snprintf(err, errlen, "'%s' needs a value", argv[i]);
			return -EINVAL;
		}
		if (qos_rule_set(r, argv[i], argv[i + 1], msg, sizeof(msg))) {
			snprintf(err, errlen, "%s: %s", argv[i], msg);
			return -EINVAL;
		}
	}
	return 0;
}

int qos_rule_cmd_add(const char *dev, int argc, char **argv, char *err, size_t errlen)
{
	struct qos_rules next = {};
	struct rule_ctx c;
	struct qos_rule r;
	struct qos_cfg cfg;
	size_t i;
	int ret;

	qos_rule_init(&r);
	ret = parse_words(argc, argv, &r, err, errlen);
	ret = ret ?: qos_rule_check(&r, err, errlen);
	if (ret)
		return ret;
	ret = ctx_open(&c, dev, false, err, errlen);
	if (ret)
		return ret;
	if (class_id(&c.meta, r.class_name, &r.class_id)) {
		snprintf(err, errlen, "class: profile %s on %s has no class '%s'", c.meta.profile,
			 dev, r.class_name);
		ret = -ENOENT;
		goto out;
	}
	for (i = 0; i < c.cur.n && !ret; i++)
		ret = qos_rules_add(&next, &c.cur.r[i]);
	ret = ret ?: qos_rules_add(&next, &r);
	if (ret)
		goto out;
	ret = qos_cfg_read(c.m.cfg, &cfg);
	if (!ret)
		ret = qos_rules_commit(&c.m, &c.cur, &next, &cfg.rules, true, err, errlen);
out:
	qos_rules_free(&next);
	ctx_close(&c);
	return ret;
}

int qos_rule_cmd_del(const char *dev, int argc, char **argv, char *err, size_t errlen)
{
	struct qos_rules next = {};
	struct rule_ctx c;
	struct qos_rule r;
	struct qos_cfg cfg;
	uint32_t id = 0;
	size_t i, found = SIZE_MAX;
	int ret;

	qos_rule_init(&r);
	if (argc == 2 && !strcmp(argv[0], "id")) {
		if (qos_parse_u32(argv[1], &id) || !id) {
			snprintf(err, errlen, "id: '%s' is not a rule id", argv[1]);
			return -EINVAL;
		}
	} else if (argc == 2 && !strcmp(argv[0], "name")) {
		snprintf(r.name, sizeof(r.name), "%s", argv[1]);
	} else {
		ret = parse_words(argc, argv, &r, err, errlen);
		if (ret)
			return ret;
		if (!argc) {
			snprintf(err, errlen, "say which rule: id N, name NAME, or its match");
			return -EINVAL;
		}
	}
	ret = ctx_open(&c, dev, false, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < c.cur.n; i++) {
		const struct qos_rule *e = &c.cur.r[i];
		bool hit = id ? e->id == id :
			   argc == 2 && !strcmp(argv[0], "name") ? !strcmp(e->name, r.name) :
			   qos_rule_same_match(e, &r);

		if (hit) {
			found = i;
			break;
		}
	}
	if (found == SIZE_MAX) {
		snprintf(err, errlen, "dev %s: no such rule", dev);
		ret = -ENOENT;
		goto out;
	}
	for (i = 0; i < c.cur.n && !ret; i++)
		if (i != found)
			ret = qos_rules_add(&next, &c.cur.r[i]);
	ret = ret ?: qos_cfg_read(c.m.cfg, &cfg);
	if (!ret)
		ret = qos_rules_commit(&c.m, &c.cur, &next, &cfg.rules, true, err, errlen);
out:
	qos_rules_free(&next);
	ctx_close(&c);
	return ret;
}

static int rule_order(const void *a, const void *b)
{
	const struct qos_rule *x = a, *y = b;
	uint64_t rx = rule_rank(x), ry = rule_rank(y);

	return rx < ry ? -1 : rx > ry;
}

int qos_rule_cmd_list(FILE *f, const char *dev, bool json, char *err, size_t errlen)
{
	struct rule_ctx c;
	char m[256], d[8];
	size_t i;
	int ret;

	ret = ctx_open(&c, dev, true, err, errlen);
	if (ret)
		return ret;
	/* In the order the data path decides overlaps. No rules: no array,
	 * and qsort() must not be handed NULL. */
	if (c.cur.n)
		qsort(c.cur.r, c.cur.n, sizeof(*c.cur.r), rule_order);
	if (json) {
		json_object *a = json_object_new_array();

		for (i = 0; i < c.cur.n; i++) {
			const struct qos_rule *r = &c.cur.r[i];
			json_object *o = json_object_new_object();
			char buf[INET6_ADDRSTRLEN + 8];

			json_object_object_add(o, "id", json_object_new_int64(r->id));
			json_object_object_add(o, "name", json_object_new_string(r->name));
			json_object_object_add(o, "priority", json_object_new_int64(r->prio));
			json_object_object_add(o, "family",
					       json_object_new_string(r->family == AF_INET ? "ipv4" :
								      r->family == AF_INET6 ? "ipv6" : "any"));
			if (r->has_src) {
				inet_ntop(r->family, r->src, buf, sizeof(buf));
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%u",
					 r->src_len);
				json_object_object_add(o, "src", json_object_new_string(buf));
			}
			if (r->has_dst) {
				inet_ntop(r->family, r->dst, buf, sizeof(buf));
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%u",
					 r->dst_len);
				json_object_object_add(o, "dst", json_object_new_string(buf));
			}
			if (r->fl_mask) {
				json_object_object_add(o, "flowlabel",
						       json_object_new_int64(r->flowlabel));
				json_object_object_add(o, "flowlabel_mask",
						       json_object_new_int64(r->fl_mask));
			}
			if (r->proto >= 0)
				json_object_object_add(o, "proto", json_object_new_int(r->proto));
			json_object_object_add(o, "class",
					       json_object_new_string(class_name(&c.meta, r->class_id)));
			if (r->dscp >= 0)
				json_object_object_add(o, "set_dscp", json_object_new_int(r->dscp));
			json_object_object_add(o, "origin",
					       json_object_new_string(r->profile ? "profile" : "live"));
			json_object_object_add(o, "packets", json_object_new_uint64(r->hits.packets));
			json_object_object_add(o, "bytes", json_object_new_uint64(r->hits.bytes));
			json_object_array_add(a, o);
		}
		fprintf(f, "%s\n", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(a);
	} else {
		fprintf(f, "%-7s %-15s %5s %-10s %-8s %12s %14s  %s\n", "id", "name", "prio",
			"class", "set-dscp", "packets", "bytes", "match");
		for (i = 0; i < c.cur.n; i++) {
			const struct qos_rule *r = &c.cur.r[i];

			snprintf(d, sizeof(d), "%d", r->dscp);
			fprintf(f, "%-7u %-15s %5u %-10s %-8s %12llu %14llu  %s%s\n", r->id,
				r->name[0] ? r->name : "-", r->prio, class_name(&c.meta, r->class_id),
				r->dscp >= 0 ? d : "-", (unsigned long long)r->hits.packets,
				(unsigned long long)r->hits.bytes,
				qos_rule_fmt_match(r, m, sizeof(m)), r->profile ? " (profile)" : "");
		}
	}
	ctx_close(&c);
	return 0;
}
