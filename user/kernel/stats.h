/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The stats model of a device, read once and rendered by out/.
 */
#ifndef __QOS_KERNEL_STATS_H
#define __QOS_KERNEL_STATS_H

#include <net/if.h>
#include <stdbool.h>

#include "../bpf/qos_common.h"
#include "kernel/dev.h"
#include "kernel/policer.h"
#include "kernel/qdisc.h"
#include "kernel/rulemap.h"

struct qos_report_class {
	struct qos_meta_class mc;
	struct qos_ctr ctr[QOS_DIR_MAX][QOS_FAM_MAX][QOS_V_MAX];
	struct qos_class_stats q;	/* with a tree per TX queue, their sum */
	bool have_q;
	struct qos_class_stats qq[QOS_MAX_QUEUES];	/* each queue's (meta.queues > 1) */
	struct qos_class_stats iq;	/* its queue on the IFB (download shaping) */
	bool have_iq;
	uint64_t dscp[QOS_TABLE_MAX];	/* code points that map to this class */
	struct qos_police_report police;
	/* Totals, summed once when the report is read (qos_report_sum()). */
	struct qos_ctr fam[QOS_DIR_MAX][QOS_FAM_MAX];	/* every verdict */
	struct qos_ctr verdict[QOS_DIR_MAX][QOS_V_MAX];	/* every family */
	struct qos_ctr total[QOS_DIR_MAX];		/* every family and verdict */
	struct qos_ctr color[TB_COLOR_MAX];		/* the policer's, every family */
};

/*
 * Rules with their own counters in the report, so in the Prometheus text:
 * only named rules, lowest id first, at most QOS_REPORT_RULES_MAX of them
 * per device. An operator names the rules worth a time series; a table of
 * 65536 unnamed rules costs no series, and no scrape reads their counters.
 */
#define QOS_REPORT_RULES_MAX	256

struct qos_report_rule {
	uint32_t id;
	uint32_t class_id;
	char name[QOS_RULE_NAME_LEN];
	struct qos_ctr hits;
};

struct qos_report {
	char dev[IF_NAMESIZE];
	uint32_t prog_id[QOS_DIR_MAX];
	enum qos_attach attach;		/* how they are attached */
	uint32_t tcx_pos[QOS_DIR_MAX];	/* at tcx: place from 1 ... */
	uint32_t tcx_n[QOS_DIR_MAX];	/* ... among this many programs */
	long confirm_left;		/* seconds to a pending rollback, -1: none */
	int balance_pid;		/* qosctl balance for the device, 0: none */
	unsigned int balance_period_ms;
	struct qos_meta meta;
	struct qos_cfg cfg;
	struct qos_report_class cls[QOS_MAX_CLASSES];
	struct qos_ctr unparsed[QOS_DIR_MAX][QOS_UNP_MAX];
	struct qos_ctr unparsed_total[QOS_DIR_MAX];	/* every reason */
	struct qos_class_stats root;	/* the root qdisc: the whole tree */
	bool have_root;			/* qosctl's root qdisc is in place */
	char ifb[IF_NAMESIZE];		/* the IFB of download shaping, "" if none */
	struct qos_class_stats iroot;	/* the IFB's root qdisc */
	bool have_iroot;
	uint32_t nrules;		/* rules installed */
	uint32_t nrules_named;		/* of which named */
	uint32_t nreport_rules;		/* of those, in rules[] */
	struct qos_report_rule rules[QOS_REPORT_RULES_MAX];
};

/* The qdisc statistics of class @rc in direction @dir (egress: the
 * device's tree, ingress: the IFB's), NULL if there are none. */
static inline const struct qos_class_stats *qos_report_q(const struct qos_report_class *rc,
							 unsigned int dir)
{
	if (dir == QOS_DIR_EGRESS)
		return rc->have_q ? &rc->q : NULL;
	return rc->have_iq ? &rc->iq : NULL;
}

/* The same for the root qdisc. */
static inline const struct qos_class_stats *qos_report_root(const struct qos_report *r,
							    unsigned int dir)
{
	if (dir == QOS_DIR_EGRESS)
		return r->have_root ? &r->root : NULL;
	return r->have_iroot ? &r->iroot : NULL;
}

/* The name of class @id in @r, "" if it has none. */
const char *qos_report_class_name(const struct qos_report *r, uint32_t id);

/* The totals of @r from its counters; qos_report_read() calls it. */
void qos_report_sum(struct qos_report *r);
/* Everything about @dev: its configuration, counters, qdisc class stats. */
int qos_report_read(const struct qos_dev *dev, struct qos_report *r, char *err, size_t errlen);
/* The same for the device named @name, opened without its lock. */
int qos_report_read_name(const char *name, struct qos_report *r, char *err, size_t errlen);
/* Every device of this network namespace that runs qosctl: their number,
 * or a negative errno; *out is malloc()ed. */
int qos_report_read_all(struct qos_report **out);

extern const char *const qos_family_names[QOS_FAM_MAX];
extern const char *const qos_dir_names[QOS_DIR_MAX];
extern const char *const qos_verdict_names[QOS_V_MAX];
extern const char *const qos_unparsed_names[QOS_UNP_MAX];

#endif /* __QOS_KERNEL_STATS_H */
