// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Probe metrics in the Prometheus text format (version 0.0.4). Counters
 * and the histogram only grow, window after window, so rate() and
 * histogram_quantile() work over any range; the window gauges and the
 * SLA verdict are the last window's.
 */
#include <stddef.h>
#include <string.h>

#include "lib/names.h"
#include "probe/sla_metrics.h"

/* From a loopback round trip (~10 us) to a congested queue's 1 s. */
const double pm_bucket_s[PM_BUCKETS] = {
	0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005,
	0.01, 0.02, 0.05, 0.1, 0.25, 1,
};

bool pm_sla_met(const struct pm_sla *sla, const struct pstats_sum *sum)
{
	double loss = sum->sent ? (double)sum->lost / sum->sent : 1;

	if (sla->delay_p99_ns && (!sum->rtt.n || sum->rtt.p99 > (int64_t)sla->delay_p99_ns))
		return false;
	return sla->loss_ratio < 0 || loss <= sla->loss_ratio;
}

void pm_add_window(struct pm_target *t)
{
	unsigned int i, b;
	uint32_t q;

	t->windows++;
	for (i = 0; i < t->n; i++) {
		const struct pstats_sum *sum = &t->s[i].sum;
		const struct pstats *st = &t->s[i].st;
		struct pm_stream *m = &t->m[i];

		m->sent += sum->sent;
		m->received += sum->received;
		m->lost += sum->lost;
		m->duplicates += sum->duplicates;
		m->reordered += sum->reordered;
		m->remarked += sum->remarked;
		for (q = 0; q < st->sent && q < st->count; q++) {
			double rtt;

			if (!st->slot[q].replies)
				continue;
			rtt = pstats_rtt(&st->slot[q]) / 1e9;
			for (b = 0; b < PM_BUCKETS && rtt > pm_bucket_s[b]; b++)
				;
			m->bucket[b]++;
			m->sum_s += rtt;
		}
		m->have_window = true;
		m->p99_ns = sum->rtt.p99;
		m->loss_ratio = sum->sent ? (double)sum->lost / sum->sent : 0;
		m->sla_met = -1;
		if (t->sla->set && !strcmp(t->sla->cls, t->s[i].name))
			m->sla_met = pm_sla_met(t->sla, sum);
	}
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Label values escaped as prom.c's: a target is an address, but class
 * names come from a profile on the probing host. */
static void target_labels(FILE *f, const struct pm_target *t)
{
	fputs("{target=\"", f);
	qos_prom_escape(f, t->target);
	fputs("\",family=\"", f);
	qos_prom_escape(f, t->family);
	fputc('"', f);
}

static void labels(FILE *f, const struct pm_target *t, unsigned int i)
{
	target_labels(f, t);
	fputs(",class=\"", f);
	qos_prom_escape(f, t->s[i].name);
	fputc('"', f);
}

static void counter(FILE *f, const struct pm_target *t, const char *name, const char *help,
		    size_t off)
{
	unsigned int i;

	head(f, name, "counter", help);
	for (i = 0; i < t->n; i++) {
		fputs(name, f);
		labels(f, t, i);
		fprintf(f, "} %llu\n",
			(unsigned long long)*(const uint64_t *)((const char *)&t->m[i] + off));
	}
}

void pm_write(FILE *f, const struct pm_target *t)
{
	const char *h = "qosctl_probe_rtt_seconds";
	unsigned int i, b;

	head(f, h, "histogram",
	     "Round-trip delay of STAMP test packets, less the reflector's residence time.");
	for (i = 0; i < t->n; i++) {
		uint64_t cum = 0;

		for (b = 0; b <= PM_BUCKETS; b++) {
			cum += t->m[i].bucket[b];
			fprintf(f, "%s_bucket", h);
			labels(f, t, i);
			if (b < PM_BUCKETS)
				fprintf(f, ",le=\"%g\"} %llu\n", pm_bucket_s[b],
					(unsigned long long)cum);
			else
				fprintf(f, ",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
		}
		fprintf(f, "%s_sum", h);
		labels(f, t, i);
		fprintf(f, "} %.9f\n%s_count", t->m[i].sum_s, h);
		labels(f, t, i);
		fprintf(f, "} %llu\n", (unsigned long long)cum);
	}
	counter(f, t, "qosctl_probe_sent_total", "STAMP test packets sent.",
		offsetof(struct pm_stream, sent));
	counter(f, t, "qosctl_probe_lost_total", "Test packets not answered within the wait.",
		offsetof(struct pm_stream, lost));
	counter(f, t, "qosctl_probe_duplicates_total", "Replies beyond the first to a test packet.",
		offsetof(struct pm_stream, duplicates));
	counter(f, t, "qosctl_probe_reordered_total",
		"Replies that came after one to a later test packet.",
		offsetof(struct pm_stream, reordered));
	counter(f, t, "qosctl_probe_remarked_total",
		"Replies whose reflector received another DSCP than the one sent.",
		offsetof(struct pm_stream, remarked));
	head(f, "qosctl_probe_window_rtt_p99_seconds", "gauge",
	     "99th percentile of the round-trip delay over the last window.");
	for (i = 0; i < t->n; i++) {
		fputs("qosctl_probe_window_rtt_p99_seconds", f);
		labels(f, t, i);
		fprintf(f, "} %.9f\n", t->m[i].p99_ns / 1e9);
	}
	head(f, "qosctl_probe_window_loss_ratio", "gauge",
	     "Share of the last window's test packets lost.");
	for (i = 0; i < t->n; i++) {
		fputs("qosctl_probe_window_loss_ratio", f);
		labels(f, t, i);
		fprintf(f, "} %g\n", t->m[i].loss_ratio);
	}
	head(f, "qosctl_probe_sla_met", "gauge",
	     "1 if the last window met the class's SLA (delay p99 and loss), else 0.");
	for (i = 0; i < t->n; i++) {
		if (t->m[i].sla_met < 0)
			continue;
		fputs("qosctl_probe_sla_met", f);
		labels(f, t, i);
		fprintf(f, "} %d\n", t->m[i].sla_met);
	}
	head(f, "qosctl_probe_windows_total", "counter", "Windows of test packets completed.");
	fputs("qosctl_probe_windows_total", f);
	target_labels(f, t);
	fprintf(f, "} %llu\n", (unsigned long long)t->windows);
}

static uint64_t ld(const uint64_t *v)
{
	return __atomic_load_n(v, __ATOMIC_RELAXED);
}

/* @v[0] and @v[1] as NAME{family="ipv4"} and NAME{family="ipv6"}. */
static void per_family(FILE *f, const char *name, const char *help, const uint64_t *v)
{
	head(f, name, "counter", help);
	fprintf(f, "%s{family=\"ipv4\"} %llu\n%s{family=\"ipv6\"} %llu\n", name,
		(unsigned long long)ld(&v[0]), name, (unsigned long long)ld(&v[1]));
}

void pm_write_reflect(FILE *f, const struct probe_refl_stats *rs)
{
	const char *n = "qosctl_reflect_refused_total";
	int fam, v;

	per_family(f, "qosctl_reflect_packets_total", "STAMP test packets reflected.",
		   rs->packets);
	head(f, n, "counter", "Datagrams not answered, by reason: destination (broadcast or "
	     "multicast), allow (not from an allowed prefix), port (from a port replies "
	     "come from), source-rate, global-rate.");
	for (fam = 0; fam < 2; fam++)
		for (v = RG_PASS + 1; v < RG_NVERDICTS; v++)
			fprintf(f, "%s{family=\"ipv%d\",reason=\"%s\"} %llu\n", n, fam ? 6 : 4,
				rg_reason[v], (unsigned long long)ld(&rs->refused[fam][v]));
	per_family(f, "qosctl_reflect_cos_refused_total",
		   "Replies not sent with the DSCP their CoS TLV asked for (RP 1).",
		   rs->cos_refused);
	head(f, "qosctl_reflect_malformed_total", "counter",
	     "Datagrams too short to be a test packet.");
	fprintf(f, "qosctl_reflect_malformed_total %llu\n", (unsigned long long)ld(&rs->bad));
	head(f, "qosctl_reflect_sources_evicted_total", "counter",
	     "Sources whose rate state gave way to another's in the bounded table.");
	fprintf(f, "qosctl_reflect_sources_evicted_total %llu\n",
		(unsigned long long)ld(&rs->evicted));
}
