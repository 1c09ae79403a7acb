// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The router agent's desired state, kept and persisted, and its
 * reconciliation through the one installer (Documentation/domain.rst,
 * "The agent"). Level-triggered: whatever the event, every declared device
 * is compared with the whole desired state, and only a device that differs
 * is changed. A re-apply of a changed profile and a change of reservations
 * keep the programs that run (txn/install.c, pick_progs()): no verifier
 * run, the agent needs to hold nothing for that.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <netlink/route/route.h>

#include "domain/agent.h"
#include "kernel/dev.h"
#include "kernel/rulemap.h"
#include "lib/file.h"
#include "lib/json.h"
#include "lib/names.h"
#include "lib/util.h"
#include "model/profile.h"
#include "model/reserve.h"
#include "txn/txn.h"

/* A desired-state file is a router's keys: far below this. */
#define AGENT_FILE_MAX	(64U << 20)
/* An installed reservation whose expiry is this close to the desired one is
 * the same (the two clocks are read a moment apart). */
#define AGENT_END_SLACK_NS	(2ULL * 1000000000ULL)

void qos_agent_desired_init(struct qos_agent_desired *d)
{
	memset(d, 0, sizeof(*d));
	d->ifs = json_object_new_object();
	d->edge = json_object_new_object();
	d->transit = json_object_new_object();
}

void qos_agent_desired_free(struct qos_agent_desired *d)
{
	json_object_put(d->ifs);
	json_object_put(d->edge);
	json_object_put(d->transit);
	memset(d, 0, sizeof(*d));
}

void qos_agent_desired_clear(struct qos_agent_desired *d)
{
	qos_agent_desired_free(d);
	qos_agent_desired_init(d);
}

int qos_agent_desired_set(struct qos_agent_desired *d, const char *rel, const char *val,
			  char *err, size_t errlen)
{
	json_object *to, *v;
	const char *name;

	if (!strncmp(rel, "iface/", 6))
		to = d->ifs;
	else if (!strncmp(rel, "resv/", 5))
		to = d->edge;
	else if (!strncmp(rel, "transit/", 8))
		to = d->transit;
	else
		return 1;
	name = strchr(rel, '/') + 1;
	if (!qos_name_ok(name, QOS_NAME_MAX)) {
		snprintf(err, errlen, "key %s: not a name (%s)", rel, QOS_NAME_CHARS);
		return -EINVAL;
	}
	if (!val) {
		json_object_object_del(to, name);
		return 0;
	}
	v = json_tokener_parse(val);
	if (!json_object_is_type(v, json_type_object)) {
		snprintf(err, errlen, "key %s: its value is not a JSON object", rel);
		json_object_put(v);
		return -EINVAL;
	}
	json_object_object_add(to, name, v);
	return 0;
}

static const char *field(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static int64_t field_i64(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static int state_name(const char *router, char *name, size_t len, char *err, size_t errlen)
{
	if (!qos_name_ok(router, QOS_NAME_MAX)) {
		snprintf(err, errlen, "router '%s': not a name (%s)", router, QOS_NAME_CHARS);
		return -EINVAL;
	}
	snprintf(name, len, "agent-%s.json", router);
	return 0;
}

int qos_agent_save(const char *router, const struct qos_agent_desired *d, char *err,
		   size_t errlen)
{
	json_object *o = json_object_new_object();
	char name[QOS_NAME_MAX + 16], cid[24];
	const char *s;
	int dir, ret;

	ret = state_name(router, name, sizeof(name), err, errlen);
	if (ret)
		goto out;
	dir = qos_private_dir_open(QOS_STATE_DIR, err, errlen);
	if (dir < 0) {
		ret = dir;
		goto out;
	}
	snprintf(cid, sizeof(cid), "%llu", (unsigned long long)d->cluster_id);
	json_object_object_add(o, "router", json_object_new_string(router));
	json_object_object_add(o, "revision", json_object_new_int64(d->revision));
	json_object_object_add(o, "cluster_id", json_object_new_string(cid));
	json_object_object_add(o, "interfaces", json_object_get(d->ifs));
	json_object_object_add(o, "edge", json_object_get(d->edge));
	json_object_object_add(o, "transit", json_object_get(d->transit));
	s = qos_json_text(o);
	ret = s ? qos_file_replace(dir, name, s, strlen(s), 0600) : -ENOMEM;
	if (ret)
		snprintf(err, errlen, "%s/%s: %s", QOS_STATE_DIR, name, strerror(-ret));
	close(dir);
out:
	json_object_put(o);
	return ret;
}

/* The file @name of the checked directory @dir: regular, ours, read by no
 * one else, never through a symlink. */
static int read_state(int dir, const char *name, void **buf, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	int fd, ret;

	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s/%s: %s", QOS_STATE_DIR, name, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		snprintf(err, errlen, "%s/%s: not a regular file of uid %u with mode 0600: ignored",
			 QOS_STATE_DIR, name, geteuid());
		close(fd);
		return -EPERM;
	}
	ret = qos_file_read_fd(fd, buf, len, AGENT_FILE_MAX);
	if (ret)
		snprintf(err, errlen, "%s/%s: %s", QOS_STATE_DIR, name, strerror(-ret));
	close(fd);
	return ret;
}

static int parse_state(const char *name, const char *buf, struct qos_agent_desired *d, char *err,
		       size_t errlen)
{
	json_object *o = json_tokener_parse(buf), *ifs, *edge, *transit;
	const char *cid;

	if (!json_object_object_get_ex(o, "interfaces", &ifs) ||
	    !json_object_object_get_ex(o, "edge", &edge) ||
	    !json_object_is_type(ifs, json_type_object) ||
	    !json_object_is_type(edge, json_type_object)) {
		snprintf(err, errlen, "%s/%s: not an agent's state: ignored", QOS_STATE_DIR, name);
		json_object_put(o);
		return -EINVAL;
	}
	qos_agent_desired_free(d);
	d->ifs = json_object_get(ifs);
	d->edge = json_object_get(edge);
	d->transit = json_object_object_get_ex(o, "transit", &transit) &&
		     json_object_is_type(transit, json_type_object) ?
		     json_object_get(transit) : json_object_new_object();
	d->revision = field_i64(o, "revision");
	cid = field(o, "cluster_id");
	d->cluster_id = cid ? strtoull(cid, NULL, 10) : 0;
	json_object_put(o);
	return 0;
}

int qos_agent_load(const char *router, struct qos_agent_desired *d, char *err, size_t errlen)
{
	char name[QOS_NAME_MAX + 16];
	void *buf = NULL;
	size_t len;
	int dir, ret;

	ret = state_name(router, name, sizeof(name), err, errlen);
	if (ret)
		return ret;
	dir = qos_private_dir_open(QOS_STATE_DIR, err, errlen);
	if (dir < 0)
		return dir;
	ret = read_state(dir, name, &buf, &len, err, errlen);
	close(dir);
	if (!ret)
		ret = parse_state(name, buf, d, err, errlen);
	free(buf);
	return ret;
}

void qos_agent_result_free(struct qos_agent_result *r)
{
	json_object_put(r->ifs);
	json_object_put(r->resv);
	json_object_put(r->drift);
	memset(r, 0, sizeof(*r));
}

int64_t qos_agent_now_unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The value of key @key in @v's "args" ([[key, value], ...]), or NULL. */
static const char *arg(json_object *v, const char *key)
{
	json_object *args, *kv;
	size_t i;

	if (!json_object_object_get_ex(v, "args", &args) ||
	    !json_object_is_type(args, json_type_array))
		return NULL;
	for (i = 0; i < json_object_array_length(args); i++) {
		kv = json_object_array_get_idx(args, i);
		if (json_object_array_length(kv) == 2 &&
		    !strcmp(json_object_get_string(json_object_array_get_idx(kv, 0)) ?: "", key))
			return json_object_get_string(json_object_array_get_idx(kv, 1));
	}
	return NULL;
}

int64_t qos_agent_next_end(const struct qos_agent_desired *d, int64_t now)
{
	int64_t next = 0;

	json_object_object_foreach(d->edge, id, v) {
		int64_t end = field_i64(v, "end_unix_ns");

		(void)id;
		if (end > now && (!next || end < next))
			next = end;
	}
	return next;
}

/* Reservation @v (id @id) as a rule of @meta's reservation class, its
 * expiry on the boot-time clock from its end time. 1: expired. */
static int resv_rule(const char *id, json_object *v, const struct qos_meta *meta,
		     struct qos_rule *r, char *err, size_t errlen)
{
	struct qos_reserve_req q = {};
	int64_t end = field_i64(v, "end_unix_ns"), now = qos_agent_now_unix_ns();
	json_object *args, *kv;
	const char *key;
	char msg[256];
	size_t i;

	if (end && end <= now)
		return 1;
	qos_rule_init(&q.r);
	if (!json_object_object_get_ex(v, "args", &args) ||
	    !json_object_is_type(args, json_type_array)) {
		snprintf(err, errlen, "reservation %s: no \"args\"", id);
		return -EINVAL;
	}
	for (i = 0; i < json_object_array_length(args); i++) {
		const char *k, *s;

		kv = json_object_array_get_idx(args, i);
		k = json_object_get_string(json_object_array_get_idx(kv, 0));
		s = json_object_get_string(json_object_array_get_idx(kv, 1));
		if (json_object_array_length(kv) != 2 || !k || !s) {
			snprintf(err, errlen, "reservation %s: args[%zu]: not [key, value]", id, i);
			return -EINVAL;
		}
		if (qos_reserve_req_set(&q, k, s, msg, sizeof(msg))) {
			snprintf(err, errlen, "reservation %s: %s", id, msg);
			return -EINVAL;
		}
	}
	snprintf(q.r.name, sizeof(q.r.name), "%s", id);
	qos_reserve_bind(&q.r, meta);
	if (qos_rule_check(&q.r, &key, msg, sizeof(msg))) {
		snprintf(err, errlen, "reservation %s: %s: %s", id, key, msg);
		return -EINVAL;
	}
	q.r.expires_ns = end ? qos_boottime_ns() + (uint64_t)(end - now) : 0;
	*r = q.r;
	return 0;
}

static bool same_end(uint64_t a, uint64_t b)
{
	if (!a || !b)
		return a == b;
	return (a > b ? a - b : b - a) <= AGENT_END_SLACK_NS;
}

/* The installed reservation that is @want (found by its name in @x, the
 * index of the device's rules), or NULL. */
static const struct qos_rule *installed(const struct qos_resv_index *x,
					const struct qos_rule *want, uint64_t now)
{
	const struct qos_rule *r = qos_resv_index_find(x, want->name);

	if (r && r->reserve && qos_reserve_live(r, now) && qos_rule_same(r, want) &&
	    same_end(r->expires_ns, want->expires_ns))
		return r;
	return NULL;
}

static void resv_mark(struct qos_agent_result *res, const char *id, bool ok, const char *why)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "installed", json_object_new_boolean(ok));
	if (why)
		json_object_object_add(o, "error", json_object_new_string(why));
	json_object_object_add(res->resv, id, o);
}

/*
 * @next: the rules of @dev that are not reservations, then the edge
 * reservations of @d on it (an installed one kept as it is, with its id and
 * counters). Returns how many differ from what runs (0: nothing to do).
 */
static int resv_next(const struct qos_agent_desired *d, struct qos_dev *dev,
		     const struct qos_rules *cur, struct qos_rules *next,
		     struct qos_agent_result *res)
{
	uint64_t now = qos_boottime_ns();
	size_t i, have_n = 0, kept = 0, added = 0;
	struct qos_resv_index x;
	char err[512];
	int ret;

	ret = qos_resv_index_init(&x, cur);
	for (i = 0; i < cur->n && !ret; i++) {
		if (!cur->r[i].reserve)
			ret = qos_rules_add(next, &cur->r[i]);
		/* Expired ones too: they go with the next change. */
		have_n += cur->r[i].reserve;
	}
	json_object_object_foreach(d->edge, id, v) {
		const char *on = field(v, "dev");
		const struct qos_rule *have;
		struct qos_rule r;
		int bad;

		if (ret || !on || strcmp(on, dev->name))
			continue;
		bad = resv_rule(id, v, &dev->cfg.meta, &r, err, sizeof(err));
		if (bad) {
			if (bad < 0)
				resv_mark(res, id, false, err);
			continue;
		}
		have = installed(&x, &r, now);
		kept += !!have;
		added += !have;
		ret = qos_rules_add(next, have ?: &r);
	}
	qos_resv_index_free(&x);
	return ret ?: (int)(have_n - kept + added);
}

/* The reservations of @d on @dev (opened and locked), made what runs. */
static int resv_sync(const struct qos_agent_desired *d, struct qos_dev *dev,
		     struct qos_agent_result *res, char *err, size_t errlen)
{
	struct qos_rule_maps m = qos_rule_maps_of(&dev->cur);
	struct qos_rules cur = {}, next = {};
	int ret, diff;
	size_t i;

	ret = qos_rules_read(&m, &cur, false);
	if (ret) {
		snprintf(err, errlen, "dev %s: reading the rules: %s", dev->name, strerror(-ret));
		return ret;
	}
	diff = resv_next(d, dev, &cur, &next, res);
	ret = diff < 0 ? diff : 0;
	if (diff > 0) {
		ret = qos_reserve_fit(&next, &dev->cfg.meta, dev->name, "domain reservations",
				      err, errlen);
		ret = ret ?: qos_txn_rules(dev, &next, err, errlen);
		res->changes += !ret;
	}
	for (i = 0; i < next.n; i++)
		if (next.r[i].reserve)
			resv_mark(res, next.r[i].name, !ret, ret ? err : NULL);
	qos_rules_free(&cur);
	qos_rules_free(&next);
	return ret;
}

/* Interface @name to run profile @want at its rate; then its reservations. */
static int dev_sync(const struct qos_agent_desired *d, const char *name, json_object *want,
		    struct qos_agent_result *res, char *err, size_t errlen)
{
	const char *profile = field(want, "profile"), *rate = field(want, "rate");
	uint64_t bps = (uint64_t)field_i64(want, "rate_bps");
	const struct qos_meta *m;
	struct qos_dev dev;
	int ret;

	if (!profile || (!bps && (!rate || qos_parse_rate(rate, 0, &bps)))) {
		snprintf(err, errlen, "iface/%s: needs \"profile\" and \"rate_bps\"", name);
		return -EINVAL;
	}
	ret = qos_txn_open(&dev, name, 0, err, errlen);
	if (ret)
		return ret;
	m = &dev.cfg.meta;
	if (!dev.applied || !dev.have_cfg || strcmp(m->profile, profile) || m->rate_bps != bps) {
		ret = qos_txn_apply(&dev, profile, bps, 0, NULL, QOS_QUEUES_PROFILE, QOS_TCX_KEEP,
				    0, err, errlen);
		res->changes += !ret;
	}
	/* A refused profile leaves the one that runs, which may well take
	 * the reservations: they are kept in step all the same. */
	if (dev.applied && dev.have_cfg) {
		char why[512];
		int r2 = resv_sync(d, &dev, res, ret ? why : err, ret ? sizeof(why) : errlen);

		ret = ret ?: r2;
	}
	qos_txn_close(&dev);
	return ret;
}

int qos_agent_reconcile(const struct qos_agent_desired *d, struct qos_agent_result *res)
{
	int first = 0;

	memset(res, 0, sizeof(*res));
	res->ifs = json_object_new_object();
	res->resv = json_object_new_object();
	json_object_object_foreach(d->ifs, dev, want) {
		json_object *o = json_object_new_object();
		char err[512] = "";
		int ret = dev_sync(d, dev, want, res, err, sizeof(err));

		json_object_object_add(o, "applied", json_object_new_boolean(!ret));
		if (ret) {
			json_object_object_add(o, "error", json_object_new_string(err));
			if (!first)
				snprintf(res->last_error, sizeof(res->last_error), "%s", err);
			first = first ?: ret;
		}
		json_object_object_add(res->ifs, dev, o);
	}
	/* Reservations on a device not declared here are not installed. */
	json_object_object_foreach(d->edge, id, v) {
		if (!json_object_object_get_ex(res->resv, id, NULL))
			resv_mark(res, id, false, field_i64(v, "end_unix_ns") > 0 &&
				  field_i64(v, "end_unix_ns") <= qos_agent_now_unix_ns() ? "expired" :
				  "its device is not declared on this router");
	}
	return first;
}

/*
 * The device the kernel's route lookup (RTM_GETROUTE) sends packets to
 * @dst out of, for an address in the prefix: its ifindex, or -errno.
 */
static int route_oif(struct nl_sock *sk, const char *dst)
{
	struct rtnl_route *route = NULL;
	struct rtnl_nexthop *nh;
	struct nl_addr *a;
	uint8_t addr[16], plen;
	int family, oif;

	if (qos_parse_prefix(dst, &family, addr, &plen))
		return -EINVAL;
	/* A host inside the prefix, not its first address: on a router that
	 * is IPv6's subnet-router anycast address, which routes to lo. */
	if (plen < (family == AF_INET ? 32 : 128))
		addr[(family == AF_INET ? 4 : 16) - 1] |= 1;
	a = nl_addr_build(family, addr, family == AF_INET ? 4 : 16);
	if (!a)
		return -ENOMEM;
	oif = rtnl_route_lookup(sk, a, &route);
	nl_addr_put(a);
	if (oif < 0)
		return -EHOSTUNREACH;
	nh = rtnl_route_get_nnexthops(route) ? rtnl_route_nexthop_n(route, 0) : NULL;
	oif = nh ? rtnl_route_nh_get_ifindex(nh) : -ENOENT;
	rtnl_route_put(route);
	return oif;
}

static void drift_add(struct qos_agent_result *res, const char *id, const char *dev, int oif)
{
	json_object *o = json_object_new_object();
	char name[IF_NAMESIZE];

	json_object_object_add(o, "id", json_object_new_string(id));
	json_object_object_add(o, "dev", json_object_new_string(dev));
	json_object_object_add(o, "route_dev", oif > 0 && if_indextoname(oif, name) ?
			       json_object_new_string(name) : NULL);
	json_object_array_add(res->drift, o);
}

/* Drift of the reservations of @by_id; of installed ones only if @installed_only. */
static void drift_of(struct nl_sock *sk, json_object *by_id, bool installed_only,
		     struct qos_agent_result *res)
{
	json_object_object_foreach(by_id, id, v) {
		const char *dst = arg(v, "dst"), *dev = field(v, "dev");
		json_object *o = NULL;
		int oif;

		if (!dst || !dev)
			continue;
		json_object_object_get_ex(res->resv, id, &o);
		if (installed_only &&
		    (!o || !json_object_get_boolean(json_object_object_get(o, "installed"))))
			continue;
		oif = route_oif(sk, dst);
		/* No route at all is drift too: the flow goes nowhere. */
		if (installed_only)
			json_object_object_add(o, "drift", json_object_new_boolean(
				oif != (int)if_nametoindex(dev)));
		if (oif != (int)if_nametoindex(dev))
			drift_add(res, id, dev, oif);
	}
}

void qos_agent_drift(const struct qos_agent_desired *d, struct qos_agent_result *res)
{
	struct nl_sock *sk = nl_socket_alloc();

	json_object_put(res->drift);
	res->drift = json_object_new_array();
	if (!sk || nl_connect(sk, NETLINK_ROUTE)) {
		nl_socket_free(sk);
		return;
	}
	drift_of(sk, d->edge, true, res);
	drift_of(sk, d->transit, false, res);
	nl_socket_free(sk);
}
