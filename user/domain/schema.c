// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The declared domain: its file checked whole, its values as JSON, the
 * ledgers summed, the path between two routers (schema.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <sys/socket.h>

#include "domain/schema.h"
#include "lib/util.h"
#include "model/rule.h"

void qos_domain_free(struct qos_domain *d)
{
	free(d->routers);
	free(d->ifs);
	free(d->pfx);
	memset(d, 0, sizeof(*d));
}

const char *qos_dom_key(char *buf, size_t len, const char *base, const char *a, const char *b)
{
	snprintf(buf, len, "%s%s%s%s", base, a, b ? "/" : "", b ?: "");
	return buf;
}

const char *qos_dom_hop_key(char *buf, size_t len, const char *router, const char *id,
			    size_t hop)
{
	snprintf(buf, len, "%s%s/%s/%s", QOS_DOM_DESIRED, router, hop ? "transit" : "resv", id);
	return buf;
}

int qos_domain_router(const struct qos_domain *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->nrouters; i++)
		if (!strcmp(d->routers[i], name))
			return i;
	return -1;
}

const struct qos_dom_iface *qos_domain_iface(const struct qos_domain *d, const char *router,
					     const char *dev)
{
	size_t i;

	for (i = 0; i < d->nifs; i++)
		if (!strcmp(d->ifs[i].router, router) && !strcmp(d->ifs[i].dev, dev))
			return &d->ifs[i];
	return NULL;
}

/* Whether the first @bits bits of @a and @b are the same. */
static bool same_bits(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int full = bits / 8, rest = bits % 8;

	if (memcmp(a, b, full))
		return false;
	return !rest || !((a[full] ^ b[full]) & (0xff << (8 - rest)));
}

bool qos_prefix_overlap(const struct qos_dom_prefix *a, const struct qos_dom_prefix *b)
{
	return a->family == b->family &&
	       same_bits(a->addr, b->addr, a->plen < b->plen ? a->plen : b->plen);
}

const struct qos_dom_prefix *qos_domain_prefix_of(const struct qos_domain *d, int family,
						  const uint8_t *addr, uint8_t plen)
{
	const struct qos_dom_prefix *best = NULL;
	size_t i;

	for (i = 0; i < d->npfx; i++) {
		const struct qos_dom_prefix *p = &d->pfx[i];

		if (p->family == family && p->plen <= plen && same_bits(p->addr, addr, p->plen) &&
		    (!best || p->plen > best->plen))
			best = p;
	}
	return best;
}

/* A string member @key of @o, or NULL (absent or not a string: *@bad). */
static const char *str_member(json_object *o, const char *key, bool *bad)
{
	json_object *v;

	*bad = false;
	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	if (!json_object_is_type(v, json_type_string)) {
		*bad = true;
		return NULL;
	}
	return json_object_get_string(v);
}

/* Every member of @o is one of @keys. */
static const char *unknown_member(json_object *o, const char *const *keys)
{
	json_object_object_foreach(o, k, v) {
		const char *const *p;

		(void)v;
		for (p = keys; *p && strcmp(*p, k); p++)
			;
		if (!*p)
			return k;
	}
	return NULL;
}

/* "domain.json: interfaces[2]: " */
#define ENTRY_FMT "%s: %s[%zu]: "

static int get_array(json_object *root, const char *path, const char *key, bool need,
		     json_object **a, char *err, size_t errlen)
{
	*a = NULL;
	if (!json_object_object_get_ex(root, key, a)) {
		if (!need)
			return 0;
		snprintf(err, errlen, "%s: no \"%s\" array", path, key);
		return -EINVAL;
	}
	if (!json_object_is_type(*a, json_type_array)) {
		snprintf(err, errlen, "%s: \"%s\" is not an array", path, key);
		return -EINVAL;
	}
	return 0;
}

static int parse_routers(json_object *a, const char *path, struct qos_domain *d, char *err,
			 size_t errlen)
{
	size_t i, n = json_object_array_length(a);

	if (n > QOS_DOM_MAX_ROUTERS) {
		snprintf(err, errlen, "%s: routers: more than %d", path, QOS_DOM_MAX_ROUTERS);
		return -E2BIG;
	}
	d->routers = calloc(n ? n : 1, sizeof(*d->routers));
	if (!d->routers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(a, i);
		const char *s = json_object_get_string(v);

		if (!json_object_is_type(v, json_type_string) || !qos_name_ok(s, QOS_NAME_MAX)) {
			snprintf(err, errlen, ENTRY_FMT "not a router name (1-%d of %s)", path,
				 "routers", i, QOS_NAME_MAX, QOS_NAME_CHARS);
			return -EINVAL;
		}
		if (qos_domain_router(d, s) >= 0) {
			snprintf(err, errlen, ENTRY_FMT "router '%s' is declared twice", path,
				 "routers", i, s);
			return -EINVAL;
		}
		snprintf(d->routers[d->nrouters++], sizeof(d->routers[0]), "%s", s);
	}
	return 0;
}

/* The members of interface @o into @f, unchecked against the others. */
static int iface_members(json_object *o, const char *where, struct qos_dom_iface *f, char *err,
			 size_t errlen)
{
	static const char *const keys[] = { "router", "dev", "rate", "profile", "peer", NULL };
	const char *router, *dev, *rate, *profile, *peer, *k;
	bool b1, b2, b3, b4, b5;

	if (!json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "%snot an object", where);
		return -EINVAL;
	}
	k = unknown_member(o, keys);
	if (k) {
		snprintf(err, errlen, "%sunknown key '%s' (router, dev, rate, profile, peer)",
			 where, k);
		return -EINVAL;
	}
	router = str_member(o, "router", &b1);
	dev = str_member(o, "dev", &b2);
	rate = str_member(o, "rate", &b3);
	profile = str_member(o, "profile", &b4);
	peer = str_member(o, "peer", &b5);
	if (b1 || b2 || b3 || b4 || b5 || !router || !dev || !rate || !profile) {
		snprintf(err, errlen, "%srouter, dev, rate and profile are strings, "
			 "and needed; peer a string", where);
		return -EINVAL;
	}
	if (!qos_name_ok(dev, QOS_DOM_DEV_MAX) || strlen(rate) >= sizeof(f->rate) ||
	    strlen(profile) >= sizeof(f->profile) || !*profile) {
		snprintf(err, errlen, "%sdev '%s': not an interface name, or rate or profile "
			 "too long", where, dev);
		return -EINVAL;
	}
	if (qos_parse_rate(rate, 0, &f->rate_bps) || !f->rate_bps) {
		snprintf(err, errlen, "%srate '%s': not a rate (100mbit, 1gbit)", where, rate);
		return -EINVAL;
	}
	snprintf(f->router, sizeof(f->router), "%s", router);
	snprintf(f->dev, sizeof(f->dev), "%s", dev);
	snprintf(f->rate, sizeof(f->rate), "%s", rate);
	snprintf(f->profile, sizeof(f->profile), "%s", profile);
	snprintf(f->peer, sizeof(f->peer), "%s", peer ?: "");
	return 0;
}

static int parse_ifaces(json_object *a, const char *path, struct qos_domain *d, char *err,
			size_t errlen)
{
	size_t i, j, n = json_object_array_length(a);
	char where[128];
	int ret;

	d->ifs = calloc(n ? n : 1, sizeof(*d->ifs));
	if (!d->ifs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct qos_dom_iface *f = &d->ifs[i];

		snprintf(where, sizeof(where), ENTRY_FMT, path, "interfaces", i);
		ret = iface_members(json_object_array_get_idx(a, i), where, f, err, errlen);
		if (ret)
			return ret;
		if (qos_domain_router(d, f->router) < 0 ||
		    (f->peer[0] && qos_domain_router(d, f->peer) < 0)) {
			snprintf(err, errlen, "%s%s '%s' is not a declared router", where,
				 qos_domain_router(d, f->router) < 0 ? "router" : "peer",
				 qos_domain_router(d, f->router) < 0 ? f->router : f->peer);
			return -EINVAL;
		}
		if (!strcmp(f->peer, f->router)) {
			snprintf(err, errlen, "%speer '%s' is its own router", where, f->peer);
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			if (strcmp(d->ifs[j].router, f->router) || strcmp(d->ifs[j].dev, f->dev))
				continue;
			snprintf(err, errlen, "%sinterface %s %s is declared twice (first in "
				 "interfaces[%zu])", where, f->router, f->dev, j);
			return -EINVAL;
		}
		d->nifs++;
	}
	return 0;
}

/* @p's address with its host bits cleared, as text: "10.1.0.0/24". */
static void prefix_normalise(struct qos_dom_prefix *p)
{
	unsigned int alen = p->family == AF_INET ? 4 : 16, i;
	char a[INET6_ADDRSTRLEN];

	for (i = 0; i < alen; i++) {
		unsigned int bits = i * 8;

		if (bits >= p->plen)
			p->addr[i] = 0;
		else if (p->plen - bits < 8)
			p->addr[i] &= 0xff << (8 - (p->plen - bits));
	}
	inet_ntop(p->family, p->addr, a, sizeof(a));
	snprintf(p->text, sizeof(p->text), "%s/%u", a, p->plen);
}

static int prefix_members(json_object *o, const char *where, const struct qos_domain *d,
			  struct qos_dom_prefix *p, char *err, size_t errlen)
{
	static const char *const keys[] = { "prefix", "router", "dev", NULL };
	const char *pfx, *router, *dev, *k;
	bool b1, b2, b3;

	if (!json_object_is_type(o, json_type_object) || (k = unknown_member(o, keys))) {
		snprintf(err, errlen, "%snot an object of prefix, router and dev", where);
		return -EINVAL;
	}
	pfx = str_member(o, "prefix", &b1);
	router = str_member(o, "router", &b2);
	dev = str_member(o, "dev", &b3);
	if (b1 || b2 || b3 || !pfx || !router || !dev) {
		snprintf(err, errlen, "%sprefix, router and dev are strings, and needed", where);
		return -EINVAL;
	}
	if (qos_parse_prefix(pfx, &p->family, p->addr, &p->plen)) {
		snprintf(err, errlen, "%sprefix '%s': not an IPv4 or IPv6 prefix", where, pfx);
		return -EINVAL;
	}
	if (!qos_domain_iface(d, router, dev)) {
		snprintf(err, errlen, "%sinterface %s %s is not declared", where, router, dev);
		return -EINVAL;
	}
	prefix_normalise(p);
	snprintf(p->router, sizeof(p->router), "%s", router);
	snprintf(p->dev, sizeof(p->dev), "%s", dev);
	return 0;
}

static int parse_prefixes(json_object *a, const char *path, struct qos_domain *d, char *err,
			  size_t errlen)
{
	size_t i, j, n = a ? json_object_array_length(a) : 0;
	char where[128];
	int ret;

	d->pfx = calloc(n ? n : 1, sizeof(*d->pfx));
	if (!d->pfx)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct qos_dom_prefix *p = &d->pfx[i];

		snprintf(where, sizeof(where), ENTRY_FMT, path, "prefixes", i);
		ret = prefix_members(json_object_array_get_idx(a, i), where, d, p, err, errlen);
		if (ret)
			return ret;
		for (j = 0; j < i; j++) {
			if (!qos_prefix_overlap(&d->pfx[j], p))
				continue;
			snprintf(err, errlen, "%sprefix %s overlaps %s of prefixes[%zu]", where,
				 p->text, d->pfx[j].text, j);
			return -EINVAL;
		}
		d->npfx++;
	}
	return 0;
}

int qos_domain_parse(json_object *root, const char *path, struct qos_domain *d, char *err,
		     size_t errlen)
{
	static const char *const keys[] = { "routers", "interfaces", "prefixes", NULL };
	json_object *routers, *ifs, *pfx;
	const char *k;
	int ret;

	memset(d, 0, sizeof(*d));
	if (!json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "%s: not a JSON object of routers, interfaces, prefixes",
			 path);
		return -EINVAL;
	}
	k = unknown_member(root, keys);
	if (k) {
		snprintf(err, errlen, "%s: unknown key '%s' (routers, interfaces, prefixes)",
			 path, k);
		return -EINVAL;
	}
	ret = get_array(root, path, "routers", true, &routers, err, errlen);
	ret = ret ?: get_array(root, path, "interfaces", true, &ifs, err, errlen);
	ret = ret ?: get_array(root, path, "prefixes", false, &pfx, err, errlen);
	ret = ret ?: parse_routers(routers, path, d, err, errlen);
	ret = ret ?: parse_ifaces(ifs, path, d, err, errlen);
	ret = ret ?: parse_prefixes(pfx, path, d, err, errlen);
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
	if (ret)
		qos_domain_free(d);
	return ret;
}

/* Breadth-first from @dst over the links backwards: dist[r] hops to it. */
static void path_dist(const struct qos_domain *d, int dst, int *dist)
{
	bool changed = true;
	size_t i;

	for (i = 0; i < d->nrouters; i++)
		dist[i] = -1;
	dist[dst] = 0;
	while (changed) {
		changed = false;
		for (i = 0; i < d->nifs; i++) {
			const struct qos_dom_iface *f = &d->ifs[i];
			int r = qos_domain_router(d, f->router), p;

			if (!f->peer[0])
				continue;
			p = qos_domain_router(d, f->peer);
			if (dist[p] >= 0 && (dist[r] < 0 || dist[p] + 1 < dist[r])) {
				dist[r] = dist[p] + 1;
				changed = true;
			}
		}
	}
}

/* Of @r's links to a router one hop nearer @dst, the one the tie rule picks. */
static const struct qos_dom_iface *next_link(const struct qos_domain *d, const char *r,
					     const int *dist)
{
	const struct qos_dom_iface *best = NULL;
	int dr = dist[qos_domain_router(d, r)];
	size_t i;

	for (i = 0; i < d->nifs; i++) {
		const struct qos_dom_iface *f = &d->ifs[i];
		int c;

		if (strcmp(f->router, r) || !f->peer[0] ||
		    dist[qos_domain_router(d, f->peer)] != dr - 1)
			continue;
		c = best ? strcmp(f->peer, best->peer) : -1;
		if (c < 0 || (c == 0 && strcmp(f->dev, best->dev) < 0))
			best = f;
	}
	return best;
}

int qos_domain_path(const struct qos_domain *d, const char *src, const char *dst,
		    const char *dst_dev, struct qos_dom_hop *hops, size_t max, size_t *n)
{
	int s = qos_domain_router(d, src), t = qos_domain_router(d, dst), *dist;
	const struct qos_dom_iface *last = qos_domain_iface(d, dst, dst_dev);
	const char *cur = src;
	int ret = 0;

	*n = 0;
	if (s < 0 || t < 0 || !last)
		return -ENOENT;
	dist = calloc(d->nrouters, sizeof(*dist));
	if (!dist)
		return -ENOMEM;
	path_dist(d, t, dist);
	if (dist[s] < 0) {
		ret = -ENETUNREACH;
		goto out;
	}
	if ((size_t)dist[s] + 1 > max) {
		ret = -E2BIG;
		goto out;
	}
	while (strcmp(cur, dst)) {
		const struct qos_dom_iface *f = next_link(d, cur, dist);

		hops[(*n)++].ifc = f;
		cur = f->peer;
	}
	hops[(*n)++].ifc = last;
out:
	free(dist);
	return ret;
}

int qos_dom_json_add(json_object *o, const char *key, json_object *v)
{
	if (!v || json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static json_object *class_json(const struct qos_resv_class *c, const char *name)
{
	json_object *o = json_object_new_object();

	if (!o || qos_dom_json_add(o, "name", json_object_new_string(name)) ||
	    qos_dom_json_add(o, "cap_bps", json_object_new_uint64(c->cap_bps)) ||
	    qos_dom_json_add(o, "ceil_bps", json_object_new_uint64(c->ceil_bps)) ||
	    qos_dom_json_add(o, "headroom_pct", json_object_new_int(c->headroom_pct)) ||
	    qos_dom_json_add(o, "delay_ns", json_object_new_uint64(c->delay_ns)) ||
	    qos_dom_json_add(o, "max_pkt_bytes", json_object_new_int(c->max_pkt))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *qos_dom_iface_json(const struct qos_dom_iface *i)
{
	json_object *o = json_object_new_object();

	if (!o || qos_dom_json_add(o, "router", json_object_new_string(i->router)) ||
	    qos_dom_json_add(o, "dev", json_object_new_string(i->dev)) ||
	    qos_dom_json_add(o, "rate", json_object_new_string(i->rate)) ||
	    qos_dom_json_add(o, "rate_bps", json_object_new_uint64(i->rate_bps)) ||
	    qos_dom_json_add(o, "profile", json_object_new_string(i->profile)) ||
	    (i->peer[0] && qos_dom_json_add(o, "peer", json_object_new_string(i->peer))) ||
	    qos_dom_json_add(o, "class", class_json(&i->cls, i->cls_name))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static uint64_t u64_member(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_uint64(v) : 0;
}

/* String member @key into @buf; -EINVAL if absent (and @need) or too long. */
static int copy_member(json_object *o, const char *key, char *buf, size_t len, bool need)
{
	json_object *v;
	const char *s;

	buf[0] = '\0';
	if (!json_object_object_get_ex(o, key, &v))
		return need ? -EINVAL : 0;
	s = json_object_get_string(v);
	if (!json_object_is_type(v, json_type_string) || strlen(s) >= len)
		return -EINVAL;
	memcpy(buf, s, strlen(s) + 1);
	return 0;
}

int qos_dom_iface_from_json(json_object *o, struct qos_dom_iface *i)
{
	json_object *c;
	int ret;

	memset(i, 0, sizeof(*i));
	ret = copy_member(o, "router", i->router, sizeof(i->router), true);
	ret = ret ?: copy_member(o, "dev", i->dev, sizeof(i->dev), true);
	ret = ret ?: copy_member(o, "rate", i->rate, sizeof(i->rate), true);
	ret = ret ?: copy_member(o, "profile", i->profile, sizeof(i->profile), true);
	ret = ret ?: copy_member(o, "peer", i->peer, sizeof(i->peer), false);
	if (ret || !json_object_object_get_ex(o, "class", &c))
		return -EINVAL;
	i->rate_bps = u64_member(o, "rate_bps");
	ret = copy_member(c, "name", i->cls_name, sizeof(i->cls_name), true);
	i->cls.name = i->cls_name;
	i->cls.cap_bps = u64_member(c, "cap_bps");
	i->cls.ceil_bps = u64_member(c, "ceil_bps");
	i->cls.headroom_pct = u64_member(c, "headroom_pct");
	i->cls.delay_ns = u64_member(c, "delay_ns");
	i->cls.max_pkt = u64_member(c, "max_pkt_bytes");
	return ret;
}

json_object *qos_dom_prefix_json(const struct qos_dom_prefix *p)
{
	json_object *o = json_object_new_object();

	if (!o || qos_dom_json_add(o, "prefix", json_object_new_string(p->text)) ||
	    qos_dom_json_add(o, "router", json_object_new_string(p->router)) ||
	    qos_dom_json_add(o, "dev", json_object_new_string(p->dev))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int qos_dom_prefix_from_json(json_object *o, struct qos_dom_prefix *p)
{
	int ret;

	memset(p, 0, sizeof(*p));
	ret = copy_member(o, "prefix", p->text, sizeof(p->text), true);
	ret = ret ?: copy_member(o, "router", p->router, sizeof(p->router), true);
	ret = ret ?: copy_member(o, "dev", p->dev, sizeof(p->dev), true);
	if (ret || qos_parse_prefix(p->text, &p->family, p->addr, &p->plen))
		return -EINVAL;
	return 0;
}

json_object *qos_dom_router_json(const char *name)
{
	json_object *o = json_object_new_object();

	if (!o || qos_dom_json_add(o, "name", json_object_new_string(name))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

void qos_dom_ledger_free(struct qos_dom_ledger *l)
{
	free(l->e);
	memset(l, 0, sizeof(*l));
}

static json_object *entry_json(const struct qos_dom_entry *e)
{
	json_object *o = json_object_new_object();

	if (!o || qos_dom_json_add(o, "rate_bps", json_object_new_uint64(e->rate_bps)) ||
	    qos_dom_json_add(o, "burst_bytes", json_object_new_uint64(e->burst_bytes)) ||
	    qos_dom_json_add(o, "end_unix_ns", json_object_new_uint64(e->end_unix_ns))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *qos_dom_ledger_json(const struct qos_dom_ledger *l, const struct qos_resv_sum *s)
{
	json_object *o = json_object_new_object(), *m = json_object_new_object();
	size_t i;

	if (!o || qos_dom_json_add(o, "rate_bps", json_object_new_uint64(s->rate_bps)) ||
	    qos_dom_json_add(o, "burst_bytes", json_object_new_uint64(s->burst)) ||
	    qos_dom_json_add(o, "n", json_object_new_uint64(s->n)) || qos_dom_json_add(o, "entries", m)) {
		json_object_put(o);
		return NULL;
	}
	for (i = 0; i < l->n; i++) {
		if (qos_dom_json_add(m, l->e[i].id, entry_json(&l->e[i]))) {
			json_object_put(o);
			return NULL;
		}
	}
	return o;
}

int qos_dom_ledger_from_json(json_object *o, struct qos_dom_ledger *l)
{
	json_object *m;
	size_t n;

	memset(l, 0, sizeof(*l));
	if (!json_object_object_get_ex(o, "entries", &m) ||
	    !json_object_is_type(m, json_type_object))
		return -EINVAL;
	n = json_object_object_length(m);
	l->e = calloc(n ? n : 1, sizeof(*l->e));
	if (!l->e)
		return -ENOMEM;
	json_object_object_foreach(m, id, v) {
		struct qos_dom_entry *e = &l->e[l->n];

		if (strlen(id) >= sizeof(e->id) || !json_object_is_type(v, json_type_object)) {
			qos_dom_ledger_free(l);
			return -EINVAL;
		}
		memcpy(e->id, id, strlen(id) + 1);
		e->rate_bps = u64_member(v, "rate_bps");
		e->burst_bytes = u64_member(v, "burst_bytes");
		e->end_unix_ns = u64_member(v, "end_unix_ns");
		l->n++;
	}
	return 0;
}

struct qos_resv_sum qos_dom_ledger_live(struct qos_dom_ledger *l, uint64_t now)
{
	struct qos_resv_sum s = {};
	size_t i, k = 0;

	for (i = 0; i < l->n; i++) {
		if (l->e[i].end_unix_ns && l->e[i].end_unix_ns <= now)
			continue;
		l->e[k++] = l->e[i];
		s.rate_bps += l->e[i].rate_bps;
		s.burst += l->e[i].burst_bytes;
		s.n++;
	}
	l->n = k;
	return s;
}

int qos_dom_ledger_add(struct qos_dom_ledger *l, const struct qos_dom_entry *e)
{
	struct qos_dom_entry *p = realloc(l->e, (l->n + 1) * sizeof(*l->e));

	if (!p)
		return -ENOMEM;
	l->e = p;
	l->e[l->n++] = *e;
	return 0;
}

bool qos_dom_ledger_del(struct qos_dom_ledger *l, const char *id)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (strcmp(l->e[i].id, id))
			continue;
		l->e[i] = l->e[--l->n];
		return true;
	}
	return false;
}

int qos_domain_admit(const struct qos_dom_hop *hops, size_t n, struct qos_dom_ledger *l,
		     struct qos_resv_sum *s, const struct qos_resv_req *q, const char *id,
		     uint64_t end_unix_ns, uint64_t now, size_t *at)
{
	enum qos_resv_verdict v;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct qos_resv_class *c = &hops[i].ifc->cls;

		s[i] = qos_dom_ledger_live(&l[i], now);
		v = c->cap_bps ? qos_resv_admit(c, &s[i], q) : QOS_RESV_RATE;
		if (v != QOS_RESV_ADMIT) {
			*at = i;
			return v;
		}
	}
	for (i = 0; i < n; i++) {
		struct qos_dom_entry e = { .rate_bps = q->rate_bps,
					   .burst_bytes = q->burst + hops[i].ifc->cls.max_pkt,
					   .end_unix_ns = end_unix_ns };

		snprintf(e.id, sizeof(e.id), "%s", id);
		if (qos_dom_ledger_add(&l[i], &e))
			return -ENOMEM;
		qos_resv_sum_step(&s[i], &hops[i].ifc->cls, q, 1);
	}
	return QOS_RESV_ADMIT;
}
