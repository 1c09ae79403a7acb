// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Admission control for Premium IP reservations: plain arithmetic on the
 * reservation class and the token buckets of the admitted set, and the
 * bookkeeping of reservations in a rule list.
 *
 * The bound (Documentation/reservations.rst, "Admission"): a reservation
 * is a token bucket (r, b); the class's queue is served at R (its ceiling,
 * a strict-priority class, or a rate-R server). A set of such flows with
 * sum r <= R queues at most sum (b + M) bytes, M one packet each already
 * in service or in the queue, so no packet waits longer than
 * sum (b + M) / R: the delay term of RFC 2212 (Guaranteed Service, section
 * 5, with C and D of this hop zero) and the shape of the EF PHB's E_a in
 * RFC 3246 section 2.5.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "model/profile.h"
#include "model/reserve.h"

struct qos_resv_class qos_resv_class_of(const struct qos_meta *meta)
{
	struct qos_resv_class c = {};

	if (!meta->reserve_class)
		return c;
	c.name = qos_meta_class_name(meta, meta->reserve_class) ?: "?";
	c.cap_bps = meta->reserve_cap_bps;
	c.ceil_bps = meta->reserve_ceil_bps;
	c.headroom_pct = meta->reserve_headroom_pct;
	c.delay_ns = meta->reserve_delay_us ? meta->reserve_delay_us * 1000ULL :
					      QOS_RESERVE_DELAY_DEFAULT_NS;
	c.max_pkt = (meta->mtu ?: QOS_MTU_DEFAULT) + QOS_ETH_HLEN;
	return c;
}

uint64_t qos_resv_queue_bytes(const struct qos_resv_class *c)
{
	return (unsigned __int128)c->delay_ns * c->ceil_bps / 8000000000ULL;
}

void qos_resv_sum_step(struct qos_resv_sum *s, const struct qos_resv_class *c,
		       const struct qos_resv_req *q, int sign)
{
	s->rate_bps += sign * q->rate_bps;
	s->burst += sign * (q->burst + c->max_pkt);
	s->n += sign;
}

uint64_t qos_resv_delay_ns(const struct qos_resv_class *c, const struct qos_resv_sum *s)
{
	if (!c->ceil_bps)
		return 0;
	return (unsigned __int128)s->burst * 8000000000ULL / c->ceil_bps;
}

enum qos_resv_verdict qos_resv_fits(const struct qos_resv_class *c, const struct qos_resv_sum *s)
{
	if (s->rate_bps > c->cap_bps)
		return QOS_RESV_RATE;
	if (s->burst > qos_resv_queue_bytes(c))
		return QOS_RESV_DELAY;
	return QOS_RESV_ADMIT;
}

enum qos_resv_verdict qos_resv_admit(const struct qos_resv_class *c,
				     const struct qos_resv_sum *s,
				     const struct qos_resv_req *q)
{
	struct qos_resv_sum after = *s;

	qos_resv_sum_step(&after, c, q, 1);
	return qos_resv_fits(c, &after);
}

static const char *fmt_ms(uint64_t ns, char *buf, size_t len)
{
	snprintf(buf, len, "%llu.%03llums", (unsigned long long)(ns / 1000000),
		 (unsigned long long)(ns / 1000 % 1000));
	return buf;
}

void qos_resv_refusal(char *buf, size_t len, enum qos_resv_verdict v,
		      const struct qos_resv_class *c, const struct qos_resv_sum *s,
		      const struct qos_resv_req *q)
{
	uint64_t room = c->cap_bps > s->rate_bps ? c->cap_bps - s->rate_bps : 0;
	uint64_t queue = qos_resv_queue_bytes(c);
	struct qos_resv_sum after = *s;
	char a[32], b[32], d[32], e[32], f[32];

	if (v == QOS_RESV_RATE) {
		snprintf(buf, len,
			 "class %s admits %s (ceiling %s less %u%% headroom), %s is reserved by "
			 "%zu reservation%s, %s is free", c->name,
			 qos_fmt_rate(c->cap_bps, a, sizeof(a)),
			 qos_fmt_rate(c->ceil_bps, b, sizeof(b)), c->headroom_pct,
			 qos_fmt_rate(s->rate_bps, d, sizeof(d)), s->n, s->n == 1 ? "" : "s",
			 qos_fmt_rate(room, e, sizeof(e)));
		return;
	}
	qos_resv_sum_step(&after, c, q, 1);
	snprintf(buf, len,
		 "class %s: burst/delay: its burst of %llu bytes and the %llu of %zu admitted "
		 "reservation%s (each with a %u-byte packet) would drain in %s at %s, over "
		 "its delay bound of %s (%llu bytes; %llu free)", c->name,
		 (unsigned long long)q->burst, (unsigned long long)s->burst, s->n,
		 s->n == 1 ? "" : "s", c->max_pkt,
		 fmt_ms(qos_resv_delay_ns(c, &after), a, sizeof(a)),
		 qos_fmt_rate(c->ceil_bps, b, sizeof(b)), fmt_ms(c->delay_ns, f, sizeof(f)),
		 (unsigned long long)queue,
		 (unsigned long long)(queue > s->burst ? queue - s->burst : 0));
}

struct qos_resv_req qos_resv_req_of(const struct qos_rule *r)
{
	return (struct qos_resv_req){ .rate_bps = r->police_bps, .burst = r->police_burst };
}

bool qos_reserve_live(const struct qos_rule *r, uint64_t now)
{
	return r->reserve && (!r->expires_ns || r->expires_ns > now);
}

struct qos_resv_sum qos_reserve_sum(const struct qos_rules *l, const struct qos_resv_class *c,
				    uint64_t now)
{
	struct qos_resv_sum s = {};
	size_t i;

	for (i = 0; i < l->n; i++) {
		struct qos_resv_req q = qos_resv_req_of(&l->r[i]);

		if (qos_reserve_live(&l->r[i], now))
			qos_resv_sum_step(&s, c, &q, 1);
	}
	return s;
}

size_t qos_reserve_purge(struct qos_rules *l, uint64_t now)
{
	size_t i, j, n = l->n;

	for (i = j = 0; i < l->n; i++)
		if (!l->r[i].reserve || qos_reserve_live(&l->r[i], now))
			l->r[j++] = l->r[i];
	l->n = j;
	return n - j;
}

const char *qos_meta_class_name(const struct qos_meta *meta, uint32_t id)
{
	unsigned int i;

	for (i = 0; i < meta->nclasses && i < QOS_MAX_CLASSES; i++)
		if (meta->classes[i].id == id)
			return meta->classes[i].name;
	return NULL;
}

void qos_reserve_bind(struct qos_rule *r, const struct qos_meta *meta)
{
	r->reserve = true;
	r->profile = false;
	r->class_id = meta->reserve_class;
	snprintf(r->class_name, sizeof(r->class_name), "%s",
		 qos_meta_class_name(meta, meta->reserve_class) ?: "?");
	if (!r->police_burst)
		r->police_burst = QOS_RESERVE_BURST_FRAMES *
				  ((meta->mtu ?: QOS_MTU_DEFAULT) + QOS_ETH_HLEN);
	r->police_act.type = meta->reserve_exceed;
	r->police_act.arg = meta->reserve_exceed == QOS_PA_DEMOTE ? meta->default_class : 0;
	snprintf(r->police_demote, sizeof(r->police_demote), "%s",
		 meta->reserve_exceed == QOS_PA_DEMOTE ?
		 qos_meta_class_name(meta, meta->default_class) ?: "?" : "");
	if (r->dscp < 0 && (meta->reserve_remark & QOS_REMARK_F))
		r->dscp = meta->reserve_remark & (QOS_DSCP_MAX - 1);
}

int qos_reserve_fit(struct qos_rules *l, const struct qos_meta *meta, const char *dev,
		    const char *why, char *err, size_t errlen)
{
	struct qos_resv_class c = qos_resv_class_of(meta);
	uint64_t now = qos_boottime_ns();
	struct qos_resv_sum s;
	char a[32], b[32], d[32], e[32];
	size_t i;

	qos_reserve_purge(l, now);
	for (i = 0; i < l->n && meta->reserve_class; i++)
		if (l->r[i].reserve)
			qos_reserve_bind(&l->r[i], meta);
	s = qos_reserve_sum(l, &c, now);
	if (!s.n)
		return 0;
	if (!meta->reserve_class) {
		snprintf(err, errlen,
			 "dev %s: %s: profile %s has no reserve-class, and %zu reservation%s "
			 "(%s) would be left without one", dev, why, meta->profile, s.n,
			 s.n == 1 ? "" : "s", qos_fmt_rate(s.rate_bps, a, sizeof(a)));
		return -ENOSPC;
	}
	switch (qos_resv_fits(&c, &s)) {
	case QOS_RESV_RATE:
		snprintf(err, errlen,
			 "dev %s: %s: reservations would take %s of class %s, which admits %s "
			 "(its ceiling %s less %u%% headroom)", dev, why,
			 qos_fmt_rate(s.rate_bps, a, sizeof(a)), c.name,
			 qos_fmt_rate(c.cap_bps, b, sizeof(b)),
			 qos_fmt_rate(c.ceil_bps, d, sizeof(d)), c.headroom_pct);
		return -ENOSPC;
	case QOS_RESV_DELAY:
		snprintf(err, errlen,
			 "dev %s: %s: the bursts of %zu reservations (%llu bytes with a packet "
			 "each) would drain in %s at %s, over class %s's delay bound of %s",
			 dev, why, s.n, (unsigned long long)s.burst,
			 fmt_ms(qos_resv_delay_ns(&c, &s), a, sizeof(a)),
			 qos_fmt_rate(c.ceil_bps, b, sizeof(b)), c.name,
			 fmt_ms(c.delay_ns, e, sizeof(e)));
		return -ENOSPC;
	default:
		return 0;
	}
}

int qos_admission_init(struct qos_admission *a, struct qos_rules *cur,
		       const struct qos_meta *meta, const char *dev)
{
	a->cur = cur;
	a->meta = meta;
	a->dev = dev;
	a->c = qos_resv_class_of(meta);
	a->sum = qos_reserve_sum(cur, &a->c, qos_boottime_ns());
	return qos_resv_index_init(&a->names, cur);
}

void qos_admission_free(struct qos_admission *a)
{
	qos_resv_index_free(&a->names);
}

/* The request's terms: named, bound to the class, checked, its expiry. */
static int request_bind(struct qos_admission *a, struct qos_reserve_req *q, char *err, size_t errlen)
{
	const char *key;
	char msg[256];

	if (!a->meta->reserve_class) {
		snprintf(err, errlen,
			 "dev %s: profile %s has no reserve-class: reservations need one",
			 a->dev, a->meta->profile);
		return -EOPNOTSUPP;
	}
	if (!q->r.police_bps) {
		snprintf(err, errlen, "rate: a reservation needs a rate");
		return -EINVAL;
	}
	if (!q->r.name[0])
		qos_resv_index_name(&a->names, q->r.name, sizeof(q->r.name));
	qos_reserve_bind(&q->r, a->meta);
	if (qos_rule_check(&q->r, &key, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", key, msg);
		return -EINVAL;
	}
	q->r.expires_ns = q->for_ns ? qos_boottime_ns() + q->for_ns : 0;
	return 0;
}

int qos_admission_add(struct qos_admission *a, struct qos_reserve_req *q, bool replace,
		      char *err, size_t errlen)
{
	struct qos_resv_req req, old_req;
	enum qos_resv_verdict v;
	struct qos_rule *old;
	char rate[32], msg[384];
	int ret;

	ret = request_bind(a, q, err, errlen);
	if (ret)
		return ret;
	old = qos_resv_index_find(&a->names, q->r.name);
	if (old && !replace) {
		snprintf(err, errlen, "dev %s: reservation %s exists (reserve del first)", a->dev,
			 q->r.name);
		return -EEXIST;
	}
	/* The same terms again: nothing to change, and the rule keeps its id,
	 * policer and counters (a broker resends its whole file). */
	if (old && qos_rule_same(old, &q->r) && old->expires_ns == q->r.expires_ns) {
		q->r = *old;
		return 0;
	}
	req = qos_resv_req_of(&q->r);
	if (old) {
		old_req = qos_resv_req_of(old);
		qos_resv_sum_step(&a->sum, &a->c, &old_req, -1);
	}
	v = qos_resv_admit(&a->c, &a->sum, &req);
	if (v != QOS_RESV_ADMIT) {
		qos_resv_refusal(msg, sizeof(msg), v, &a->c, &a->sum, &req);
		snprintf(err, errlen, "dev %s: reservation %s of %s refused: %s", a->dev,
			 q->r.name, qos_fmt_rate(req.rate_bps, rate, sizeof(rate)), msg);
		if (old)
			qos_resv_sum_step(&a->sum, &a->c, &old_req, 1);
		return -ENOSPC;
	}
	qos_resv_sum_step(&a->sum, &a->c, &req, 1);
	if (old) {
		/* Same id, new terms: the rule keeps its place and policer
		 * slot only if its match is unchanged; simplest is anew. */
		*old = q->r;
		return 0;
	}
	ret = qos_rules_add(a->cur, &q->r);
	return ret ?: qos_resv_index_add(&a->names, a->cur->n - 1);
}

/* qos_parse_time()'s units, and hours and days. */
static int parse_duration(const char *s, uint64_t *ns)
{
	unsigned long long n;
	char *end;

	n = strtoull(s, &end, 10);
	if (end != s && (!strcmp(end, "h") || !strcmp(end, "d")) && n <= 3650 * 24) {
		*ns = n * 3600ULL * 1000000000ULL * (*end == 'd' ? 24 : 1);
		return 0;
	}
	return qos_parse_time(s, ns);
}

/* The reservation's words, mapped onto a rule's keys. */
int qos_reserve_req_set(struct qos_reserve_req *q, const char *key, const char *val, char *err,
			size_t errlen)
{
	static const char *const pass[] = { "src", "dst", "flowlabel", "proto", "sport", "dport" };
	const char *rkey = NULL;
	char msg[256];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pass) && !rkey; i++)
		if (!strcmp(key, pass[i]))
			rkey = key;
	if (!strcmp(key, "rate"))
		rkey = "police";
	else if (!strcmp(key, "burst"))
		rkey = "burst";
	else if (!strcmp(key, "id"))
		rkey = "name";
	else if (!strcmp(key, "remark"))
		rkey = "set-dscp";
	if (!strcmp(key, "for")) {
		if (parse_duration(val, &q->for_ns) || !q->for_ns) {
			snprintf(err, errlen, "for: '%s' is not a duration (30s, 10m, 2h)", val);
			return -EINVAL;
		}
		return 0;
	}
	if (!rkey) {
		snprintf(err, errlen, "'%s' is not a key of a reservation", key);
		return -EINVAL;
	}
	if (qos_rule_set(&q->r, rkey, val, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s: %s", key, msg);
		return -EINVAL;
	}
	return 0;
}

/* Request @i of a reservation file into @q and its device into *@dev. */
static int read_request(json_object *e, size_t i, const char *path, struct qos_reserve_req *q,
			const char **dev, char *err, size_t errlen)
{
	char msg[384];

	qos_rule_init(&q->r);
	if (!json_object_is_type(e, json_type_object)) {
		snprintf(err, errlen, "%s: reservations[%zu]: not an object", path, i);
		return -EINVAL;
	}
	json_object_object_foreach(e, key, val) {
		const char *v = json_object_get_string(val);

		if (!json_object_is_type(val, json_type_string) &&
		    !json_object_is_type(val, json_type_int)) {
			snprintf(err, errlen, "%s: reservations[%zu].%s: not a string or a number",
				 path, i, key);
			return -EINVAL;
		}
		if (!strcmp(key, "dev")) {
			*dev = v;
		} else if (qos_reserve_req_set(q, key, v, msg, sizeof(msg))) {
			snprintf(err, errlen, "%s: reservations[%zu].%s", path, i, msg);
			return -EINVAL;
		}
	}
	if (!*dev) {
		snprintf(err, errlen, "%s: reservations[%zu]: no \"dev\"", path, i);
		return -EINVAL;
	}
	return 0;
}

int qos_reserve_file_parse(json_object *root, const char *path, struct qos_reserve_req **qsp,
			   const char ***devsp, size_t *np, char *err, size_t errlen)
{
	struct qos_reserve_req *qs = NULL;
	const char **devs = NULL;
	json_object *arr = root;
	size_t n, i;
	int ret = 0;

	if (json_object_is_type(root, json_type_object) &&
	    !json_object_object_get_ex(root, "reservations", &arr)) {
		snprintf(err, errlen, "%s: no \"reservations\" array", path);
		return -EINVAL;
	}
	if (!json_object_is_type(arr, json_type_array)) {
		snprintf(err, errlen, "%s: reservations: not an array", path);
		return -EINVAL;
	}
	n = json_object_array_length(arr);
	qs = calloc(n ?: 1, sizeof(*qs));
	devs = calloc(n ?: 1, sizeof(*devs));
	if (!qs || !devs) {
		ret = -ENOMEM;
		snprintf(err, errlen, "%s", strerror(-ret));
	}
	for (i = 0; i < n && !ret; i++)
		ret = read_request(json_object_array_get_idx(arr, i), i, path, &qs[i], &devs[i], err,
				   errlen);
	if (ret) {
		free(qs);
		free(devs);
		return ret;
	}
	*qsp = qs;
	*devsp = devs;
	*np = n;
	return 0;
}

static size_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	/* FNV's low bits barely differ between r1, r2, ...: mix the high
	 * ones down (MurmurHash3's finaliser) before masking. */
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* The slot of @name: where it is, or the empty one where it would go. */
static size_t *index_slot(const struct qos_resv_index *x, const char *name)
{
	size_t i = name_hash(name) & (x->cap - 1);

	while (x->slot[i] && strcmp(x->l->r[x->slot[i] - 1].name, name))
		i = (i + 1) & (x->cap - 1);
	return &x->slot[i];
}

static int index_grow(struct qos_resv_index *x)
{
	struct qos_resv_index y = *x;
	size_t i;

	y.cap = x->cap ? x->cap * 2 : 1024;
	y.slot = calloc(y.cap, sizeof(*y.slot));
	if (!y.slot)
		return -ENOMEM;
	for (i = 0; i < x->cap; i++)
		if (x->slot[i])
			*index_slot(&y, x->l->r[x->slot[i] - 1].name) = x->slot[i];
	free(x->slot);
	*x = y;
	return 0;
}

int qos_resv_index_add(struct qos_resv_index *x, size_t i)
{
	size_t *slot;
	int ret;

	if (!x->l->r[i].name[0])
		return 0;
	if (2 * (x->n + 1) > x->cap) {
		ret = index_grow(x);
		if (ret)
			return ret;
	}
	slot = index_slot(x, x->l->r[i].name);
	if (!*slot) {
		*slot = i + 1;
		x->n++;
	}
	return 0;
}

int qos_resv_index_init(struct qos_resv_index *x, const struct qos_rules *l)
{
	size_t i;
	int ret = 0;

	memset(x, 0, sizeof(*x));
	x->l = l;
	x->next = 1;
	for (i = 0; i < l->n && !ret; i++)
		ret = qos_resv_index_add(x, i);
	return ret;
}

void qos_resv_index_free(struct qos_resv_index *x)
{
	free(x->slot);
	memset(x, 0, sizeof(*x));
}

struct qos_rule *qos_resv_index_find(const struct qos_resv_index *x, const char *name)
{
	size_t *slot;

	if (!x->cap)
		return NULL;
	slot = index_slot(x, name);
	if (!*slot || !x->l->r[*slot - 1].reserve)
		return NULL;
	return &x->l->r[*slot - 1];
}

void qos_resv_index_name(struct qos_resv_index *x, char *name, size_t len)
{
	do
		snprintf(name, len, "r%u", x->next++);
	while (x->cap && *index_slot(x, name));
}
