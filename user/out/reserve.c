// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `qosctl reserve list`: the admission arithmetic of the reserve-class
 * (model/reserve.c) and the reservations, text and JSON from the same
 * calls (out/print.h).
 */
#include <errno.h>

#include "lib/names.h"
#include "model/reserve.h"
#include "out/print.h"
#include "out/reserve.h"

/* The class: what it admits, what is reserved, the delay bound. */
static void class_print(struct qos_pr *p, const char *dev, const struct qos_meta *meta,
			const struct qos_resv_class *c, const struct qos_resv_sum *s)
{
	uint64_t cap = meta->reserve_cap_bps, free_bps = cap > s->rate_bps ? cap - s->rate_bps : 0;

	qos_pr_string(p, QP_ANY, "dev", "dev %s: ", dev);
	if (meta->reserve_class)
		qos_pr_string(p, QP_ANY, "class", "class %s ",
			      qos_meta_class_name(meta, meta->reserve_class) ?: "?");
	else
		qos_pr_null(p, QP_JSON, "class", NULL);
	qos_pr_rate(p, QP_TEXT, "admits_bps", "admits %s ", cap);
	qos_pr_rate(p, QP_ANY, "ceil_bps", "(ceiling %s ", meta->reserve_ceil_bps);
	qos_pr_u32(p, QP_ANY, "headroom_pct", "less %u%%): ", meta->reserve_headroom_pct);
	qos_pr_rate(p, QP_JSON, "admits_bps", NULL, cap);
	qos_pr_rate(p, QP_ANY, "reserved_bps", "%s reserved, ", s->rate_bps);
	qos_pr_rate(p, QP_ANY, "free_bps", "%s free\n", free_bps);
	qos_pr_u64(p, QP_ANY, "delay_bound_us", "delay bound %llu us, ", c->delay_ns / 1000);
	qos_pr_u64(p, QP_JSON, "queue_bytes", NULL, qos_resv_queue_bytes(c));
	qos_pr_u32(p, QP_JSON, "max_packet_bytes", NULL, c->max_pkt);
	qos_pr_u64(p, QP_JSON, "reserved_burst_bytes", NULL, s->burst);
	qos_pr_u64(p, QP_ANY, "worst_delay_us", "worst case of the admitted bursts %llu us\n",
		   qos_resv_delay_ns(c, s) / 1000);
}

static void resv_print(struct qos_pr *p, const struct qos_rule *r, uint64_t now)
{
	char match[256], left[32], esc[QOS_ESC_LEN];
	bool live = qos_reserve_live(r, now);

	qos_rule_fmt_match(r, match, sizeof(match));
	qos_pr_open_object(p, NULL);
	qos_pr_string(p, QP_JSON, "id", NULL, r->name);
	/* Names are checked where they enter, but a rule map is anyone's
	 * with CAP_SYS_ADMIN: never a raw byte to a terminal. */
	qos_pr_text(p, "%-12s ", qos_esc(r->name, esc, sizeof(esc)));
	qos_pr_string(p, QP_JSON, "match", NULL, match);
	qos_pr_rate(p, QP_ANY, "rate_bps", "%-10s ", r->police_bps);
	qos_pr_u64(p, QP_ANY, "burst_bytes", "%-8llu ", r->police_burst);
	qos_pr_u64_opt(p, QP_JSON, "expires_in_s", NULL, r->expires_ns > now ?
		       (r->expires_ns - now) / 1000000000ULL : 0, r->expires_ns);
	if (!r->expires_ns)
		snprintf(left, sizeof(left), "never");
	else if (!live)
		snprintf(left, sizeof(left), "expired");
	else
		snprintf(left, sizeof(left), "%llus",
			 (unsigned long long)((r->expires_ns - now) / 1000000000ULL));
	qos_pr_text(p, "%-9s ", left);
	qos_pr_bool(p, QP_JSON, "expired", NULL, !live);
	qos_pr_u64(p, QP_ANY, "packets", "%14llu ", r->hits.packets);
	qos_pr_u64(p, QP_ANY, "bytes", "%16llu  ", r->hits.bytes);
	qos_pr_text(p, "%s\n", match);
	qos_pr_close_object(p);
}

int qos_reserve_print(FILE *f, bool json, const char *dev, const struct qos_meta *meta,
		      const struct qos_rules *rules, uint64_t now)
{
	struct qos_resv_class c = qos_resv_class_of(meta);
	struct qos_resv_sum s = qos_reserve_sum(rules, &c, now);
	struct qos_pr *p = qos_pr_open(f, json);
	size_t i;

	if (!p)
		return -ENOMEM;
	if (!meta->reserve_class && !json) {
		qos_pr_text(p, "dev %s: profile %s takes no reservations (no reserve-class)\n",
			    dev, meta->profile);
		return qos_pr_close(p);
	}
	class_print(p, dev, meta, &c, &s);
	qos_pr_text(p, "%-12s %-10s %-8s %-9s %14s %16s  %s\n", "id", "rate", "burst", "expires",
		    "packets", "bytes", "match");
	qos_pr_open_array(p, "reservations");
	for (i = 0; i < rules->n; i++)
		if (rules->r[i].reserve)
			resv_print(p, &rules->r[i], now);
	qos_pr_close_array(p);
	return qos_pr_close(p);
}
