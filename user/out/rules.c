// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `qosctl rule list`: the rules of a device with their hit counters.
 */
#include <arpa/inet.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "lib/names.h"
#include "out/policer.h"
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

/* The rule's own policer, its configuration and counters, in @o. */
static void police_json(json_object *o, const struct qos_police_report *rep,
			const char *const names[QOS_MAX_CLASSES])
{
	json_object *pol = qos_police_config_json(&rep->pol, names);
	json_object *st = qos_police_stats_json(rep);

	json_object_object_foreach(st, key, val)
		json_object_object_add(pol, key, json_object_get(val));
	json_object_put(st);
	json_object_object_add(o, "police", pol);
}

void qos_rules_print(FILE *f, struct qos_rules *rules, const struct qos_meta *meta,
		     const struct qos_progs *p, bool json)
{
	const char *names[QOS_MAX_CLASSES] = {};
	struct qos_police_report rep;
	char m[256], d[8], esc[QOS_ESC_LEN];
	size_t i;

	for (i = 0; i < meta->nclasses && i < QOS_MAX_CLASSES; i++)
		names[meta->classes[i].id & (QOS_MAX_CLASSES - 1)] = meta->classes[i].name;

	/* In the order the data path decides overlaps. No rules: no array,
	 * and qsort() must not be handed NULL. */
	if (rules->n)
		qsort(rules->r, rules->n, sizeof(*rules->r), rule_order);
	if (json) {
		json_object *a = json_object_new_array();

		for (i = 0; i < rules->n; i++) {
			const struct qos_rule *r = &rules->r[i];
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
			if (r->sport_lo || r->sport_hi != 0xffff) {
				json_object_object_add(o, "sport_min",
						       json_object_new_int(r->sport_lo));
				json_object_object_add(o, "sport_max",
						       json_object_new_int(r->sport_hi));
			}
			if (r->dport_lo || r->dport_hi != 0xffff) {
				json_object_object_add(o, "dport_min",
						       json_object_new_int(r->dport_lo));
				json_object_object_add(o, "dport_max",
						       json_object_new_int(r->dport_hi));
			}
			json_object_object_add(o, "class",
					       json_object_new_string(class_name(meta, r->class_id)));
			if (r->dscp >= 0)
				json_object_object_add(o, "set_dscp", json_object_new_int(r->dscp));
			if (r->policer && !qos_police_read(p, r->policer, &rep))
				police_json(o, &rep, names);
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
		for (i = 0; i < rules->n; i++) {
			const struct qos_rule *r = &rules->r[i];

			snprintf(d, sizeof(d), "%d", r->dscp);
			fprintf(f, "%-7u %-15s %5u %-10s %-8s %12llu %14llu  %s%s\n", r->id,
				r->name[0] ? qos_esc(r->name, esc, sizeof(esc)) : "-", r->prio,
				class_name(meta, r->class_id),
				r->dscp >= 0 ? d : "-", (unsigned long long)r->hits.packets,
				(unsigned long long)r->hits.bytes,
				qos_rule_fmt_match(r, m, sizeof(m)), r->profile ? " (profile)" : "");
			if (r->policer && !qos_police_read(p, r->policer, &rep)) {
				fprintf(f, "        ");
				qos_police_print_config(f, &rep.pol, names);
				qos_police_print_stats(f, &rep);
			}
		}
	}
}

