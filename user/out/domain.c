// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `qosctl domain` output (out/domain.h): every field once, through the
 * print layer, for text and JSON alike.
 */
#include <string.h>

#include "out/domain.h"

static json_object *member(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (o)
		json_object_object_get_ex(o, key, &v);
	return v;
}

static uint64_t u64_of(json_object *o, const char *key)
{
	json_object *v = member(o, key);

	return v ? json_object_get_uint64(v) : 0;
}

static const char *str_of(json_object *o, const char *key)
{
	json_object *v = member(o, key);

	return v ? json_object_get_string(v) : "";
}

void qos_out_domain_load(struct qos_pr *p, const char *path, const struct qos_load_res *r)
{
	qos_pr_open_object(p, NULL);
	qos_pr_string(p, QP_ANY, "file", "domain %s: ", path);
	qos_pr_bool(p, QP_JSON, "changed", NULL, !r->unchanged);
	if (r->unchanged)
		qos_pr_text(p, "unchanged");
	qos_pr_u64(p, r->unchanged ? QP_JSON : QP_ANY, "keys_written", "%llu keys written, ",
		   r->puts);
	qos_pr_u64(p, r->unchanged ? QP_JSON : QP_ANY, "keys_deleted", "%llu deleted",
		   r->dels);
	qos_pr_s64(p, QP_ANY, "revision", ", revision %lld", r->revision);
	qos_pr_nl(p);
	qos_pr_close_object(p);
}

/* The value of key @k of the reservation's args, "" if absent. */
static const char *arg_of(json_object *resv, const char *k)
{
	json_object *args = member(resv, "args");
	size_t i, n = args ? json_object_array_length(args) : 0;

	for (i = 0; i < n; i++) {
		json_object *pair = json_object_array_get_idx(args, i);

		if (!strcmp(json_object_get_string(json_object_array_get_idx(pair, 0)), k))
			return json_object_get_string(json_object_array_get_idx(pair, 1));
	}
	return "";
}

/* The status of router @r in @v, NULL if its agent is not alive. */
static json_object *status_of(const struct qos_dom_view *v, const char *r)
{
	return v ? member(v->status, r) : NULL;
}

/* Whether the element of array @key of @st named @name (by @field) has
 * @flag true; -1 if not listed. */
static int listed_flag(json_object *st, const char *key, const char *field, const char *name,
		       const char *flag)
{
	json_object *a = member(st, key);
	size_t i, n = a ? json_object_array_length(a) : 0;

	for (i = 0; i < n; i++) {
		json_object *x = json_object_array_get_idx(a, i);

		if (!strcmp(str_of(x, field), name))
			return json_object_get_boolean(member(x, flag));
	}
	return -1;
}

/* Whether hop @i (@hop) has what the reservation @id needs installed:
 * the per-flow rule at the edge, its interface's profile inside. */
static void hop_installed(struct qos_pr *p, const struct qos_dom_view *v, json_object *hop,
			  size_t i, const char *id)
{
	json_object *st = status_of(v, str_of(hop, "router"));
	int ok;

	if (!v)
		return;
	if (!st) {
		qos_pr_null(p, QP_ANY, "installed", " installed %s (agent not alive)");
		return;
	}
	ok = i == 0 ? listed_flag(st, "resv", "id", id, "installed") :
		      listed_flag(st, "ifaces", "dev", str_of(hop, "dev"), "applied");
	/* Inside the path there is no per-flow state: the hop is ready when
	 * its interface's profile is applied; the text says which. */
	qos_pr_bool(p, QP_ANY, "installed", i == 0 ? " rule installed %s" : " profile applied %s",
		    ok > 0);
}

static void resv_hops(struct qos_pr *p, json_object *resv, const struct qos_dom_view *v)
{
	json_object *hops = member(resv, "hops");
	size_t i, n = hops ? json_object_array_length(hops) : 0;

	qos_pr_open_array(p, "hops");
	for (i = 0; i < n; i++) {
		json_object *h = json_object_array_get_idx(hops, i);

		qos_pr_open_object(p, NULL);
		qos_pr_string(p, QP_ANY, "router", "  hop %s", str_of(h, "router"));
		qos_pr_string(p, QP_ANY, "dev", " dev %s:", str_of(h, "dev"));
		qos_pr_string(p, QP_ANY, "class", " class %s", str_of(h, "class"));
		qos_pr_rate(p, QP_ANY, "cap_bps", " admits %s", u64_of(h, "cap_bps"));
		qos_pr_rate(p, QP_ANY, "rate_bps", ", reserved %s", u64_of(h, "rate_bps"));
		qos_pr_u64(p, QP_ANY, "n", " by %llu", u64_of(h, "n"));
		qos_pr_size(p, QP_ANY, "burst_bytes", ", bursts %s", u64_of(h, "burst_bytes"));
		qos_pr_time(p, QP_ANY, "delay_ns", ", worst-case delay %s", u64_of(h, "delay_ns"));
		qos_pr_time(p, QP_ANY, "delay_bound_ns", " of %s", u64_of(h, "delay_bound_ns"));
		hop_installed(p, v, h, i, str_of(resv, "id"));
		qos_pr_nl(p);
		qos_pr_close_object(p);
	}
	qos_pr_close_array(p);
}

void qos_out_domain_resv(struct qos_pr *p, json_object *resv, const struct qos_dom_view *v)
{
	json_object *path = member(resv, "path");
	size_t i, n = path ? json_object_array_length(path) : 0;
	uint64_t end = u64_of(resv, "end_unix_ns");
	uint64_t now = v ? v->now_unix_ns : qos_unix_ns();

	qos_pr_open_object(p, NULL);
	qos_pr_string(p, QP_ANY, "id", "reservation %s:", str_of(resv, "id"));
	qos_pr_string(p, QP_ANY, "src", " src %s", arg_of(resv, "src"));
	qos_pr_string(p, QP_ANY, "dst", " dst %s", arg_of(resv, "dst"));
	qos_pr_rate(p, QP_ANY, "rate_bps", " rate %s", u64_of(resv, "rate_bps"));
	qos_pr_size(p, QP_ANY, "burst_bytes", " burst %s", u64_of(resv, "burst_bytes"));
	if (end) {
		qos_pr_u64(p, QP_JSON, "end_unix_ns", NULL, end);
		qos_pr_time(p, QP_TEXT, NULL, " ends in %s", end > now ? end - now : 0);
	} else
		qos_pr_null(p, QP_JSON, "end_unix_ns", NULL);
	if (!end)
		qos_pr_text(p, " no end");
	qos_pr_nl(p);
	qos_pr_text(p, "  path");
	qos_pr_open_array(p, "path");
	for (i = 0; i < n; i++) {
		json_object *h = json_object_array_get_idx(path, i);

		qos_pr_open_object(p, NULL);
		qos_pr_string(p, QP_ANY, "router", i ? " -> %s" : " %s", str_of(h, "router"));
		qos_pr_string(p, QP_ANY, "dev", " %s", str_of(h, "dev"));
		qos_pr_close_object(p);
	}
	qos_pr_close_array(p);
	qos_pr_time(p, QP_ANY, "delay_bound_ns", ", delay bound %s",
		    u64_of(resv, "delay_bound_ns"));
	qos_pr_nl(p);
	resv_hops(p, resv, v);
	qos_pr_close_object(p);
}

void qos_out_domain_resv_list(struct qos_pr *p, const struct qos_dom_view *v)
{
	size_t i, n = json_object_array_length(v->resv);

	qos_pr_open_object(p, NULL);
	qos_pr_s64(p, QP_JSON, "revision", NULL, v->revision);
	qos_pr_open_array(p, "reservations");
	for (i = 0; i < n; i++)
		qos_out_domain_resv(p, json_object_array_get_idx(v->resv, i), v);
	qos_pr_close_array(p);
	qos_pr_close_object(p);
}

static void status_ifaces(struct qos_pr *p, const struct qos_dom_view *v, const char *r,
			  json_object *st)
{
	size_t i;

	qos_pr_open_array(p, "interfaces");
	for (i = 0; i < v->d.nifs; i++) {
		const struct qos_dom_iface *f = &v->d.ifs[i];
		const struct qos_resv_sum *s = &v->sums[i];
		int applied = listed_flag(st, "ifaces", "dev", f->dev, "applied");

		if (strcmp(f->router, r))
			continue;
		qos_pr_open_object(p, NULL);
		qos_pr_string(p, QP_ANY, "dev", "  dev %s", f->dev);
		qos_pr_string(p, QP_ANY, "profile", " %s", f->profile);
		qos_pr_rate(p, QP_ANY, "rate_bps", " at %s", f->rate_bps);
		if (f->peer[0])
			qos_pr_string(p, QP_ANY, "peer", " to %s", f->peer);
		qos_pr_rate(p, QP_ANY, "admitted_bps", ": admits %s", f->cls.cap_bps);
		qos_pr_rate(p, QP_ANY, "reserved_bps", ", reserved %s", s->rate_bps);
		qos_pr_u64(p, QP_ANY, "reservations", " by %llu", s->n);
		qos_pr_rate(p, QP_ANY, "free_bps", ", free %s",
			    f->cls.cap_bps > s->rate_bps ? f->cls.cap_bps - s->rate_bps : 0);
		qos_pr_time(p, QP_ANY, "delay_ns", ", worst-case delay %s",
			    qos_resv_delay_ns(&f->cls, s));
		if (applied < 0)
			qos_pr_null(p, QP_ANY, "applied", ", applied %s");
		else
			qos_pr_bool(p, QP_ANY, "applied", ", applied %s", applied);
		qos_pr_nl(p);
		qos_pr_close_object(p);
	}
	qos_pr_close_array(p);
}

/* The SLA verdicts an agent reports, as it reports them. */
static void status_sla(struct qos_pr *p, json_object *st)
{
	json_object *sla = member(st, "sla");
	size_t i, n = sla ? json_object_array_length(sla) : 0;

	if (!sla)
		return;
	qos_pr_open_array(p, "sla");
	for (i = 0; i < n; i++) {
		json_object *x = json_object_array_get_idx(sla, i);

		qos_pr_open_object(p, NULL);
		qos_pr_string(p, QP_ANY, "name", "  sla %s", str_of(x, "name"));
		qos_pr_string(p, QP_ANY, "verdict", ": %s", str_of(x, "verdict"));
		qos_pr_nl(p);
		qos_pr_close_object(p);
	}
	qos_pr_close_array(p);
}

static void status_router(struct qos_pr *p, const struct qos_dom_view *v, const char *r)
{
	json_object *st = status_of(v, r);
	const char *err = str_of(st, "error");

	qos_pr_open_object(p, NULL);
	qos_pr_string(p, QP_ANY, "router", "router %s:", r);
	qos_pr_bool(p, QP_ANY, "alive", " agent alive %s", st != NULL);
	if (st) {
		qos_pr_s64(p, QP_ANY, "desired_revision", ", desired revision %lld",
			   u64_of(st, "desired_revision"));
		qos_pr_s64(p, QP_ANY, "applied_revision", ", applied %lld",
			   u64_of(st, "applied_revision"));
		if (*err)
			qos_pr_string(p, QP_ANY, "error", ", error: %s", err);
		else
			qos_pr_null(p, QP_JSON, "error", NULL);
		if (member(st, "drift"))
			qos_pr_json_value(p, "drift", member(st, "drift"));
	}
	qos_pr_nl(p);
	status_ifaces(p, v, r, st);
	status_sla(p, st);
	qos_pr_close_object(p);
}

void qos_out_domain_status(struct qos_pr *p, const struct qos_dom_view *v)
{
	size_t i;

	qos_pr_open_object(p, NULL);
	qos_pr_s64(p, QP_ANY, "revision", "domain at etcd revision %lld", v->revision);
	qos_pr_u64(p, QP_JSON, "now_unix_ns", NULL, v->now_unix_ns);
	qos_pr_nl(p);
	qos_pr_open_array(p, "routers");
	for (i = 0; i < v->d.nrouters; i++)
		status_router(p, v, v->d.routers[i]);
	qos_pr_close_array(p);
	qos_pr_open_array(p, "reservations");
	for (i = 0; i < json_object_array_length(v->resv); i++)
		qos_out_domain_resv(p, json_object_array_get_idx(v->resv, i), v);
	qos_pr_close_array(p);
	qos_pr_close_object(p);
}
