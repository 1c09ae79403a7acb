// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Policers in `show`, `stats` and `rule list`: their configuration and
 * colour counters.
 */
#include <stdio.h>
#include <string.h>

#include "kernel/stats.h"
#include "lib/util.h"
#include "model/policer.h"
#include "out/policer.h"
#include "out/print.h"

static const char *act_str(const struct qos_police_action *a,
			   const char *const class_names[QOS_MAX_CLASSES], char *buf, size_t len)
{
	const char *name;

	switch (a->type) {
	case QOS_PA_DROP:
		return "drop";
	case QOS_PA_REMARK:
		snprintf(buf, len, "remark:%u", a->arg);
		return buf;
	case QOS_PA_DEMOTE:
		name = class_names[a->arg & (QOS_MAX_CLASSES - 1)];
		if (name)
			snprintf(buf, len, "demote:%s", name);
		else
			snprintf(buf, len, "demote:%u", a->arg);
		return buf;
	default:
		return "pass";
	}
}

static uint64_t nb_bytes(uint64_t nb)
{
	return nb / TB_NBITS_PER_BYTE;
}

/* The code points a colour-aware policer takes as pre-coloured (JSON). */
static void dscp_set(struct qos_pr *p, const char *key, uint64_t set)
{
	int i;

	qos_pr_open_array(p, key);
	for (i = 0; i < QOS_DSCP_MAX; i++)
		if (set & (1ULL << i))
			qos_pr_u32(p, QP_JSON, NULL, NULL, i);
	qos_pr_close_array(p);
}

void qos_police_config_print(struct qos_pr *p, const struct qos_policer *pol,
			     const char *const class_names[QOS_MAX_CLASSES])
{
	bool tr = pol->tb.mode == TB_TRTCM, aware = pol->flags & QOS_POLICE_F_AWARE;
	char buf[32];
	int c;

	qos_pr_string(p, QP_ANY, "mode", "police %s", tr ? "trtcm" : "srtcm");
	qos_pr_string(p, QP_ANY, "color", " %s", aware ? "aware" : "blind");
	qos_pr_rate(p, QP_ANY, "cir_bps", " cir %s", pol->tb.cir);
	qos_pr_u64(p, QP_ANY, "cbs_bytes", " cbs %llub", nb_bytes(pol->tb.cbs));
	if (tr) {
		qos_pr_rate(p, QP_ANY, "pir_bps", " pir %s", pol->tb.pir);
		qos_pr_u64(p, QP_ANY, "pbs_bytes", " pbs %llub", nb_bytes(pol->tb.ebs));
	} else {
		qos_pr_u64(p, QP_ANY, "ebs_bytes", " ebs %llub", nb_bytes(pol->tb.ebs));
	}
	if (aware && qos_pr_json(p)) {
		dscp_set(p, "yellow_dscp", pol->pre_yellow);
		dscp_set(p, "red_dscp", pol->pre_red);
	}
	for (c = 0; c < TB_COLOR_MAX; c++) {
		const char *key = qos_police_act_keys[c] + strlen("police-");

		qos_pr_text(p, " %s", key);
		qos_pr_string(p, QP_ANY, key, " %s",
			      act_str(&pol->act[c], class_names, buf, sizeof(buf)));
	}
	qos_pr_nl(p);
}

void qos_police_stats_print(struct qos_pr *p, const struct qos_police_report *r)
{
	int c, fm;

	for (c = 0; c < TB_COLOR_MAX; c++) {
		qos_pr_open_object(p, qos_color_names[c]);
		qos_pr_text(p, "%-10s %-8s", "", qos_color_names[c]);
		for (fm = 0; fm < QOS_FAM_MAX; fm++) {
			qos_pr_open_object(p, qos_family_names[fm]);
			qos_pr_u64(p, QP_ANY, "packets", " %14llu", r->ctr[fm][c].packets);
			qos_pr_u64(p, QP_ANY, "bytes", " %16llu", r->ctr[fm][c].bytes);
			qos_pr_close_object(p);
		}
		qos_pr_nl(p);
		qos_pr_close_object(p);
	}
}
