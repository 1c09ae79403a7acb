// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The domain's broker on etcd (broker.h): declared domain, admission along
 * a path, release, and the view `domain status` prints.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unistd.h>
#include <sys/random.h>

#include "domain/broker.h"
#include "lib/json.h"
#include "lib/util.h"
#include "txn/plan.h"

uint64_t qos_unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static const char *plain(json_object *o)
{
	return qos_json_text(o);
}

/* Hex of @n random bytes into @buf (2n + 1 bytes). */
static void random_hex(char *buf, size_t n)
{
	unsigned char b[16];
	size_t i;

	if (n > sizeof(b) || getrandom(b, n, 0) != (ssize_t)n) {
		uint64_t t = qos_unix_ns() ^ ((uint64_t)getpid() << 32);

		memcpy(b, &t, sizeof(t) < n ? sizeof(t) : n);
	}
	for (i = 0; i < n; i++)
		sprintf(buf + 2 * i, "%02x", b[i]);
}

/* Sleep a random 1 to 2^@attempt ms, at most 128: conflicting brokers
 * spread out instead of colliding again. */
static void backoff(unsigned int attempt)
{
	unsigned int cap = 1U << (attempt < 7 ? attempt : 7), r;
	struct timespec ts;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = qos_unix_ns();
	ts.tv_sec = 0;
	ts.tv_nsec = (1 + r % cap) * 1000000L;
	nanosleep(&ts, NULL);
}

int qos_domain_resolve(struct qos_domain *d, const char *path, char *err, size_t errlen)
{
	struct qos_plan *plan = malloc(sizeof(*plan));
	char msg[512];
	size_t i;
	int ret = 0;

	if (!plan)
		return -ENOMEM;
	for (i = 0; i < d->nifs && !ret; i++) {
		struct qos_dom_iface *f = &d->ifs[i];

		ret = qos_plan_profile(f->profile, f->rate_bps, 0, NULL, QOS_MTU_DEFAULT,
				       QOS_QUEUES_PROFILE, 1, plan, msg, sizeof(msg));
		if (ret) {
			snprintf(err, errlen, "%s: interfaces[%zu]: profile '%s': %s", path, i,
				 f->profile, msg);
			break;
		}
		f->cls = qos_resv_class_of(&plan->cfg.meta);
		snprintf(f->cls_name, sizeof(f->cls_name), "%s", f->cls.name ?: "");
		f->cls.name = f->cls_name;
		qos_plan_free(plan);
	}
	free(plan);
	return ret;
}

/* The value of @kv as JSON, NULL if it is not. */
static json_object *kv_json(const struct qos_etcd_kv *kv)
{
	return json_tokener_parse(kv->value);
}

static int decl_grow(struct qos_domain *d, size_t n)
{
	d->routers = calloc(n ? n : 1, sizeof(*d->routers));
	d->ifs = calloc(n ? n : 1, sizeof(*d->ifs));
	d->pfx = calloc(n ? n : 1, sizeof(*d->pfx));
	return d->routers && d->ifs && d->pfx ? 0 : -ENOMEM;
}

/* One declared key of the domain into @d. */
static int decl_kv(struct qos_domain *d, const struct qos_etcd_kv *kv, int64_t *stamp_mod)
{
	json_object *o;
	int ret = 0;

	if (!strcmp(kv->key, QOS_DOM_STAMP)) {
		*stamp_mod = kv->mod_revision;
		return 0;
	}
	o = kv_json(kv);
	if (!o)
		return -EINVAL;
	if (!strncmp(kv->key, QOS_DOM_ROUTER, strlen(QOS_DOM_ROUTER)))
		snprintf(d->routers[d->nrouters++], sizeof(d->routers[0]), "%s",
			 kv->key + strlen(QOS_DOM_ROUTER));
	else if (!strncmp(kv->key, QOS_DOM_IFACE, strlen(QOS_DOM_IFACE)))
		ret = qos_dom_iface_from_json(o, &d->ifs[d->nifs++]);
	else if (!strncmp(kv->key, QOS_DOM_PREFIX, strlen(QOS_DOM_PREFIX)))
		ret = qos_dom_prefix_from_json(o, &d->pfx[d->npfx++]);
	json_object_put(o);
	return ret;
}

static int decl_decode(const struct qos_etcd_kvs *r, struct qos_domain *d, int64_t *stamp_mod,
		       char *err, size_t errlen)
{
	size_t i;
	int ret;

	memset(d, 0, sizeof(*d));
	*stamp_mod = 0;
	ret = decl_grow(d, r->n);
	for (i = 0; i < r->n && !ret; i++) {
		ret = decl_kv(d, &r->kv[i], stamp_mod);
		if (ret)
			snprintf(err, errlen, "etcd key %s: not a value qosctl wrote", r->kv[i].key);
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	if (ret)
		qos_domain_free(d);
	return ret;
}

static int etcd_err(struct qos_etcd *e, int ret, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s", qos_etcd_errmsg(e));
	return ret;
}

int qos_broker_read_domain(struct qos_etcd *e, struct qos_domain *d, int64_t *stamp_mod,
			   char *err, size_t errlen)
{
	struct qos_etcd_kvs r;
	int ret;

	ret = qos_etcd_get(e, QOS_DOM_DECL, QOS_ETCD_PREFIX, 0, 0, &r);
	if (ret)
		return etcd_err(e, ret, err, errlen);
	ret = decl_decode(&r, d, stamp_mod, err, errlen);
	qos_etcd_kvs_free(&r);
	return ret;
}

/* A key and the value it is to have. */
struct kval {
	char key[QOS_DOM_KEY_MAX];
	char *val;
};

struct kset {
	struct kval *k;
	size_t n, cap;
};

static void kset_free(struct kset *s)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		free(s->k[i].val);
	free(s->k);
	memset(s, 0, sizeof(*s));
}

/* Add @key = @o (consumed) to @s. */
static int kset_add(struct kset *s, const char *key, json_object *o)
{
	struct kval *k;

	if (!o)
		return -ENOMEM;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;

		k = realloc(s->k, cap * sizeof(*k));
		if (!k) {
			json_object_put(o);
			return -ENOMEM;
		}
		s->k = k;
		s->cap = cap;
	}
	k = &s->k[s->n];
	snprintf(k->key, sizeof(k->key), "%s", key);
	k->val = strdup(plain(o));
	json_object_put(o);
	if (!k->val)
		return -ENOMEM;
	s->n++;
	return 0;
}

static const char *kset_find(const struct kset *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->k[i].key, key))
			return s->k[i].val;
	return NULL;
}

/* Every declared key of @d and its value. */
static int decl_keys(const struct qos_domain *d, struct kset *s)
{
	char key[QOS_DOM_KEY_MAX], sub[QOS_DOM_KEY_MAX];
	size_t i;
	int ret = 0;

	for (i = 0; i < d->nrouters && !ret; i++)
		ret = kset_add(s, qos_dom_key(key, sizeof(key), QOS_DOM_ROUTER, d->routers[i],
					      NULL), qos_dom_router_json(d->routers[i]));
	for (i = 0; i < d->nifs && !ret; i++) {
		const struct qos_dom_iface *f = &d->ifs[i];

		ret = kset_add(s, qos_dom_key(key, sizeof(key), QOS_DOM_IFACE, f->router, f->dev),
			       qos_dom_iface_json(f));
		snprintf(sub, sizeof(sub), "iface/%s", f->dev);
		ret = ret ?: kset_add(s, qos_dom_key(key, sizeof(key), QOS_DOM_DESIRED, f->router,
						     sub), qos_dom_iface_json(f));
	}
	for (i = 0; i < d->npfx && !ret; i++)
		ret = kset_add(s, qos_dom_key(key, sizeof(key), QOS_DOM_PREFIX, d->pfx[i].text,
					      NULL), qos_dom_prefix_json(&d->pfx[i]));
	return ret;
}

/* The keys of @cur's declaration, as they are in etcd. */
static int decl_current(const struct qos_etcd_kvs *r, struct kset *s)
{
	char key[QOS_DOM_KEY_MAX], sub[QOS_DOM_KEY_MAX];
	size_t i;
	int ret = 0;

	for (i = 0; i < r->n && !ret; i++) {
		const char *k = r->kv[i].key, *rd;

		if (!strcmp(k, QOS_DOM_STAMP))
			continue;
		ret = kset_add(s, k, json_tokener_parse(r->kv[i].value) ?: json_object_new_null());
		if (ret || strncmp(k, QOS_DOM_IFACE, strlen(QOS_DOM_IFACE)))
			continue;
		/* Its desired copy, /qosctl/router/R/iface/DEV, goes with it. */
		rd = k + strlen(QOS_DOM_IFACE);
		snprintf(sub, sizeof(sub), "%.*s/iface/%s", (int)strcspn(rd, "/"), rd,
			 rd + strcspn(rd, "/") + (rd[strcspn(rd, "/")] ? 1 : 0));
		ret = kset_add(s, qos_dom_key(key, sizeof(key), QOS_DOM_DESIRED, sub, NULL),
			       json_tokener_parse(r->kv[i].value) ?: json_object_new_null());
	}
	return ret;
}

/* The ledger in @kv, its live entries at @now summed into *@s. */
static int ledger_of(const struct qos_etcd_kv *kv, struct qos_dom_ledger *l,
		     struct qos_resv_sum *s, uint64_t now)
{
	json_object *o;
	int ret;

	memset(l, 0, sizeof(*l));
	memset(s, 0, sizeof(*s));
	if (!kv)
		return 0;
	o = kv_json(kv);
	ret = o ? qos_dom_ledger_from_json(o, l) : -EINVAL;
	json_object_put(o);
	if (!ret)
		*s = qos_dom_ledger_live(l, now);
	return ret;
}

/* "r1/eth1" of a ledger key. */
static const char *ledger_name(const char *key)
{
	return key + strlen(QOS_DOM_LEDGER);
}

/* Whether ledger @kv's live reservations still fit their interface in @d. */
static int strand_ledger(const struct qos_domain *d, const struct qos_etcd_kv *kv,
			 uint64_t now, char *err, size_t errlen)
{
	const char *name = ledger_name(kv->key), *slash = strchr(name, '/');
	char router[QOS_NAME_MAX + 1], a[32], b[32];
	const struct qos_dom_iface *f;
	struct qos_dom_ledger l;
	struct qos_resv_sum s;
	int ret;

	ret = ledger_of(kv, &l, &s, now);
	qos_dom_ledger_free(&l);
	if (ret || !s.n || !slash)
		return ret == -EINVAL ? 0 : ret;
	snprintf(router, sizeof(router), "%.*s", (int)(slash - name), name);
	f = qos_domain_iface(d, router, slash + 1);
	if (!f) {
		snprintf(err, errlen, "%s %s: %zu admitted reservation%s (%s) on an interface the "
			 "domain would no longer declare", router, slash + 1, s.n,
			 s.n == 1 ? "" : "s", qos_fmt_rate(s.rate_bps, a, sizeof(a)));
		return -EBUSY;
	}
	if (qos_resv_fits(&f->cls, &s) == QOS_RESV_ADMIT)
		return 0;
	snprintf(err, errlen, "%s %s: the %zu reservation%s admitted there take %s and "
		 "bursts of %llu bytes (worst-case delay %llu us); profile %s at %s admits %s "
		 "in class %s with a delay bound of %llu us", router, slash + 1, s.n,
		 s.n == 1 ? "" : "s", qos_fmt_rate(s.rate_bps, a, sizeof(a)),
		 (unsigned long long)s.burst,
		 (unsigned long long)(qos_resv_delay_ns(&f->cls, &s) / 1000), f->profile,
		 f->rate, qos_fmt_rate(f->cls.cap_bps, b, sizeof(b)),
		 f->cls.name[0] ? f->cls.name : "(none)",
		 (unsigned long long)(f->cls.delay_ns / 1000));
	return -EBUSY;
}

/* Whether reservation @kv's path is still made of declared links in @d. */
static int strand_path(const struct qos_domain *d, const struct qos_etcd_kv *kv, uint64_t now,
		       char *err, size_t errlen)
{
	json_object *o = kv_json(kv), *path, *end;
	size_t i, n;
	int ret = 0;

	if (!o || !json_object_object_get_ex(o, "path", &path))
		goto out;
	if (json_object_object_get_ex(o, "end_unix_ns", &end) && json_object_get_uint64(end) &&
	    json_object_get_uint64(end) <= now)
		goto out;
	n = json_object_array_length(path);
	for (i = 0; i + 1 < n; i++) {
		json_object *h = json_object_array_get_idx(path, i), *r, *dev, *peer;
		const struct qos_dom_iface *f;

		if (!json_object_object_get_ex(h, "router", &r) ||
		    !json_object_object_get_ex(h, "dev", &dev) ||
		    !json_object_object_get_ex(h, "peer", &peer))
			continue;
		f = qos_domain_iface(d, json_object_get_string(r), json_object_get_string(dev));
		if (f && !strcmp(f->peer, json_object_get_string(peer)))
			continue;
		snprintf(err, errlen, "reservation %s: its path goes %s %s -> %s, a link the "
			 "domain would no longer declare", kv->key + strlen(QOS_DOM_RESV),
			 json_object_get_string(r), json_object_get_string(dev),
			 json_object_get_string(peer));
		ret = -EBUSY;
		break;
	}
out:
	json_object_put(o);
	return ret;
}

/* What etcd has besides the declaration: ledgers and reservations. */
struct admitted {
	struct qos_etcd_kvs ledgers;
	struct qos_etcd_kvs resv;
};

static int read_admitted(struct qos_etcd *e, struct admitted *a, char *err, size_t errlen)
{
	int ret;

	memset(a, 0, sizeof(*a));
	ret = qos_etcd_get(e, QOS_DOM_LEDGER, QOS_ETCD_PREFIX, 0, 0, &a->ledgers);
	ret = ret ?: qos_etcd_get(e, QOS_DOM_RESV, QOS_ETCD_PREFIX, 0, 0, &a->resv);
	if (ret) {
		qos_etcd_kvs_free(&a->ledgers);
		return etcd_err(e, ret, err, errlen);
	}
	return 0;
}

static int check_strand(const struct qos_domain *d, const struct admitted *a, char *err,
			size_t errlen)
{
	uint64_t now = qos_unix_ns();
	size_t i;
	int ret = 0;

	for (i = 0; i < a->ledgers.n && !ret; i++)
		ret = strand_ledger(d, &a->ledgers.kv[i], now, err, errlen);
	for (i = 0; i < a->resv.n && !ret; i++)
		ret = strand_path(d, &a->resv.kv[i], now, err, errlen);
	return ret;
}

/* The mod_revision of @key in @r, 0 if absent. */
static int64_t mod_of(const struct qos_etcd_kvs *r, const char *key)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->kv[i].key, key))
			return r->kv[i].mod_revision;
	return 0;
}

/* Compare every ledger an interface of which changes or goes: admissions
 * on it meanwhile make the load start again. */
static void load_cmp_ledgers(struct qos_etcd_txn *t, const struct kset *want,
			     const struct kset *cur, const struct admitted *a)
{
	char key[QOS_DOM_KEY_MAX];
	size_t i;

	for (i = 0; i < cur->n; i++) {
		const char *k = cur->k[i].key, *v = kset_find(want, k);

		if (strncmp(k, QOS_DOM_IFACE, strlen(QOS_DOM_IFACE)) ||
		    (v && !strcmp(v, cur->k[i].val)))
			continue;
		qos_dom_key(key, sizeof(key), QOS_DOM_LEDGER, k + strlen(QOS_DOM_IFACE), NULL);
		qos_etcd_txn_cmp(t, key, QOS_ETCD_MOD, QOS_ETCD_EQ, mod_of(&a->ledgers, key));
	}
}

/* The transaction turning @cur into @want; r->puts + r->dels its size. */
static struct qos_etcd_txn *load_txn(const struct kset *want, const struct kset *cur,
				     const struct admitted *a, int64_t stamp_mod,
				     struct qos_load_res *r)
{
	struct qos_etcd_txn *t = qos_etcd_txn_new();
	char stamp[64];
	size_t i;

	if (!t)
		return NULL;
	qos_etcd_txn_cmp(t, QOS_DOM_STAMP, QOS_ETCD_MOD, QOS_ETCD_EQ, stamp_mod);
	load_cmp_ledgers(t, want, cur, a);
	for (i = 0; i < want->n; i++) {
		const char *v = kset_find(cur, want->k[i].key);

		if (v && !strcmp(v, want->k[i].val))
			continue;
		qos_etcd_txn_put(t, true, want->k[i].key, want->k[i].val,
				 strlen(want->k[i].val), 0);
		r->puts++;
	}
	for (i = 0; i < cur->n; i++) {
		if (kset_find(want, cur->k[i].key))
			continue;
		qos_etcd_txn_del(t, true, cur->k[i].key, 0);
		r->dels++;
	}
	snprintf(stamp, sizeof(stamp), "{\"generation\":%lld}", (long long)stamp_mod);
	qos_etcd_txn_put(t, true, QOS_DOM_STAMP, stamp, strlen(stamp), 0);
	return t;
}

/* One attempt of a load: 0 done, 1 conflict, or -errno. */
static int load_once(struct qos_etcd *e, const struct qos_domain *d, const struct kset *want,
		     struct qos_load_res *r, char *err, size_t errlen)
{
	struct kset cur = {};
	struct qos_etcd_kvs decl;
	struct qos_etcd_txn_res res;
	struct qos_etcd_txn *t = NULL;
	struct admitted a = {};
	int64_t stamp_mod = 0;
	size_t i;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = qos_etcd_get(e, QOS_DOM_DECL, QOS_ETCD_PREFIX, 0, 0, &decl);
	if (ret)
		return etcd_err(e, ret, err, errlen);
	for (i = 0; i < decl.n; i++)
		if (!strcmp(decl.kv[i].key, QOS_DOM_STAMP))
			stamp_mod = decl.kv[i].mod_revision;
	ret = decl_current(&decl, &cur);
	ret = ret ?: read_admitted(e, &a, err, errlen);
	ret = ret ?: check_strand(d, &a, err, errlen);
	if (!ret)
		t = load_txn(want, &cur, &a, stamp_mod, r);
	if (!ret && !t)
		ret = -ENOMEM;
	r->unchanged = !ret && !r->puts && !r->dels;
	r->revision = decl.hdr.revision;
	if (!ret && !r->unchanged) {
		ret = qos_etcd_txn_commit(e, t, &res);
		if (ret)
			etcd_err(e, ret, err, errlen);
		else if (!res.succeeded)
			ret = 1;
		r->revision = res.hdr.revision;
		qos_etcd_txn_res_free(&res);
	}
	qos_etcd_txn_free(t);
	qos_etcd_kvs_free(&a.ledgers);
	qos_etcd_kvs_free(&a.resv);
	qos_etcd_kvs_free(&decl);
	kset_free(&cur);
	return ret;
}

int qos_broker_load(struct qos_etcd *e, const struct qos_domain *d, struct qos_load_res *r,
		    char *err, size_t errlen)
{
	struct kset want = {};
	unsigned int i;
	int ret;

	ret = decl_keys(d, &want);
	for (i = 0; !ret && i < QOS_BROKER_ATTEMPTS; i++) {
		ret = load_once(e, d, &want, r, err, errlen);
		if (ret != 1)
			break;
		backoff(i);
		ret = 0;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	else if (!ret && i == QOS_BROKER_ATTEMPTS) {
		snprintf(err, errlen, "gave up after %u conflicting changes", i);
		ret = -EAGAIN;
	}
	kset_free(&want);
	return ret;
}

/* One admission: the request, its path, and what it wrote last. */
struct adm {
	const struct qos_broker_req *q;
	struct qos_reserve_req rq;
	struct qos_domain d;
	int64_t stamp_mod;
	struct qos_dom_hop hops[QOS_DOM_MAX_HOPS];
	char lkey[QOS_DOM_MAX_HOPS][QOS_DOM_KEY_MAX];
	size_t nhops;
	char id[QOS_NAME_MAX + 1];
	char rkey[QOS_DOM_KEY_MAX];
	char hkey[QOS_DOM_MAX_HOPS][QOS_DOM_KEY_MAX];	/* qos_dom_hop_key() */
	char nonce[33];
	int64_t lease;
	uint64_t end_unix_ns;
	uint64_t burst;
	json_object *value;	/* the reservation as last sent */
};

static int adm_parse(struct adm *a, char *err, size_t errlen)
{
	char msg[256];
	size_t i;

	qos_rule_init(&a->rq.r);
	for (i = 0; i < a->q->nargs; i++) {
		if (qos_reserve_req_set(&a->rq, a->q->args[i][0], a->q->args[i][1], msg,
					sizeof(msg))) {
			snprintf(err, errlen, "%s", msg);
			return -EINVAL;
		}
	}
	if (!a->rq.r.has_src || !a->rq.r.has_dst || !a->rq.r.police_bps) {
		snprintf(err, errlen, "src, dst and rate are needed");
		return -EINVAL;
	}
	return 0;
}

/* The path of @a's request over the declared domain. */
static int adm_path(struct adm *a, char *err, size_t errlen)
{
	const struct qos_rule *r = &a->rq.r;
	const struct qos_dom_prefix *s, *t;
	size_t i;
	int ret;

	s = qos_domain_prefix_of(&a->d, r->family, r->src, r->src_len);
	t = qos_domain_prefix_of(&a->d, r->family, r->dst, r->dst_len);
	if (!s || !t) {
		snprintf(err, errlen, "%s: in no declared prefix of the domain",
			 !s ? "src" : "dst");
		return -ENOENT;
	}
	ret = qos_domain_path(&a->d, s->router, t->router, t->dev, a->hops, QOS_DOM_MAX_HOPS,
			      &a->nhops);
	if (ret) {
		snprintf(err, errlen, "no path from %s (%s) to %s (%s) over the declared links%s",
			 s->router, s->text, t->router, t->text,
			 ret == -E2BIG ? ": too many hops" : "");
		return ret;
	}
	for (i = 0; i < a->nhops; i++) {
		qos_dom_key(a->lkey[i], sizeof(a->lkey[i]), QOS_DOM_LEDGER,
			    a->hops[i].ifc->router, a->hops[i].ifc->dev);
		qos_dom_hop_key(a->hkey[i], sizeof(a->hkey[i]), a->hops[i].ifc->router, a->id, i);
	}
	a->burst = a->rq.r.police_burst ?:
		   QOS_RESERVE_BURST_FRAMES * (uint64_t)a->hops[0].ifc->cls.max_pkt;
	return 0;
}

static int adm_prepare(struct qos_etcd *e, struct adm *a, char *err, size_t errlen)
{
	int ret;

	random_hex(a->nonce, 16);
	if (a->q->id)
		snprintf(a->id, sizeof(a->id), "%s", a->q->id);
	else
		snprintf(a->id, sizeof(a->id), "resv-%.12s", a->nonce + 16);
	qos_dom_key(a->rkey, sizeof(a->rkey), QOS_DOM_RESV, a->id, NULL);
	ret = adm_parse(a, err, errlen);
	ret = ret ?: qos_broker_read_domain(e, &a->d, &a->stamp_mod, err, errlen);
	if (!ret && !a->stamp_mod) {
		snprintf(err, errlen, "no domain is loaded (qosctl domain load FILE)");
		ret = -ENOENT;
	}
	ret = ret ?: adm_path(a, err, errlen);
	if (ret)
		return ret;
	if (!a->q->for_ns)
		return 0;
	a->end_unix_ns = qos_unix_ns() + a->q->for_ns;
	ret = qos_etcd_lease_grant(e, (a->q->for_ns + 999999999ULL) / 1000000000ULL +
				   QOS_BROKER_LEASE_SLACK_S, &a->lease, NULL);
	return ret ? etcd_err(e, ret, err, errlen) : 0;
}

/* Whether reservation value @kv carries @nonce. */
static bool nonce_is(const struct qos_etcd_kv *kv, const char *nonce)
{
	json_object *o = kv_json(kv), *n;
	bool same = o && json_object_object_get_ex(o, "nonce", &n) &&
		    !strcmp(json_object_get_string(n), nonce);

	json_object_put(o);
	return same;
}

static int pair_add(json_object *arr, const char *k, const char *v)
{
	json_object *pair = json_object_new_array();

	if (!pair || json_object_array_add(pair, json_object_new_string(k)) ||
	    json_object_array_add(pair, json_object_new_string(v)) ||
	    json_object_array_add(arr, pair)) {
		json_object_put(pair);
		return -ENOMEM;
	}
	return 0;
}

/* The keys of `qosctl reserve add` the edge router installs: the
 * request's, its burst if it gave none, and the remark to EF unless it
 * asked for another DSCP. */
static json_object *args_json(const struct adm *a)
{
	json_object *arr = json_object_new_array();
	char burst[32];
	size_t i;
	int ret = arr ? 0 : -ENOMEM;

	snprintf(burst, sizeof(burst), "%llu", (unsigned long long)a->burst);
	for (i = 0; i < a->q->nargs && !ret; i++)
		ret = pair_add(arr, a->q->args[i][0], a->q->args[i][1]);
	if (!ret && !a->rq.r.police_burst)
		ret = pair_add(arr, "burst", burst);
	if (!ret && a->rq.r.dscp < 0)
		ret = pair_add(arr, "remark", a->q->remark ?: "ef");
	if (ret) {
		json_object_put(arr);
		return NULL;
	}
	return arr;
}

#define JADD qos_dom_json_add

static json_object *hop_json(const struct qos_dom_iface *f, const struct qos_resv_sum *s)
{
	json_object *o = json_object_new_object();

	if (!o || JADD(o, "router", json_object_new_string(f->router)) ||
	    JADD(o, "dev", json_object_new_string(f->dev)) ||
	    JADD(o, "class", json_object_new_string(f->cls_name)) ||
	    JADD(o, "cap_bps", json_object_new_uint64(f->cls.cap_bps)) ||
	    JADD(o, "rate_bps", json_object_new_uint64(s->rate_bps)) ||
	    JADD(o, "burst_bytes", json_object_new_uint64(s->burst)) ||
	    JADD(o, "n", json_object_new_uint64(s->n)) ||
	    JADD(o, "delay_ns", json_object_new_uint64(qos_resv_delay_ns(&f->cls, s))) ||
	    JADD(o, "delay_bound_ns", json_object_new_uint64(f->cls.delay_ns))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static json_object *link_json(const struct qos_dom_iface *f)
{
	json_object *o = json_object_new_object();

	if (!o || JADD(o, "router", json_object_new_string(f->router)) ||
	    JADD(o, "dev", json_object_new_string(f->dev)) ||
	    (f->peer[0] && JADD(o, "peer", json_object_new_string(f->peer)))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* "path" and "hops" of the reservation, and the path's delay bound. */
static int path_json(const struct adm *a, const struct qos_resv_sum *s, json_object *o)
{
	json_object *path = json_object_new_array(), *hops = json_object_new_array();
	uint64_t bound = 0;
	size_t i;
	int ret = 0;

	if (JADD(o, "path", path) || JADD(o, "hops", hops))
		return -ENOMEM;
	for (i = 0; i < a->nhops && !ret; i++) {
		json_object *l = link_json(a->hops[i].ifc), *h = hop_json(a->hops[i].ifc, &s[i]);

		if (!l || !h || json_object_array_add(path, l) || json_object_array_add(hops, h)) {
			json_object_put(l);
			json_object_put(h);
			ret = -ENOMEM;
		}
		bound += a->hops[i].ifc->cls.delay_ns;
	}
	return ret ?: JADD(o, "delay_bound_ns", json_object_new_uint64(bound));
}

/* What the reservation and its edge key share. */
static json_object *common_json(const struct adm *a)
{
	json_object *o = json_object_new_object();

	if (!o || JADD(o, "id", json_object_new_string(a->id)) ||
	    JADD(o, "nonce", json_object_new_string(a->nonce)) ||
	    JADD(o, "args", args_json(a)) ||
	    JADD(o, "rate_bps", json_object_new_uint64(a->rq.r.police_bps)) ||
	    JADD(o, "burst_bytes", json_object_new_uint64(a->burst)) ||
	    JADD(o, "end_unix_ns", json_object_new_uint64(a->end_unix_ns))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static json_object *resv_json(const struct adm *a, const struct qos_resv_sum *s)
{
	json_object *o = common_json(a);

	char lease[24];

	/* Hexadecimal, as etcdctl writes lease ids: a JSON number would lose
	 * digits in readers that hold numbers in doubles. */
	snprintf(lease, sizeof(lease), "%llx", (unsigned long long)a->lease);
	if (!o || JADD(o, "created_unix_ns", json_object_new_uint64(qos_unix_ns())) ||
	    JADD(o, "lease", json_object_new_string(lease)) || path_json(a, s, o)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* The key of hop @i's router: its egress interface and its place. */
static json_object *hop_key_json(const struct adm *a, size_t i)
{
	json_object *o = common_json(a);

	if (!o || JADD(o, "dev", json_object_new_string(a->hops[i].ifc->dev)) ||
	    JADD(o, "hop", json_object_new_uint64(i))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* The path's ledgers and the reservation's key, at one revision. */
static int adm_read(struct qos_etcd *e, const struct adm *a, struct qos_etcd_txn_res *res,
		    char *err, size_t errlen)
{
	struct qos_etcd_txn *t = qos_etcd_txn_new();
	size_t i;
	int ret;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < a->nhops; i++)
		qos_etcd_txn_get(t, true, a->lkey[i], 0);
	qos_etcd_txn_get(t, true, a->rkey, 0);
	ret = qos_etcd_txn_commit(e, t, res);
	qos_etcd_txn_free(t);
	if (ret)
		return etcd_err(e, ret, err, errlen);
	if (res->nranges != a->nhops + 1) {
		qos_etcd_txn_res_free(res);
		snprintf(err, errlen, "etcd: a transaction's answer lacks its ranges");
		return -EIO;
	}
	return 0;
}

/* Admit on every hop: the ledgers with the new entry in @l, the sums
 * after it in @s; -ENOSPC naming the bottleneck. */
static int adm_check(const struct adm *a, const struct qos_etcd_txn_res *rd,
		     struct qos_dom_ledger *l, struct qos_resv_sum *s, char *err, size_t errlen)
{
	struct qos_resv_req req = { .rate_bps = a->rq.r.police_bps, .burst = a->burst };
	uint64_t now = qos_unix_ns();
	const struct qos_dom_iface *f;
	char why[512];
	size_t i, at = 0;
	int v;

	for (i = 0; i < a->nhops; i++) {
		if (ledger_of(rd->ranges[i].n ? &rd->ranges[i].kv[0] : NULL, &l[i], &s[i], now)) {
			snprintf(err, errlen, "etcd key %s: not a ledger qosctl wrote", a->lkey[i]);
			return -EINVAL;
		}
	}
	v = qos_domain_admit(a->hops, a->nhops, l, s, &req, a->id, a->end_unix_ns, now, &at);
	if (v <= 0)
		return v;
	f = a->hops[at].ifc;
	qos_resv_refusal(why, sizeof(why), v, &f->cls, &s[at], &req);
	snprintf(err, errlen, "refused at router %s dev %s (hop %zu of %zu): %s", f->router,
		 f->dev, at + 1, a->nhops, f->cls.cap_bps ? why : "its profile has no reserve-class");
	return -ENOSPC;
}

/* The one transaction of an admission. */
static int adm_commit(struct qos_etcd *e, const struct adm *a, const struct qos_etcd_txn_res *rd,
		      const struct qos_dom_ledger *l, const struct qos_resv_sum *s,
		      struct qos_etcd_txn_res *res)
{
	struct qos_etcd_txn *t = qos_etcd_txn_new();
	json_object *hk = NULL;
	size_t i;
	int ret = -ENOMEM;

	if (!t || !a->value)
		goto out;
	qos_etcd_txn_cmp(t, QOS_DOM_STAMP, QOS_ETCD_MOD, QOS_ETCD_EQ, a->stamp_mod);
	qos_etcd_txn_cmp(t, a->rkey, QOS_ETCD_CREATE, QOS_ETCD_EQ, 0);
	for (i = 0; i < a->nhops; i++) {
		json_object *lj = qos_dom_ledger_json(&l[i], &s[i]);

		qos_etcd_txn_cmp(t, a->lkey[i], QOS_ETCD_MOD, QOS_ETCD_EQ,
				 rd->ranges[i].n ? rd->ranges[i].kv[0].mod_revision : 0);
		if (!lj)
			goto out;
		qos_etcd_txn_put(t, true, a->lkey[i], plain(lj), strlen(plain(lj)), 0);
		json_object_put(lj);
		hk = hop_key_json(a, i);
		if (!hk)
			goto out;
		qos_etcd_txn_put(t, true, a->hkey[i], plain(hk), strlen(plain(hk)), a->lease);
		json_object_put(hk);
	}
	qos_etcd_txn_put(t, true, a->rkey, plain(a->value), strlen(plain(a->value)), a->lease);
	qos_etcd_txn_get(t, false, a->rkey, 0);
	qos_fault_point("domain-commit");
	ret = qos_etcd_txn_commit(e, t, res);
out:
	qos_etcd_txn_free(t);
	return ret;
}

/* Reservation @kv, found under the id: ours (0) or another's (-EEXIST). */
static int adm_found(const struct adm *a, const struct qos_etcd_kv *kv, char *err,
		     size_t errlen)
{
	if (nonce_is(kv, a->nonce))
		return 0;
	snprintf(err, errlen, "reservation '%s' exists", a->id);
	return -EEXIST;
}

/* One attempt: 0 admitted, 1 conflict, 2 outcome unknown, or -errno. */
static int adm_attempt(struct qos_etcd *e, struct adm *a, char *err, size_t errlen)
{
	struct qos_dom_ledger l[QOS_DOM_MAX_HOPS] = {};
	struct qos_resv_sum s[QOS_DOM_MAX_HOPS];
	struct qos_etcd_txn_res rd, cm = {};
	size_t i;
	int ret;

	ret = adm_read(e, a, &rd, err, errlen);
	if (ret)
		return ret;
	if (rd.ranges[a->nhops].n) {
		ret = adm_found(a, &rd.ranges[a->nhops].kv[0], err, errlen);
		goto out;
	}
	ret = adm_check(a, &rd, l, s, err, errlen);
	if (ret)
		goto out;
	json_object_put(a->value);
	a->value = resv_json(a, s);
	ret = adm_commit(e, a, &rd, l, s, &cm);
	if (ret == -ETIMEDOUT)
		ret = 2;
	else if (ret)
		etcd_err(e, ret, err, errlen);
	else if (!cm.succeeded)
		ret = cm.nranges && cm.ranges[0].n ? adm_found(a, &cm.ranges[0].kv[0], err, errlen)
						   : 1;
out:
	for (i = 0; i < a->nhops; i++)
		qos_dom_ledger_free(&l[i]);
	qos_etcd_txn_res_free(&rd);
	qos_etcd_txn_res_free(&cm);
	return ret;
}

/* Before another attempt: the domain again if it changed (its stamp
 * moved: a load, or a broker fencing a lost commit), and the path in it. */
static int adm_refresh(struct qos_etcd *e, struct adm *a, char *err, size_t errlen)
{
	struct qos_domain d;
	int64_t stamp_mod;
	int ret;

	ret = qos_broker_read_domain(e, &d, &stamp_mod, err, errlen);
	if (ret)
		return ret;
	if (stamp_mod == a->stamp_mod) {
		qos_domain_free(&d);
		return 0;
	}
	qos_domain_free(&a->d);
	a->d = d;
	a->stamp_mod = stamp_mod;
	return adm_path(a, err, errlen);
}

/* How long an unknown outcome is read back for before giving up. */
#define QOS_BROKER_RESOLVE_NS	(30 * 1000000000ULL)

/*
 * A commit timed out: it may be applied yet. Either the reservation is
 * there (ours: 0, another's: -EEXIST), or the stamp every admission
 * compares is rewritten in the same transaction that finds it absent, so
 * the lost commit can never apply later: 1, admit again from a fresh read.
 */
static int adm_resolve(struct qos_etcd *e, const struct adm *a, char *err, size_t errlen)
{
	uint64_t deadline = qos_boottime_ns() + QOS_BROKER_RESOLVE_NS;
	struct timespec pause = { 0, 200000000L };
	struct qos_etcd_txn_res res;
	struct qos_etcd_txn *t;
	int ret;

	for (;;) {
		t = qos_etcd_txn_new();
		if (!t)
			return -ENOMEM;
		qos_etcd_txn_cmp(t, a->rkey, QOS_ETCD_CREATE, QOS_ETCD_EQ, 0);
		qos_etcd_txn_touch(t, true, QOS_DOM_STAMP);
		qos_etcd_txn_get(t, false, a->rkey, 0);
		ret = qos_etcd_txn_commit(e, t, &res);
		qos_etcd_txn_free(t);
		if (!ret) {
			ret = res.succeeded ? 1 : res.nranges && res.ranges[0].n ?
			      adm_found(a, &res.ranges[0].kv[0], err, errlen) : 1;
			qos_etcd_txn_res_free(&res);
			return ret;
		}
		if (qos_boottime_ns() > deadline)
			break;
		nanosleep(&pause, NULL);
	}
	snprintf(err, errlen, "reservation '%s': the commit timed out and its outcome could not "
		 "be read back: %s (see 'qosctl domain reserve list')", a->id,
		 qos_etcd_errmsg(e));
	return -ETIMEDOUT;
}

int qos_broker_reserve(struct qos_etcd *e, const struct qos_broker_req *q, json_object **resv,
		       char *err, size_t errlen)
{
	struct adm *a = calloc(1, sizeof(*a));
	unsigned int i;
	int ret;

	if (!a)
		return -ENOMEM;
	a->q = q;
	ret = adm_prepare(e, a, err, errlen);
	for (i = 0; !ret && i < QOS_BROKER_ATTEMPTS; i++) {
		ret = i ? adm_refresh(e, a, err, errlen) : 0;
		ret = ret ?: adm_attempt(e, a, err, errlen);
		if (ret == 2)
			ret = adm_resolve(e, a, err, errlen);
		if (ret != 1)
			break;
		backoff(i);
		ret = 0;
	}
	if (!ret && i == QOS_BROKER_ATTEMPTS) {
		snprintf(err, errlen, "gave up after %u conflicting admissions", i);
		ret = -EAGAIN;
	}
	if (!ret)
		*resv = json_object_get(a->value);
	else if (a->lease && ret != -ETIMEDOUT)
		qos_etcd_lease_revoke(e, a->lease);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	json_object_put(a->value);
	qos_domain_free(&a->d);
	free(a);
	return ret;
}

/* A reservation's path: its routers and interfaces, and the keys. */
struct rel {
	char rkey[QOS_DOM_KEY_MAX];
	char hkey[QOS_DOM_MAX_HOPS][QOS_DOM_KEY_MAX];
	char lkey[QOS_DOM_MAX_HOPS][QOS_DOM_KEY_MAX];
	size_t nhops;
	int64_t mod;
	int64_t lease;
};

static int rel_decode(const struct qos_etcd_kv *kv, const char *id, struct rel *r)
{
	json_object *o = kv_json(kv), *path, *h, *rt, *dev, *lease;
	size_t i, n;
	int ret = -EINVAL;

	if (!o || !json_object_object_get_ex(o, "path", &path) ||
	    !(n = json_object_array_length(path)) || n > QOS_DOM_MAX_HOPS)
		goto out;
	for (i = 0; i < n; i++) {
		h = json_object_array_get_idx(path, i);
		if (!json_object_object_get_ex(h, "router", &rt) ||
		    !json_object_object_get_ex(h, "dev", &dev))
			goto out;
		qos_dom_key(r->lkey[i], sizeof(r->lkey[i]), QOS_DOM_LEDGER,
			    json_object_get_string(rt), json_object_get_string(dev));
		qos_dom_hop_key(r->hkey[i], sizeof(r->hkey[i]), json_object_get_string(rt), id, i);
	}
	r->nhops = n;
	r->mod = kv->mod_revision;
	r->lease = json_object_object_get_ex(o, "lease", &lease) ?
		   (int64_t)strtoull(json_object_get_string(lease), NULL, 16) : 0;
	ret = 0;
out:
	json_object_put(o);
	return ret;
}

/* The transaction deleting @r: its keys, its entries of the ledgers @rd. */
static struct qos_etcd_txn *rel_txn(const struct rel *r, const char *id,
				    const struct qos_etcd_txn_res *rd)
{
	struct qos_etcd_txn *t = qos_etcd_txn_new();
	uint64_t now = qos_unix_ns();
	size_t i;

	if (!t)
		return NULL;
	qos_etcd_txn_cmp(t, r->rkey, QOS_ETCD_MOD, QOS_ETCD_EQ, r->mod);
	qos_etcd_txn_del(t, true, r->rkey, 0);
	for (i = 0; i < r->nhops; i++)
		qos_etcd_txn_del(t, true, r->hkey[i], 0);
	for (i = 0; i < r->nhops; i++) {
		const struct qos_etcd_kv *kv = rd->ranges[i].n ? &rd->ranges[i].kv[0] : NULL;
		struct qos_dom_ledger l;
		struct qos_resv_sum s;
		json_object *lj;

		qos_etcd_txn_cmp(t, r->lkey[i], QOS_ETCD_MOD, QOS_ETCD_EQ,
				 kv ? kv->mod_revision : 0);
		if (!kv || ledger_of(kv, &l, &s, now))
			continue;
		if (qos_dom_ledger_del(&l, id))
			s = qos_dom_ledger_live(&l, now);
		lj = qos_dom_ledger_json(&l, &s);
		if (lj)
			qos_etcd_txn_put(t, true, r->lkey[i], plain(lj), strlen(plain(lj)), 0);
		json_object_put(lj);
		qos_dom_ledger_free(&l);
	}
	return t;
}

/* One attempt of a release: 0 done, 1 again, or -errno. */
static int rel_once(struct qos_etcd *e, const char *id, bool first, int64_t *lease, char *err,
		    size_t errlen)
{
	struct qos_etcd_txn_res rd = {}, res = {};
	struct qos_etcd_txn *t = NULL;
	struct qos_etcd_kvs kvs;
	struct rel r = {};
	size_t i;
	int ret;

	qos_dom_key(r.rkey, sizeof(r.rkey), QOS_DOM_RESV, id, NULL);
	ret = qos_etcd_get(e, r.rkey, 0, 0, 0, &kvs);
	if (ret)
		return ret == -ETIMEDOUT || ret == -EAGAIN ? 1 : etcd_err(e, ret, err, errlen);
	if (!kvs.n) {
		qos_etcd_kvs_free(&kvs);
		if (!first)
			return 0;
		snprintf(err, errlen, "reservation '%s': no such reservation", id);
		return -ENOENT;
	}
	ret = rel_decode(&kvs.kv[0], id, &r);
	qos_etcd_kvs_free(&kvs);
	if (ret) {
		snprintf(err, errlen, "etcd key %s: not a reservation qosctl wrote", r.rkey);
		return ret;
	}
	*lease = r.lease;
	t = qos_etcd_txn_new();
	for (i = 0; t && i < r.nhops; i++)
		qos_etcd_txn_get(t, true, r.lkey[i], 0);
	ret = t ? qos_etcd_txn_commit(e, t, &rd) : -ENOMEM;
	qos_etcd_txn_free(t);
	t = !ret && rd.nranges == r.nhops ? rel_txn(&r, id, &rd) : NULL;
	if (!ret)
		ret = t ? qos_etcd_txn_commit(e, t, &res) : -ENOMEM;
	if (!ret)
		ret = res.succeeded ? 0 : 1;
	else if (ret == -ETIMEDOUT || ret == -EAGAIN)
		ret = 1;	/* read again: a delete done twice is one */
	else
		etcd_err(e, ret, err, errlen);
	qos_etcd_txn_free(t);
	qos_etcd_txn_res_free(&rd);
	qos_etcd_txn_res_free(&res);
	return ret;
}

int qos_broker_release(struct qos_etcd *e, const char *id, char *err, size_t errlen)
{
	int64_t lease = 0;
	unsigned int i;
	int ret = 1;

	for (i = 0; ret == 1 && i < QOS_BROKER_ATTEMPTS; i++) {
		if (i)
			backoff(i);
		ret = rel_once(e, id, i == 0, &lease, err, errlen);
	}
	if (ret == 1) {
		snprintf(err, errlen, "reservation '%s': gave up after %u attempts: %s", id, i,
			 qos_etcd_errmsg(e));
		return -EAGAIN;
	}
	/* The keys are gone; the lease only held them. */
	if (!ret && lease)
		qos_etcd_lease_revoke(e, lease);
	return ret;
}

void qos_dom_view_free(struct qos_dom_view *v)
{
	qos_domain_free(&v->d);
	free(v->sums);
	json_object_put(v->resv);
	json_object_put(v->status);
	memset(v, 0, sizeof(*v));
}

/* Sums of the ledgers in @r for each interface of @v->d. */
static int view_sums(struct qos_dom_view *v, const struct qos_etcd_kvs *r)
{
	char key[QOS_DOM_KEY_MAX];
	size_t i, j;

	v->sums = calloc(v->d.nifs ? v->d.nifs : 1, sizeof(*v->sums));
	if (!v->sums)
		return -ENOMEM;
	for (i = 0; i < v->d.nifs; i++) {
		qos_dom_key(key, sizeof(key), QOS_DOM_LEDGER, v->d.ifs[i].router, v->d.ifs[i].dev);
		for (j = 0; j < r->n; j++) {
			struct qos_dom_ledger l;

			if (strcmp(r->kv[j].key, key))
				continue;
			if (!ledger_of(&r->kv[j], &l, &v->sums[i], v->now_unix_ns))
				qos_dom_ledger_free(&l);
		}
	}
	return 0;
}

/* The values of @r: an array, or an object by the key's last part. */
static json_object *view_values(const struct qos_etcd_kvs *r, bool by_name, uint64_t now)
{
	json_object *out = by_name ? json_object_new_object() : json_object_new_array(), *o, *end;
	size_t i;

	for (i = 0; out && i < r->n; i++) {
		o = kv_json(&r->kv[i]);
		if (!o)
			continue;
		/* Ended, and its lease not yet run out: not shown. */
		if (!by_name && json_object_object_get_ex(o, "end_unix_ns", &end) &&
		    json_object_get_uint64(end) && json_object_get_uint64(end) <= now) {
			json_object_put(o);
			continue;
		}
		if (by_name)
			json_object_object_add(out, strrchr(r->kv[i].key, '/') + 1, o);
		else
			json_object_array_add(out, o);
	}
	return out;
}

int qos_broker_view(struct qos_etcd *e, struct qos_dom_view *v, char *err, size_t errlen)
{
	struct qos_etcd_txn *t = qos_etcd_txn_new();
	struct qos_etcd_txn_res res = {};
	int64_t stamp;
	int ret;

	memset(v, 0, sizeof(*v));
	if (!t)
		return -ENOMEM;
	qos_etcd_txn_get(t, true, QOS_DOM_DECL, QOS_ETCD_PREFIX);
	qos_etcd_txn_get(t, true, QOS_DOM_LEDGER, QOS_ETCD_PREFIX);
	qos_etcd_txn_get(t, true, QOS_DOM_RESV, QOS_ETCD_PREFIX);
	qos_etcd_txn_get(t, true, QOS_DOM_STATUS, QOS_ETCD_PREFIX);
	ret = qos_etcd_txn_commit(e, t, &res);
	qos_etcd_txn_free(t);
	if (ret)
		return etcd_err(e, ret, err, errlen);
	v->now_unix_ns = qos_unix_ns();
	v->revision = res.hdr.revision;
	ret = res.nranges == 4 ? decl_decode(&res.ranges[0], &v->d, &stamp, err, errlen) : -EIO;
	ret = ret ?: view_sums(v, &res.ranges[1]);
	if (!ret) {
		v->resv = view_values(&res.ranges[2], false, v->now_unix_ns);
		v->status = view_values(&res.ranges[3], true, v->now_unix_ns);
		ret = v->resv && v->status ? 0 : -ENOMEM;
	}
	qos_etcd_txn_res_free(&res);
	if (ret == -ENOMEM || ret == -EIO)
		snprintf(err, errlen, "%s", strerror(-ret));
	if (ret)
		qos_dom_view_free(v);
	return ret;
}
