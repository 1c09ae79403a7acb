/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_OUT_REPORT_H
#define __QOS_OUT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../bpf/qos_common.h"
#include "kernel/stats.h"

struct qos_pr;

/* Views of `qosctl stats`; JSON always has every counter per family, and
 * the verdicts with QOS_STATS_DETAILS. */
#define QOS_STATS_DETAILS	(1U << 0)	/* -s */
#define QOS_STATS_FAMILY	(1U << 1)	/* --per-family: a row per family */
#define QOS_STATS_WIDE		(1U << 2)	/* --wide: a column per family */

/* The stats table's first column: class and direction, and family. */
#define QOS_STATS_LW		19
#define QOS_STATS_LW_FAM	28

/* One SLA verdict a probe publishes for the device, as show prints it. */
struct qos_sla_row {
	const char *probe;		/* the probe's name */
	const char *target;
	const char *family;
	const char *cls;
	uint64_t delay_p99_bound_ns;	/* 0: no bound */
	double loss_bound_pct;		/* < 0: no bound */
	int64_t delay_p99_ns;
	double loss_pct;
	uint64_t windows;
	uint64_t age_ns;		/* since its last window ended */
	const char *verdict;		/* "met", "violated", "stale" */
};

/* `qosctl stats`: a table, or JSON with @json. 0 or -errno. */
int qos_report_stats(FILE *f, const struct qos_report *r, bool json, unsigned int view);
/* The table under the header (out/stats_text.c). */
void qos_stats_text(struct qos_pr *p, const struct qos_report *r, unsigned int view);
/* `qosctl show`: the device, and the @nsla SLA verdicts of its probes. */
int qos_report_show(FILE *f, const struct qos_report *r, const struct qos_sla_row *sla,
		    int nsla, bool json);

#endif /* __QOS_OUT_REPORT_H */
