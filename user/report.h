/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_REPORT_H
#define __QOS_REPORT_H

#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>

#include "../bpf/qos_common.h"
#include "police.h"
#include "qdisc.h"

struct qos_report_class {
	struct qos_meta_class mc;
	struct qos_ctr ctr[QOS_DIR_MAX][QOS_FAM_MAX][QOS_V_MAX];
	struct qos_class_stats q;
	bool have_q;
	uint64_t dscp[QOS_TABLE_MAX];	/* code points that map to this class */
	struct qos_police_report police;
};

struct qos_report {
	char dev[IF_NAMESIZE];
	struct qos_meta meta;
	struct qos_cfg cfg;
	struct qos_report_class cls[QOS_MAX_CLASSES];
	struct qos_ctr unparsed[QOS_DIR_MAX][QOS_UNP_MAX];
};

/* Read everything from the pinned maps and the kernel's class statistics. */
int qos_report_read(const char *ifname, struct qos_report *r, char *err, size_t errlen);

extern const char *const qos_family_names[QOS_FAM_MAX];
extern const char *const qos_dir_names[QOS_DIR_MAX];
extern const char *const qos_verdict_names[QOS_V_MAX];
extern const char *const qos_unparsed_names[QOS_UNP_MAX];

void qos_report_stats(FILE *f, const struct qos_report *r, bool json, bool details);
void qos_report_show(FILE *f, const struct qos_report *r, bool json);

#endif /* __QOS_REPORT_H */
