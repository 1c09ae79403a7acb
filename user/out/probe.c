// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `probe send` results and `probe reflect` counts, text and JSON from the
 * same calls (out/print.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "lib/json.h"

#include "out/print.h"
#include "out/probe.h"

static void dist_print(struct qos_pr *p, const char *key, const struct qos_probe_dist *d)
{
	qos_pr_open_object(p, key);
	qos_pr_u32(p, QP_JSON, "samples", NULL, d->n);
	qos_pr_s64(p, QP_JSON, "min_ns", NULL, d->min);
	qos_pr_s64(p, QP_JSON, "p50_ns", NULL, d->p50);
	qos_pr_s64(p, QP_JSON, "p90_ns", NULL, d->p90);
	qos_pr_s64(p, QP_JSON, "p99_ns", NULL, d->p99);
	qos_pr_s64(p, QP_JSON, "max_ns", NULL, d->max);
	qos_pr_double(p, QP_JSON, "mean_ns", NULL, d->mean);
	qos_pr_close_object(p);
}

static double loss_pct(const struct qos_probe_row *r)
{
	return r->sent ? 100.0 * r->lost / r->sent : 0;
}

/* What the reflector said: JSON its object, text the last column. */
static void reflector_print(struct qos_pr *p, const struct qos_probe_row *r)
{
	qos_pr_open_object(p, "reflector");
	qos_pr_u64_opt(p, QP_JSON, "dscp", NULL, r->refl_dscp, r->refl_dscp >= 0);
	qos_pr_u32(p, QP_JSON, "dscp_replies", NULL, r->refl_dscp_replies);
	qos_pr_u32(p, QP_JSON, "remarked", NULL, r->remarked);
	qos_pr_u32(p, QP_JSON, "cos_refused", NULL, r->cos_refused);
	qos_pr_u64_opt(p, QP_JSON, "ttl", NULL, r->refl_ttl, r->refl_ttl >= 0);
	qos_pr_close_object(p);
	if (r->refl_dscp < 0)
		qos_pr_text(p, "unknown\n");
	else if (r->remarked)
		qos_pr_text(p, "%d (re-marked in %u)\n", r->refl_dscp, r->remarked);
	else
		qos_pr_text(p, "%d\n", r->refl_dscp);
}

static void row_print(struct qos_pr *p, const struct qos_probe_row *r)
{
	qos_pr_open_object(p, NULL);
	qos_pr_string(p, QP_ANY, "class", "%-8s ", r->cls);
	qos_pr_u32(p, QP_ANY, "dscp", "%4u ", r->dscp);
	qos_pr_u64_opt(p, QP_JSON, "flowlabel", NULL, r->flowlabel, r->flowlabel);
	qos_pr_u32(p, QP_JSON, "ssid", NULL, r->ssid);
	qos_pr_u32(p, QP_ANY, "sent", "%6u ", r->sent);
	qos_pr_u32(p, QP_ANY, "received", "%6u ", r->received);
	qos_pr_u32(p, QP_JSON, "lost", NULL, r->lost);
	qos_pr_double(p, QP_ANY, "loss_pct", "%6.2f ", loss_pct(r));
	qos_pr_u32(p, QP_ANY, "duplicates", "%4u ", r->duplicates);
	qos_pr_u32(p, QP_ANY, "reordered", "%5u  ", r->reordered);
	dist_print(p, "rtt", &r->rtt);
	if (!qos_pr_json(p)) {
		char rtt[64];

		snprintf(rtt, sizeof(rtt), "%.3f/%.3f/%.3f/%.3f", r->rtt.min / 1e6,
			 r->rtt.p50 / 1e6, r->rtt.p90 / 1e6, r->rtt.p99 / 1e6);
		qos_pr_text(p, "%-26s %8.3f ", rtt, r->jitter_ns / 1e6);
	}
	qos_pr_double(p, QP_JSON, "jitter_ns", NULL, r->jitter_ns);
	dist_print(p, "forward", &r->fwd);
	dist_print(p, "backward", &r->back);
	qos_pr_bool(p, QP_JSON, "one_way_valid", NULL, r->owd_valid);
	qos_pr_u32(p, QP_JSON, "tx_kernel_timestamps", NULL, r->tx_kernel);
	qos_pr_u32(p, QP_JSON, "rx_kernel_timestamps", NULL, r->rx_kernel);
	reflector_print(p, r);
	qos_pr_close_object(p);
}

/* Text: the one-way delays, and replies the reflector could not mark. */
static void one_way_text(struct qos_pr *p, const struct qos_probe_run *run)
{
	unsigned int i;

	for (i = 0; i < run->n; i++) {
		const struct qos_probe_row *r = &run->rows[i];

		if (!r->received)
			continue;
		qos_pr_text(p, "%-8s one-way ms p50 forward %.3f backward %.3f%s\n", r->cls,
			    r->fwd.p50 / 1e6, r->back.p50 / 1e6,
			    r->owd_valid ? "" : " (not valid: clocks not both synchronised)");
		if (r->cos_refused)
			qos_pr_text(p, "%-8s %u replies not sent back with DSCP %u (RP 1): the "
				    "backward path measured in the DSCP the reflector received\n",
				    r->cls, r->cos_refused, r->dscp);
	}
}

static void sla_print(struct qos_pr *p, const struct qos_probe_run *run)
{
	const struct qos_probe_row *r = run->sla_row;

	qos_pr_open_object(p, "sla");
	qos_pr_string(p, QP_ANY, "class", "sla %s: ", r->cls);
	qos_pr_u64_opt(p, QP_JSON, "delay_p99_ns", NULL, run->sla_delay_p99_ns,
		       run->sla_delay_p99_ns);
	qos_pr_double_opt(p, QP_JSON, "loss_pct", NULL, run->sla_loss_ratio * 100,
			  run->sla_loss_ratio >= 0);
	qos_pr_bool(p, QP_JSON, "met", NULL, run->sla_met);
	qos_pr_text(p, "%s (rtt p99 %.3f ms, loss %.2f%%)\n", run->sla_met ? "met" : "not met",
		    r->rtt.p99 / 1e6, loss_pct(r));
	qos_pr_close_object(p);
}

int qos_probe_print(FILE *f, bool json, const struct qos_probe_run *run)
{
	struct qos_pr *p = qos_pr_open(f, json);
	unsigned int i;

	if (!p)
		return -ENOMEM;
	qos_pr_string(p, QP_ANY, "target", "STAMP to %s ", run->target);
	qos_pr_u32(p, QP_ANY, "port", "port %u: ", run->port);
	qos_pr_string(p, QP_JSON, "family", NULL, run->family);
	qos_pr_u64(p, QP_JSON, "interval_ns", NULL, run->interval_ns);
	qos_pr_u32(p, QP_ANY, "count", "%u test packets per class, ", run->count);
	qos_pr_text(p, "every %.3f ms\n", run->interval_ns / 1e6);
	qos_pr_text(p, "%-8s %4s %6s %6s %6s %4s %5s  %-26s %8s %s\n", "class", "dscp", "sent",
		    "rcvd", "loss%", "dup", "reord", "rtt ms min/p50/p90/p99", "jitter",
		    "refl-dscp");
	qos_pr_open_array(p, "streams");
	for (i = 0; i < run->n; i++)
		row_print(p, &run->rows[i]);
	qos_pr_close_array(p);
	one_way_text(p, run);
	if (run->sla_row)
		sla_print(p, run);
	return qos_pr_close(p);
}

static void refl_family(struct qos_pr *p, const struct qos_refl_counts *c, int f)
{
	const char *fam = f ? "ipv6" : "ipv4";
	unsigned int d;
	char k[4];

	qos_pr_open_object(p, fam);
	qos_pr_u64(p, QP_JSON, "packets", NULL, c->packets[f]);
	qos_pr_open_object(p, "dscp");
	for (d = 0; d < 64; d++) {
		if (!c->dscp[f][d])
			continue;
		snprintf(k, sizeof(k), "%u", d);
		qos_pr_text(p, "%s dscp %u: ", fam, d);
		qos_pr_u64(p, QP_ANY, k, "%llu test packets reflected\n", c->dscp[f][d]);
	}
	qos_pr_close_object(p);
	qos_pr_open_object(p, "refused");
	for (d = 0; d < c->nreasons; d++) {
		/* Text names only the reasons that refused something. */
		if (c->refused[f][d])
			qos_pr_text(p, "%s refused, %s: ", fam, c->reason[d]);
		qos_pr_u64(p, c->refused[f][d] ? QP_ANY : QP_JSON, c->reason[d], "%llu\n",
			   c->refused[f][d]);
	}
	qos_pr_close_object(p);
	qos_pr_u64(p, QP_JSON, "cos_refused", NULL, c->cos_refused[f]);
	qos_pr_close_object(p);
}

int qos_refl_print(FILE *f, bool json, const struct qos_refl_counts *c)
{
	struct qos_pr *p = qos_pr_open(f, json);

	if (!p)
		return -ENOMEM;
	qos_pr_u64(p, QP_JSON, "malformed", NULL, c->bad);
	qos_pr_u64(p, QP_JSON, "sources_evicted", NULL, c->evicted);
	refl_family(p, c, 0);
	refl_family(p, c, 1);
	qos_pr_text(p, "reflected: ipv4 %llu, ipv6 %llu, malformed %llu\n",
		    (unsigned long long)c->packets[0], (unsigned long long)c->packets[1],
		    (unsigned long long)c->bad);
	return qos_pr_close(p);
}

char *qos_sla_state_json(const struct qos_sla_state *st)
{
	struct qos_pr *p = qos_pr_open_tree();
	struct json_object *o;
	const char *text;
	char *ret = NULL;
	unsigned int i;

	if (!p)
		return NULL;
	qos_pr_string(p, QP_JSON, "target", NULL, st->target);
	qos_pr_string(p, QP_JSON, "family", NULL, st->family);
	qos_pr_u64(p, QP_JSON, "window_ns", NULL, st->window_ns);
	qos_pr_u64(p, QP_JSON, "windows", NULL, st->windows);
	qos_pr_u64(p, QP_JSON, "end_boottime_ns", NULL, st->end_boottime_ns);
	qos_pr_open_array(p, "sla");
	for (i = 0; i < st->n; i++) {
		const struct qos_sla_verdict *v = &st->v[i];

		qos_pr_open_object(p, NULL);
		qos_pr_string(p, QP_JSON, "class", NULL, v->cls);
		qos_pr_u64_opt(p, QP_JSON, "delay_p99_bound_ns", NULL, v->delay_p99_bound_ns,
			       v->delay_p99_bound_ns);
		qos_pr_double_opt(p, QP_JSON, "loss_bound_pct", NULL, v->loss_bound_ratio * 100,
				  v->loss_bound_ratio >= 0);
		qos_pr_s64(p, QP_JSON, "delay_p99_ns", NULL, v->delay_p99_ns);
		qos_pr_double(p, QP_JSON, "loss_pct", NULL, v->loss_ratio * 100);
		qos_pr_bool(p, QP_JSON, "met", NULL, v->met);
		qos_pr_close_object(p);
	}
	qos_pr_close_array(p);
	o = qos_pr_take(p);
	text = o ? qos_json_text(o) : NULL;
	if (text)
		ret = strdup(text);
	json_object_put(o);
	return ret;
}
