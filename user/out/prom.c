// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Counters in the Prometheus text format, for node_exporter's textfile
 * collector (`qosctl stats --prometheus`) and for `qosctl exporter`.
 *
 * Names follow the Prometheus naming guide: base units (bytes; configured
 * rates in bytes per second, the guide's A_per_B form), `_total` on
 * counters, node_exporter's `device` label for the interface. The
 * families, their labels and the bound on their series are listed in
 * Documentation/metrics.rst; selftests/prometheus.sh checks this output
 * against that list.
 */
#include <stdbool.h>
#include <stddef.h>

#include "lib/names.h"
#include "lib/util.h"
#include "lib/version.h"
#include "model/policer.h"
#include "out/prom.h"

/* Label values: backslash, double quote and newline escaped (an interface
 * name may hold the first two). @sep is ',' or, for the first, '{'. */
static void label_sep(FILE *f, char sep, const char *name, const char *v)
{
	fprintf(f, "%c%s=\"", sep, name);
	qos_prom_escape(f, v);
	fputc('"', f);
}

static void label(FILE *f, const char *name, const char *v)
{
	label_sep(f, ',', name, v);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Opens a series with its device label; label() adds the others, then
 * value() or value_bytes_per_s() closes it. */
static void series(FILE *f, const char *name, const struct qos_report *r)
{
	fputs(name, f);
	label_sep(f, '{', "device", r->dev);
}

static void value(FILE *f, unsigned long long v)
{
	fprintf(f, "} %llu\n", v);
}

/* A rate in bit/s as bytes per second, exactly: n / 8 has at most three
 * decimals. */
static void value_bytes_per_s(FILE *f, unsigned long long bps)
{
	if (bps % 8)
		fprintf(f, "} %llu.%03llu\n", bps / 8, bps % 8 * 125);
	else
		fprintf(f, "} %llu\n", bps / 8);
}

#define QOS_STR_(x)	#x
#define QOS_STR(x)	QOS_STR_(x)

static void write_info(FILE *f, const struct qos_report *const *r, unsigned int n)
{
	unsigned int i;

	family(f, "qosctl_info", "gauge",
	       "Profile and scheduler applied to a device, and the qosctl version (always 1).");
	for (i = 0; i < n; i++) {
		series(f, "qosctl_info", r[i]);
		label(f, "profile", r[i]->meta.profile);
		label(f, "scheduler", qos_sched_name(r[i]->meta.sched));
		label(f, "version", QOSCTL_VERSION);
		value(f, 1);
	}
	family(f, "qosctl_link_rate_bytes_per_second", "gauge",
	       "Link rate the profile was applied at, in bytes per second.");
	for (i = 0; i < n; i++) {
		series(f, "qosctl_link_rate_bytes_per_second", r[i]);
		value_bytes_per_s(f, r[i]->meta.rate_bps);
	}
	family(f, "qosctl_tx_queues", "gauge",
	       "TX queues with a tree of their own (queues N); 1 for a single tree.");
	for (i = 0; i < n; i++) {
		series(f, "qosctl_tx_queues", r[i]);
		value(f, qos_meta_queues(&r[i]->meta));
	}
	family(f, "qosctl_balance_running", "gauge",
	       "1 while qosctl balance shares a multi-queue tree's rates by demand, "
	       "0 with the static split.");
	for (i = 0; i < n; i++) {
		series(f, "qosctl_balance_running", r[i]);
		value(f, r[i]->balance_pid != 0);
	}
}

/* Configured values of a class: only those it has (a rate of 0 is none,
 * and a class without a policer has no policer values). */
enum class_gauge { CG_RATE, CG_CEIL, CG_POLICE_RATE, CG_POLICE_BURST };

static bool class_gauge(const struct qos_report_class *rc, enum class_gauge g,
			unsigned long long *v)
{
	switch (g) {
	case CG_RATE:
		*v = rc->mc.rate_bps;
		return *v;
	case CG_CEIL:
		*v = rc->mc.ceil_bps;
		return *v;
	case CG_POLICE_RATE:
		*v = rc->police.pol.tb.cir;
		return rc->police.set;
	default:
		*v = rc->police.pol.tb.cbs / TB_NBITS_PER_BYTE;
		return rc->police.set;
	}
}

static void class_gauges(FILE *f, const struct qos_report *const *r, unsigned int n,
			 const char *name, const char *help, enum class_gauge g)
{
	unsigned long long v;
	unsigned int i, c;

	family(f, name, "gauge", help);
	for (i = 0; i < n; i++)
		for (c = 0; c < r[i]->meta.nclasses; c++) {
			if (!class_gauge(&r[i]->cls[c], g, &v))
				continue;
			series(f, name, r[i]);
			label(f, "class", r[i]->cls[c].mc.name);
			if (g == CG_POLICE_BURST)
				value(f, v);
			else
				value_bytes_per_s(f, v);
		}
}

static void class_series(FILE *f, const char *name, const struct qos_report *r,
			 const struct qos_report_class *rc, unsigned int d, unsigned int fm)
{
	series(f, name, r);
	label(f, "direction", qos_dir_names[d]);
	label(f, "class", rc->mc.name);
	label(f, "family", qos_family_names[fm]);
}

static unsigned long long ctr_value(const struct qos_ctr *c, bool bytes)
{
	return bytes ? c->bytes : c->packets;
}

/* The data path's counters: all verdicts summed, or one series per verdict
 * other than pass (the sum less those is what passed untouched). */
static void class_counters(FILE *f, const struct qos_report *const *r, unsigned int n,
			   const char *name, const char *help, bool bytes, bool verdicts)
{
	unsigned int i, c, d, fm, v;

	family(f, name, "counter", help);
	for (i = 0; i < n; i++)
		for (c = 0; c < r[i]->meta.nclasses; c++)
			for (d = 0; d < QOS_DIR_MAX; d++)
				for (fm = 0; fm < QOS_FAM_MAX; fm++) {
					const struct qos_report_class *rc = &r[i]->cls[c];

					for (v = 0; verdicts && v < QOS_V_MAX; v++) {
						if (v == QOS_V_PASS)
							continue;
						class_series(f, name, r[i], rc, d, fm);
						label(f, "verdict", qos_verdict_names[v]);
						value(f, ctr_value(&rc->ctr[d][fm][v], bytes));
					}
					if (verdicts)
						continue;
					/* All verdicts: the model's total. */
					class_series(f, name, r[i], rc, d, fm);
					value(f, ctr_value(&rc->fam[d][fm], bytes));
				}
}

static void policer_counters(FILE *f, const struct qos_report *const *r, unsigned int n,
			     const char *name, const char *help, bool bytes)
{
	unsigned int i, c, fm, col;

	family(f, name, "counter", help);
	for (i = 0; i < n; i++)
		for (c = 0; c < r[i]->meta.nclasses; c++) {
			const struct qos_police_report *p = &r[i]->cls[c].police;

			if (!p->set)
				continue;
			for (fm = 0; fm < QOS_FAM_MAX; fm++)
				for (col = 0; col < TB_COLOR_MAX; col++) {
					series(f, name, r[i]);
					label(f, "class", r[i]->cls[c].mc.name);
					label(f, "family", qos_family_names[fm]);
					label(f, "color", qos_color_names[col]);
					value(f, ctr_value(&p->ctr[fm][col], bytes));
				}
		}
}

struct stat_family {
	const char *name;
	const char *type;
	const char *help;
	size_t off;		/* of a uint64_t in the statistics structure */
};

static unsigned long long stat_at(const void *st, size_t off)
{
	return *(const uint64_t *)((const char *)st + off);
}

#define QSTAT(name, type, help, field) \
	{ name, type, help, offsetof(struct qos_class_stats, field) }

static const struct stat_family qdisc_class_families[] = {
	QSTAT("qosctl_qdisc_class_sent_packets_total", "counter",
	      "Packets the qdisc class sent.", packets),
	QSTAT("qosctl_qdisc_class_sent_bytes_total", "counter",
	      "Bytes the qdisc class sent.", bytes),
	QSTAT("qosctl_qdisc_class_drops_total", "counter",
	      "Packets the qdisc class (or its leaf qdisc) dropped.", drops),
	QSTAT("qosctl_qdisc_class_overlimits_total", "counter",
	      "Times the qdisc class was over its rate and had to wait.", overlimits),
	QSTAT("qosctl_qdisc_class_requeues_total", "counter",
	      "Packets of the qdisc class requeued (the device was busy).", requeues),
	QSTAT("qosctl_qdisc_class_backlog_bytes", "gauge",
	      "Bytes queued in the qdisc class.", backlog_bytes),
	QSTAT("qosctl_qdisc_class_backlog_packets", "gauge",
	      "Packets queued in the qdisc class.", backlog_packets),
};

static const struct stat_family qdisc_root_families[] = {
	QSTAT("qosctl_qdisc_sent_packets_total", "counter",
	      "Packets the root qdisc sent.", packets),
	QSTAT("qosctl_qdisc_sent_bytes_total", "counter",
	      "Bytes the root qdisc sent.", bytes),
	QSTAT("qosctl_qdisc_drops_total", "counter",
	      "Packets the root qdisc and the qdiscs under it dropped.", drops),
	QSTAT("qosctl_qdisc_overlimits_total", "counter",
	      "Times the root qdisc was over its limits.", overlimits),
	QSTAT("qosctl_qdisc_requeues_total", "counter",
	      "Packets the root qdisc requeued (the device was busy).", requeues),
	QSTAT("qosctl_qdisc_backlog_bytes", "gauge",
	      "Bytes queued in the qdisc tree.", backlog_bytes),
	QSTAT("qosctl_qdisc_backlog_packets", "gauge",
	      "Packets queued in the qdisc tree.", backlog_packets),
};

/* Direction egress: the device's tree; ingress: its IFB's (download
 * shaping). */
static void write_qdisc(FILE *f, const struct qos_report *const *r, unsigned int n)
{
	const struct qos_class_stats *q;
	const struct stat_family *sf;
	unsigned int i, c, d;

	for (sf = qdisc_class_families; sf < qdisc_class_families +
	     sizeof(qdisc_class_families) / sizeof(*sf); sf++) {
		family(f, sf->name, sf->type, sf->help);
		for (i = 0; i < n; i++)
			for (c = 0; c < r[i]->meta.nclasses; c++)
				for (d = 0; d < QOS_DIR_MAX; d++) {
					q = qos_report_q(&r[i]->cls[c], d);
					if (!q)
						continue;
					series(f, sf->name, r[i]);
					label(f, "direction", qos_dir_names[d]);
					label(f, "class", r[i]->cls[c].mc.name);
					value(f, stat_at(q, sf->off));
				}
	}
	for (sf = qdisc_root_families; sf < qdisc_root_families +
	     sizeof(qdisc_root_families) / sizeof(*sf); sf++) {
		family(f, sf->name, sf->type, sf->help);
		for (i = 0; i < n; i++)
			for (d = 0; d < QOS_DIR_MAX; d++) {
				q = qos_report_root(r[i], d);
				if (!q)
					continue;
				series(f, sf->name, r[i]);
				label(f, "direction", qos_dir_names[d]);
				value(f, stat_at(q, sf->off));
			}
	}
}

static void write_rules(FILE *f, const struct qos_report *const *r, unsigned int n)
{
	static const char *const names[] = { "qosctl_rule_packets_total",
					     "qosctl_rule_bytes_total" };
	static const char *const helps[] = {
		"Packets a named rule classified (the " QOS_STR(QOS_REPORT_RULES_MAX)
		" named rules with the lowest ids).",
		"Bytes a named rule classified (the " QOS_STR(QOS_REPORT_RULES_MAX)
		" named rules with the lowest ids).",
	};
	unsigned int i, k, j;

	family(f, "qosctl_rules_installed", "gauge", "Classification rules installed.");
	for (i = 0; i < n; i++) {
		series(f, "qosctl_rules_installed", r[i]);
		value(f, r[i]->nrules);
	}
	family(f, "qosctl_rules_capacity", "gauge", "Rules the device's rule table can hold.");
	for (i = 0; i < n; i++) {
		series(f, "qosctl_rules_capacity", r[i]);
		value(f, r[i]->meta.rule_entries);
	}
	for (k = 0; k < 2; k++) {
		family(f, names[k], "counter", helps[k]);
		for (i = 0; i < n; i++)
			for (j = 0; j < r[i]->nreport_rules; j++) {
				const struct qos_report_rule *rr = &r[i]->rules[j];
				char id[16];

				snprintf(id, sizeof(id), "%u", rr->id);
				series(f, names[k], r[i]);
				label(f, "rule", rr->name);
				label(f, "rule_id", id);
				label(f, "class", qos_report_class_name(r[i], rr->class_id));
				value(f, ctr_value(&rr->hits, k));
			}
	}
}

static void write_unparsed(FILE *f, const struct qos_report *const *r, unsigned int n)
{
	unsigned int i, d, u;

	family(f, "qosctl_unparsed_packets_total", "counter",
	       "Packets passed untouched because they could not be classified, per reason.");
	for (i = 0; i < n; i++)
		for (d = 0; d < QOS_DIR_MAX; d++)
			for (u = QOS_UNP_NONE + 1; u < QOS_UNP_MAX; u++) {
				series(f, "qosctl_unparsed_packets_total", r[i]);
				label(f, "direction", qos_dir_names[d]);
				label(f, "reason", qos_unparsed_names[u]);
				value(f, r[i]->unparsed[d][u].packets);
			}
}

void qos_prom_write(FILE *f, const struct qos_report *const *r, unsigned int n)
{
	write_info(f, r, n);
	class_gauges(f, r, n, "qosctl_class_rate_bytes_per_second",
		     "Rate guaranteed to the class, in bytes per second.", CG_RATE);
	class_gauges(f, r, n, "qosctl_class_ceil_bytes_per_second",
		     "Rate the class may borrow up to, in bytes per second.", CG_CEIL);
	class_gauges(f, r, n, "qosctl_policer_rate_bytes_per_second",
		     "Committed rate of the class's ingress policer, in bytes per second.",
		     CG_POLICE_RATE);
	class_gauges(f, r, n, "qosctl_policer_burst_bytes",
		     "Committed burst of the class's ingress policer, in bytes.", CG_POLICE_BURST);

	class_counters(f, r, n, "qosctl_class_packets_total",
		       "Packets classified, per direction, class and address family.", false, false);
	class_counters(f, r, n, "qosctl_class_bytes_total",
		       "Bytes classified (Ethernet frame without FCS), per direction, class and family.",
		       true, false);
	class_counters(f, r, n, "qosctl_class_verdict_packets_total",
		       "Packets the data path dropped, remarked or demoted.", false, true);
	class_counters(f, r, n, "qosctl_class_verdict_bytes_total",
		       "Bytes the data path dropped, remarked or demoted.", true, true);
	policer_counters(f, r, n, "qosctl_policer_packets_total",
			 "Packets the class's ingress policer coloured, per family and color.",
			 false);
	policer_counters(f, r, n, "qosctl_policer_bytes_total",
			 "Bytes the class's ingress policer coloured, per family and color.", true);

	write_qdisc(f, r, n);
	write_rules(f, r, n);
	write_unparsed(f, r, n);
}
