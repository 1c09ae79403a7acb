// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `qosctl rule list`: the rules of a device with their hit counters, read
 * first (qos_rules_view_read()), then printed, text and JSON from the same
 * calls (out/print.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/names.h"
#include "out/policer.h"
#include "out/print.h"
#include "out/rules.h"

static const char *class_name(const struct qos_meta *meta, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < meta->nclasses && i < QOS_MAX_CLASSES; i++)
		if (meta->classes[i].id == id)
			return meta->classes[i].name;
	return "?";
}

static int rule_order(const void *a, const void *b)
{
	const struct qos_rule *x = a, *y = b;
	uint64_t rx = qos_rule_rank(x), ry = qos_rule_rank(y);

	return rx < ry ? -1 : rx > ry;
}

int qos_rules_view_read(struct qos_rules_view *v, struct qos_rules *rules,
			const struct qos_meta *meta, const struct qos_progs *p)
{
	size_t i;

	v->rules = rules;
	v->meta = meta;
	v->pol = calloc(rules->n ?: 1, sizeof(*v->pol));
	if (!v->pol)
		return -ENOMEM;
	/* No rules: qsort() must not be handed NULL. */
	if (rules->n)
		qsort(rules->r, rules->n, sizeof(*rules->r), rule_order);
	for (i = 0; i < rules->n; i++)
		if (rules->r[i].policer)
			v->pol[i].set = !qos_police_read(p, rules->r[i].policer, &v->pol[i]);
	return 0;
}

void qos_rules_view_free(struct qos_rules_view *v)
{
	free(v->pol);
	v->pol = NULL;
}

static void prefix_print(struct qos_pr *p, const char *key, int family, const uint8_t *addr,
			 unsigned int len)
{
	char buf[INET6_ADDRSTRLEN + 8];

	inet_ntop(family, addr, buf, sizeof(buf));
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%u", len);
	qos_pr_string(p, QP_JSON, key, NULL, buf);
}

/* The match as JSON members; the text has it as one string at the end. */
static void match_print(struct qos_pr *p, const struct qos_rule *r)
{
	qos_pr_string(p, QP_JSON, "family", NULL, r->family == AF_INET ? "ipv4" :
		      r->family == AF_INET6 ? "ipv6" : "any");
	if (r->has_src)
		prefix_print(p, "src", r->family, r->src, r->src_len);
	if (r->has_dst)
		prefix_print(p, "dst", r->family, r->dst, r->dst_len);
	if (r->fl_mask) {
		qos_pr_u32(p, QP_JSON, "flowlabel", NULL, r->flowlabel);
		qos_pr_u32(p, QP_JSON, "flowlabel_mask", NULL, r->fl_mask);
	}
	if (r->proto >= 0)
		qos_pr_u32(p, QP_JSON, "proto", NULL, r->proto);
	if (r->sport_lo || r->sport_hi != 0xffff) {
		qos_pr_u32(p, QP_JSON, "sport_min", NULL, r->sport_lo);
		qos_pr_u32(p, QP_JSON, "sport_max", NULL, r->sport_hi);
	}
	if (r->dport_lo || r->dport_hi != 0xffff) {
		qos_pr_u32(p, QP_JSON, "dport_min", NULL, r->dport_lo);
		qos_pr_u32(p, QP_JSON, "dport_max", NULL, r->dport_hi);
	}
}

/* The rule's own policer: its configuration and counters in one object;
 * in text, two lines under the rule's. */
static void police_print(struct qos_pr *p, const struct qos_police_report *rep,
			 const char *const names[QOS_MAX_CLASSES])
{
	qos_pr_open_object(p, "police");
	qos_pr_text(p, "        ");
	qos_police_config_print(p, &rep->pol, names);
	qos_police_stats_print(p, rep);
	qos_pr_close_object(p);
}

static void rule_print(struct qos_pr *p, const struct qos_rules_view *v, size_t i,
		       const char *const names[QOS_MAX_CLASSES])
{
	const struct qos_rule *r = &v->rules->r[i];
	bool json = qos_pr_json(p), pol = v->pol[i].set;
	char m[256], esc[QOS_ESC_LEN];

	qos_pr_open_object(p, NULL);
	qos_pr_u32(p, QP_ANY, "id", "%-7u ", r->id);
	qos_pr_string(p, QP_JSON, "name", NULL, r->name);
	qos_pr_text(p, "%-15s ", r->name[0] ? qos_esc(r->name, esc, sizeof(esc)) : "-");
	qos_pr_u32(p, QP_ANY, "priority", "%5u ", r->prio);
	match_print(p, r);
	qos_pr_string(p, QP_ANY, "class", "%-10s ", class_name(v->meta, r->class_id));
	if (r->dscp >= 0)
		qos_pr_u32(p, QP_ANY, "set_dscp", "%-8u ", r->dscp);
	else
		qos_pr_text(p, "%-8s ", "-");
	if (pol && json)
		police_print(p, &v->pol[i], names);
	qos_pr_string(p, QP_JSON, "origin", NULL, r->profile ? "profile" : "live");
	qos_pr_u64(p, QP_ANY, "packets", "%12llu ", r->hits.packets);
	qos_pr_u64(p, QP_ANY, "bytes", "%14llu  ", r->hits.bytes);
	qos_pr_text(p, "%s%s\n", qos_rule_fmt_match(r, m, sizeof(m)),
		    r->profile ? " (profile)" : "");
	if (pol && !json)
		police_print(p, &v->pol[i], names);
	qos_pr_close_object(p);
}

int qos_rules_print(FILE *f, const struct qos_rules_view *v, bool json)
{
	const char *names[QOS_MAX_CLASSES] = {};
	const struct qos_meta *meta = v->meta;
	struct qos_pr *p = qos_pr_open(f, json);
	size_t i;

	if (!p)
		return -ENOMEM;
	for (i = 0; i < meta->nclasses && i < QOS_MAX_CLASSES; i++)
		names[meta->classes[i].id & (QOS_MAX_CLASSES - 1)] = meta->classes[i].name;
	qos_pr_text(p, "%-7s %-15s %5s %-10s %-8s %12s %14s  %s\n", "id", "name", "prio",
		    "class", "set-dscp", "packets", "bytes", "match");
	qos_pr_open_array(p, NULL);
	for (i = 0; i < v->rules->n; i++)
		rule_print(p, v, i, names);
	qos_pr_close_array(p);
	return qos_pr_close(p);
}
