/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Policers as `show`, `stats` and `rule list` print them, text and JSON
 * from the same calls (out/print.h).
 */
#ifndef __QOS_OUT_POLICER_H
#define __QOS_OUT_POLICER_H

#include "kernel/policer.h"

struct qos_pr;

/* The members of a policer's object; text "police srtcm blind cir 20mbit
 * cbs 250000b ... exceed drop violate drop" and a newline. */
void qos_police_config_print(struct qos_pr *p, const struct qos_policer *pol,
			     const char *const class_names[QOS_MAX_CLASSES]);
/* Its colour counters: an object per colour, a text row per colour with
 * packets and bytes per family. */
void qos_police_stats_print(struct qos_pr *p, const struct qos_police_report *r);

#endif /* __QOS_OUT_POLICER_H */
