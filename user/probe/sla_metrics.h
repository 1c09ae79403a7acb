/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The metrics of `probe send --continuous`: per stream, counters and an
 * RTT histogram summed over every window, the last window's p99 and loss,
 * and the SLA verdict; written in the Prometheus text format
 * (Documentation/metrics.rst, "Probe metrics").
 */
#ifndef __QOS_PROBE_SLA_METRICS_H
#define __QOS_PROBE_SLA_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "probe/socket.h"

/* Upper bounds of the RTT histogram's buckets, seconds; +Inf follows. */
#define PM_BUCKETS	13
extern const double pm_bucket_s[PM_BUCKETS];

/* "sla CLASS delay-p99 TIME loss PERCENT": either bound may be absent. */
struct pm_sla {
	bool set;
	char cls[QOS_CLASS_NAME_LEN];
	uint64_t delay_p99_ns;		/* 0: no bound */
	double loss_ratio;		/* < 0: no bound */
};

struct pm_stream {
	uint64_t sent, received, lost, duplicates, reordered, remarked;
	uint64_t bucket[PM_BUCKETS + 1];	/* per bucket, not cumulative */
	double sum_s;
	/* The last window. */
	bool have_window;
	int64_t p99_ns;
	double loss_ratio;
	int sla_met;			/* -1: no SLA on this class */
};

struct pm_target {
	const char *target;
	const char *family;		/* "ipv4", "ipv6" */
	struct probe_stream *s;
	struct pm_stream *m;
	unsigned int n;
	const struct pm_sla *sla;
	uint64_t windows;
};

/* Whether @sum meets @sla. */
bool pm_sla_met(const struct pm_sla *sla, const struct pstats_sum *sum);
/* Add the window just measured (s[i].st and s[i].sum) to @t. */
void pm_add_window(struct pm_target *t);
void pm_write(FILE *f, const struct pm_target *t);
/* The reflector's counters (`probe reflect --listen`), read while the
 * reflecting thread updates them. */
void pm_write_reflect(FILE *f, const struct probe_refl_stats *rs);

#endif /* __QOS_PROBE_SLA_METRICS_H */
