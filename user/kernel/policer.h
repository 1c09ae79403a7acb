/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policers in the kernel's maps (qos_policers for classes, qos_rule_pols
 * for rules): install, restore, read.
 */
#ifndef __QOS_KERNEL_POLICER_H
#define __QOS_KERNEL_POLICER_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/bpfobj.h"

/*
 * Install the class policers @pol[id] (id 1 to QOS_MAX_CLASSES - 1; a zero
 * cir means no policer, and clears the entry) into the qos_policers array
 * @fd. A policer whose configuration is unchanged keeps its buckets; a
 * changed one is written whole with its buckets carried over by
 * tb_reconfig(), so a re-apply neither refills nor empties it. @saved receives the previous entries
 * for qos_police_restore().
 */
int qos_police_install(int fd, const struct qos_policer pol[QOS_MAX_CLASSES],
		       struct qos_policer saved[QOS_MAX_CLASSES]);
void qos_police_restore(int fd, const struct qos_policer saved[QOS_MAX_CLASSES]);

struct qos_rule;

/*
 * The policer of rule @r under its id r->policer in the qos_rule_pols hash
 * @fd, buckets full, counters zeroed; deleted; and read back into @r's
 * police_* fields.
 */
int qos_police_rule_write(int fd, const struct qos_rule *r);
void qos_police_rule_clear(int fd, uint32_t idx);
int qos_police_rule_read(int fd, struct qos_rule *r);

/* A policer and its counters, as `show` and `stats` print them. */
struct qos_police_report {
	bool set;
	uint32_t idx;
	struct qos_policer pol;
	struct qos_ctr ctr[QOS_FAM_MAX][TB_COLOR_MAX];
};

/* Read policer @idx and its counters from the maps of @p. */
int qos_police_read(const struct qos_progs *p, uint32_t idx, struct qos_police_report *r);

#endif /* __QOS_KERNEL_POLICER_H */
