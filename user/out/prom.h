/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_PROM_H
#define __QOS_PROM_H

#include <stdio.h>

#include "out/report.h"

/*
 * Prometheus text exposition format (version 0.0.4) for the reports of
 * @n interfaces: each metric family once, with a sample per interface.
 */
void qos_prom_write(FILE *f, const struct qos_report *const *r, unsigned int n);

#endif /* __QOS_PROM_H */
