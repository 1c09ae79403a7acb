/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_OUT_RULES_H
#define __QOS_OUT_RULES_H

#include <stdbool.h>
#include <stdio.h>

#include "kernel/bpfobj.h"
#include "kernel/policer.h"
#include "model/rule.h"

/* What `rule list` prints, gathered before anything is printed. */
struct qos_rules_view {
	const struct qos_rules *rules;	/* in the order the data path decides overlaps */
	const struct qos_meta *meta;	/* class names */
	struct qos_police_report *pol;	/* per rule: its own policer, if set */
};

/* Sort @rules and read the policers of the rules that have their own,
 * with their counters, from the maps of @p. 0 or -ENOMEM. */
int qos_rules_view_read(struct qos_rules_view *v, struct qos_rules *rules,
			const struct qos_meta *meta, const struct qos_progs *p);
void qos_rules_view_free(struct qos_rules_view *v);
/* @v as a table, or JSON with @json. 0 or -errno. */
int qos_rules_print(FILE *f, const struct qos_rules_view *v, bool json);

#endif /* __QOS_OUT_RULES_H */
