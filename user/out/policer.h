/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policers as `show` and `stats` print them.
 */
#ifndef __QOS_OUT_POLICER_H
#define __QOS_OUT_POLICER_H

#include <stdio.h>

#include "kernel/policer.h"

struct json_object;

/* "police srtcm cir 20mbit cbs 250000b ... exceed drop violate drop" */
void qos_police_print_config(FILE *f, const struct qos_policer *pol,
			     const char *const class_names[QOS_MAX_CLASSES]);
struct json_object *qos_police_config_json(const struct qos_policer *pol,
					   const char *const class_names[QOS_MAX_CLASSES]);
/* One row per colour: packets and bytes per family. */
void qos_police_print_stats(FILE *f, const struct qos_police_report *r);
struct json_object *qos_police_stats_json(const struct qos_police_report *r);

#endif /* __QOS_OUT_POLICER_H */
