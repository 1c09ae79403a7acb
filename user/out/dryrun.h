/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The dry-run: a plan printed as the tc commands that build its qdisc tree
 * and its configuration as comments. Sizes in bytes and rates in bit/s, as
 * tc reads them, so nothing is rounded on the way.
 */
#ifndef __QOS_OUT_DRYRUN_H
#define __QOS_OUT_DRYRUN_H

#include <stdbool.h>
#include <stdio.h>

#include "txn/plan.h"

/* "kernel memory: ..." the maps of a rule table of @rule_entries take on
 * this machine, after @prefix ("# " in a dry-run). */
void qos_print_mem(FILE *f, const char *prefix, uint32_t rule_entries);

/* "dev D: applied PROFILE at 1gbit, htb: pip rate ... ceil ... prio 0; ..." */
void qos_print_applied(FILE *f, const char *ifname, const struct qos_cfg *cfg);

/* @clsact: the device has a clsact qdisc already; @tcx: the programs
 * would be attached at tcx (at the place plan's meta says). */
void qos_dry_run(FILE *f, const char *ifname, const char *path, uint64_t link_bps,
		 const struct qos_plan *plan, bool clsact, bool tcx);

#endif /* __QOS_OUT_DRYRUN_H */
