/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_PROM_H
#define __QOS_PROM_H

#include <stdio.h>

#include "report.h"

/*
 * Prometheus text exposition format (version 0.0.4) for the reports of
 * @n interfaces: each metric family once, with a sample per interface.
 */
void qos_prom_write(FILE *f, const struct qos_report *const *r, unsigned int n);

/*
 * Read the report of every interface with qosctl state that exists in
 * this network namespace. *@out is allocated; returns the count or a
 * negative errno.
 */
int qos_report_read_all(struct qos_report **out);

#endif /* __QOS_PROM_H */
