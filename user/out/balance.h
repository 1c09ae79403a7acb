/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* qosctl balance's output: a line as it starts, a summary as it ends. */
#ifndef __QOS_OUT_BALANCE_H
#define __QOS_OUT_BALANCE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kernel/balance.h"

/* Text only: what it balances, until when. */
void qos_balance_print_start(FILE *f, const struct qos_balancer *b, bool json);
/* What it did; @cpu_ns: the CPU time the process used. */
int qos_balance_print_end(FILE *f, const struct qos_balancer *b, uint64_t cpu_ns, bool json);

#endif /* __QOS_OUT_BALANCE_H */
