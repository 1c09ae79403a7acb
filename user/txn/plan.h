/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A plan: everything a device is to run, as one value. Built without side
 * effects from a profile, the link rate and facts about the kernel (which
 * qdiscs it has); apply installs it, --dry-run prints it, validate checks
 * it. The state a device runs now reads back as a plan too, which is what
 * a rollback installs.
 */
#ifndef __QOS_TXN_PLAN_H
#define __QOS_TXN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/dev.h"
#include "model/profile.h"

struct qos_plan {
	bool empty;				/* nothing: the device without qosctl */
	struct qos_cfg cfg;			/* rule shapes filled in by install */
	struct qos_policer police[QOS_MAX_CLASSES];	/* by class id; cir 0: none */
	struct qos_rules rules;			/* every rule, live ones included */
	uint32_t rule_entries;			/* capacity of the rule table */
};

/* From profile @name at @link_bps on a device of @mtu (its bursts and
 * byte queues sized for a full frame, warnings for those the profile sets
 * smaller) and @txqs TX queues, with the link-layer keys of the command
 * line (@ll, NULL for none) and its `queues` (@queues, QOS_QUEUES_AUTO or
 * QOS_QUEUES_PROFILE) over the profile's, and download shaping at
 * @ingress_bps (0: the profile's ingress-rate, if any). The profile's rules
 * only. */
int qos_plan_profile(const char *name, uint64_t link_bps, uint64_t ingress_bps,
		     const struct qos_ll_spec *ll, uint32_t mtu, uint32_t queues, uint32_t txqs,
		     struct qos_plan *plan, char *err, size_t errlen);
/* Whether @plan shapes downloads through an IFB. */
static inline bool qos_plan_has_ifb(const struct qos_plan *plan)
{
	return !plan->empty && plan->cfg.ifb.rate_bps;
}
/* Keep the live rules (`qosctl rule add`) of what @dev runs in @plan. */
int qos_plan_keep_live(struct qos_plan *plan, const struct qos_dev *dev, char *err,
		       size_t errlen);
/* What @dev runs now; plan->empty when nothing. */
int qos_plan_current(const struct qos_dev *dev, struct qos_plan *plan, char *err,
		     size_t errlen);
void qos_plan_free(struct qos_plan *plan);

/*
 * Whether @plan needs the ingress program (Documentation/design.rst,
 * "Hooks"): a policer, a rule, download shaping (an IFB), or programs
 * of another qosctl build.
 * Otherwise the egress program, which classifies unmarked packets by
 * itself, is attached alone.
 */
bool qos_plan_needs_ingress(const struct qos_plan *plan);

/* Encode and decode a plan, for the device's transaction record. */
int qos_plan_encode(const struct qos_plan *plan, void **buf, size_t *len);
int qos_plan_decode(const void *buf, size_t len, struct qos_plan *plan);
/* The longest encoding: QOS_RULES_MAX rules. */
size_t qos_plan_max_len(void);

#endif /* __QOS_TXN_PLAN_H */
