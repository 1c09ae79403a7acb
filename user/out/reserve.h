/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_OUT_RESERVE_H
#define __QOS_OUT_RESERVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/rule.h"

/* `reserve list`: what the reserve-class of @meta admits on device @dev,
 * and the reservations among @rules at boot time @now, as a table or JSON
 * with @json. 0 or -errno. */
int qos_reserve_print(FILE *f, bool json, const char *dev, const struct qos_meta *meta,
		      const struct qos_rules *rules, uint64_t now);

#endif /* __QOS_OUT_RESERVE_H */
