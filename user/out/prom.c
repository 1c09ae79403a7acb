// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Counters in the Prometheus text format, for node_exporter's textfile
 * collector (`qosctl stats --prometheus`) and for `qosctl exporter`.
 *
 * Families (labels in braces):
 *   qosctl_info{dev,profile,scheduler}                       gauge 1
 *   qosctl_link_rate_bits{dev}                               gauge
 *   qosctl_class_rate_bits / _ceil_bits{dev,class}           gauge
 *   qosctl_class_packets_total / _bytes_total
 *       {dev,direction,class,family}                         BPF counters, all verdicts
 *   qosctl_class_verdict_packets_total / _bytes_total
 *       {dev,direction,class,family,verdict}                 drop, remark, demote
 *   qosctl_qdisc_sent_packets_total / _sent_bytes_total / _drops_total /
 *       _overlimits_total{dev,class}                         the qdisc class
 *   qosctl_qdisc_backlog_bytes / _backlog_packets{dev,class} gauge
 *   qosctl_unparsed_packets_total{dev,direction,reason}
 * Policer colours get families of their own beside the verdict ones.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "out/prom.h"
#include "lib/util.h"

/* Label values: backslash, double quote and newline escaped. */
static void label(FILE *f, const char *name, const char *v, bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample(FILE *f, const char *name, const char *dev, unsigned long long v)
{
	fprintf(f, "%s{", name);
	label(f, "dev", dev, true);
	fprintf(f, "} %llu\n", v);
}

enum class_ctr { CTR_PACKETS, CTR_BYTES };

static void class_counters(FILE *f, const struct qos_report *const *r, unsigned int n,
			   const char *name, enum class_ctr what, bool verdicts)
{
	unsigned int i, c, d, fm, v;

	for (i = 0; i < n; i++)
		for (c = 0; c < r[i]->meta.nclasses; c++)
			for (d = 0; d < QOS_DIR_MAX; d++)
				for (fm = 0; fm < QOS_FAM_MAX; fm++) {
					const struct qos_report_class *rc = &r[i]->cls[c];
					unsigned long long sum = 0;

					for (v = 0; v < QOS_V_MAX; v++) {
						const struct qos_ctr *ctr = &rc->ctr[d][fm][v];
						unsigned long long x = what == CTR_PACKETS ?
							ctr->packets : ctr->bytes;

						if (!verdicts) {
							sum += x;
							continue;
						}
						if (v == QOS_V_PASS)
							continue;
						fprintf(f, "%s{", name);
						label(f, "dev", r[i]->dev, true);
						label(f, "direction", qos_dir_names[d], false);
						label(f, "class", rc->mc.name, false);
						label(f, "family", qos_family_names[fm], false);
						label(f, "verdict", qos_verdict_names[v], false);
						fprintf(f, "} %llu\n", x);
					}
					if (verdicts)
						continue;
					fprintf(f, "%s{", name);
					label(f, "dev", r[i]->dev, true);
					label(f, "direction", qos_dir_names[d], false);
					label(f, "class", rc->mc.name, false);
					label(f, "family", qos_family_names[fm], false);
					fprintf(f, "} %llu\n", sum);
				}
}

enum q_field { Q_PKTS, Q_BYTES, Q_DROPS, Q_OVERLIMITS, Q_BL_BYTES, Q_BL_PKTS, Q_RATE, Q_CEIL };

static unsigned long long q_value(const struct qos_report_class *rc, enum q_field w)
{
	switch (w) {
	case Q_PKTS:
		return rc->q.packets;
	case Q_BYTES:
		return rc->q.bytes;
	case Q_DROPS:
		return rc->q.drops;
	case Q_OVERLIMITS:
		return rc->q.overlimits;
	case Q_BL_BYTES:
		return rc->q.backlog_bytes;
	case Q_BL_PKTS:
		return rc->q.backlog_packets;
	case Q_RATE:
		return rc->mc.rate_bps;
	default:
		return rc->mc.ceil_bps;
	}
}

static void class_values(FILE *f, const struct qos_report *const *r, unsigned int n,
			 const char *name, const char *type, const char *help, enum q_field w)
{
	unsigned int i, c;

	family(f, name, type, help);
	for (i = 0; i < n; i++)
		for (c = 0; c < r[i]->meta.nclasses; c++) {
			const struct qos_report_class *rc = &r[i]->cls[c];

			if (w < Q_RATE && !rc->have_q)
				continue;
			fprintf(f, "%s{", name);
			label(f, "dev", r[i]->dev, true);
			label(f, "class", rc->mc.name, false);
			fprintf(f, "} %llu\n", q_value(rc, w));
		}
}

void qos_prom_write(FILE *f, const struct qos_report *const *r, unsigned int n)
{
	unsigned int i, d, u;

	family(f, "qosctl_info", "gauge", "Profile applied to an interface (always 1).");
	for (i = 0; i < n; i++) {
		fprintf(f, "qosctl_info{");
		label(f, "dev", r[i]->dev, true);
		label(f, "profile", r[i]->meta.profile, false);
		label(f, "scheduler", qos_sched_name(r[i]->meta.sched), false);
		fprintf(f, "} 1\n");
	}
	family(f, "qosctl_link_rate_bits", "gauge", "Link rate the profile was applied at, bit/s.");
	for (i = 0; i < n; i++)
		sample(f, "qosctl_link_rate_bits", r[i]->dev, r[i]->meta.rate_bps);
	class_values(f, r, n, "qosctl_class_rate_bits", "gauge",
		     "Guaranteed rate of the class, bit/s.", Q_RATE);
	class_values(f, r, n, "qosctl_class_ceil_bits", "gauge",
		     "Maximum rate of the class, bit/s.", Q_CEIL);

	family(f, "qosctl_class_packets_total", "counter",
	       "Packets classified, per direction, class and address family.");
	class_counters(f, r, n, "qosctl_class_packets_total", CTR_PACKETS, false);
	family(f, "qosctl_class_bytes_total", "counter",
	       "Bytes classified (Ethernet frame without FCS), per direction, class and family.");
	class_counters(f, r, n, "qosctl_class_bytes_total", CTR_BYTES, false);
	family(f, "qosctl_class_verdict_packets_total", "counter",
	       "Packets dropped, remarked or demoted by the data path.");
	class_counters(f, r, n, "qosctl_class_verdict_packets_total", CTR_PACKETS, true);
	family(f, "qosctl_class_verdict_bytes_total", "counter",
	       "Bytes dropped, remarked or demoted by the data path.");
	class_counters(f, r, n, "qosctl_class_verdict_bytes_total", CTR_BYTES, true);

	class_values(f, r, n, "qosctl_qdisc_sent_packets_total", "counter",
		     "Packets the qdisc class sent.", Q_PKTS);
	class_values(f, r, n, "qosctl_qdisc_sent_bytes_total", "counter",
		     "Bytes the qdisc class sent.", Q_BYTES);
	class_values(f, r, n, "qosctl_qdisc_drops_total", "counter",
		     "Packets the qdisc class dropped.", Q_DROPS);
	class_values(f, r, n, "qosctl_qdisc_overlimits_total", "counter",
		     "Times the qdisc class was over its limit.", Q_OVERLIMITS);
	class_values(f, r, n, "qosctl_qdisc_backlog_bytes", "gauge",
		     "Bytes queued in the qdisc class.", Q_BL_BYTES);
	class_values(f, r, n, "qosctl_qdisc_backlog_packets", "gauge",
		     "Packets queued in the qdisc class.", Q_BL_PKTS);

	family(f, "qosctl_unparsed_packets_total", "counter",
	       "Packets passed untouched because they could not be classified, per reason.");
	for (i = 0; i < n; i++)
		for (d = 0; d < QOS_DIR_MAX; d++)
			for (u = QOS_UNP_NONE + 1; u < QOS_UNP_MAX; u++) {
				fprintf(f, "qosctl_unparsed_packets_total{");
				label(f, "dev", r[i]->dev, true);
				label(f, "direction", qos_dir_names[d], false);
				label(f, "reason", qos_unparsed_names[u], false);
				fprintf(f, "} %llu\n", (unsigned long long)r[i]->unparsed[d][u].packets);
			}
}
