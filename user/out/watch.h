/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef __QOS_WATCH_H
#define __QOS_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * `qosctl stats dev IFACE --watch SECONDS`: every @secs seconds, the rates
 * over the last interval per class and direction (packets and bits per
 * second), and the drops per second of its policer and queue; in the
 * layout of @view (QOS_STATS_FAMILY, QOS_STATS_WIDE, out/report.h), or one
 * JSON object per interval, always per family, with @json. Runs until
 * interrupted, or @count intervals if not 0.
 */
int qos_stats_watch(const char *ifname, unsigned int secs, unsigned int count, bool json,
		    unsigned int view, FILE *f, char *err, size_t errlen);

#endif /* __QOS_WATCH_H */
