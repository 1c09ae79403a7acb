/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_OUT_REPORT_H
#define __QOS_OUT_REPORT_H

#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>

#include "../bpf/qos_common.h"
#include "kernel/stats.h"

void qos_report_stats(FILE *f, const struct qos_report *r, bool json, bool details);
void qos_report_show(FILE *f, const struct qos_report *r, bool json);

#endif /* __QOS_OUT_REPORT_H */
