/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_OUT_REPORT_H
#define __QOS_OUT_REPORT_H

#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>

#include "../bpf/qos_common.h"
#include "kernel/stats.h"
#include "probe/sla_state.h"

/* Views of `qosctl stats`; JSON always has every counter per family, and
 * the verdicts with QOS_STATS_DETAILS. */
#define QOS_STATS_DETAILS	(1U << 0)	/* -s */
#define QOS_STATS_FAMILY	(1U << 1)	/* --per-family: a row per family */
#define QOS_STATS_WIDE		(1U << 2)	/* --wide: a column per family */

void qos_report_stats(FILE *f, const struct qos_report *r, bool json, unsigned int view);
/* The table (out/stats_text.c). */
void qos_stats_text(FILE *f, const struct qos_report *r, unsigned int view);
/* The device, and the @nsla SLA verdicts its probes publish. */
void qos_report_show(FILE *f, const struct qos_report *r, const struct pstate_sla *sla, int nsla,
		     bool json);

#endif /* __QOS_OUT_REPORT_H */
