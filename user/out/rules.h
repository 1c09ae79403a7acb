/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_OUT_RULES_H
#define __QOS_OUT_RULES_H

#include <stdbool.h>
#include <stdio.h>

#include "model/rule.h"

/* @rules sorted in the order the data path decides overlaps, as a table
 * or JSON; class names from @meta. */
void qos_rules_print(FILE *f, struct qos_rules *rules, const struct qos_meta *meta, bool json);

#endif /* __QOS_OUT_RULES_H */
