/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_OUT_RULES_H
#define __QOS_OUT_RULES_H

#include <stdbool.h>
#include <stdio.h>

#include "kernel/bpfobj.h"
#include "model/rule.h"

/* @rules sorted in the order the data path decides overlaps, as a table
 * or JSON; class names from @meta; the policers of rules that have their
 * own, with their counters, from the maps of @p. */
void qos_rules_print(FILE *f, struct qos_rules *rules, const struct qos_meta *meta,
		     const struct qos_progs *p, bool json);

#endif /* __QOS_OUT_RULES_H */
