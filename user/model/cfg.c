// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A profile as the data path reads it: the DSCP -> class tables, the mark
 * layout and the per-class settings of struct qos_cfg (bpf/qos_common.h).
 */
#include <string.h>

#include "model/profile.h"

void qos_profile_fill_cfg(const struct qos_profile *p, struct qos_cfg *cfg)
{
	const struct qos_class_spec *def = qos_profile_class(p, p->default_class);
	unsigned int i, t, d;

	memset(cfg, 0, sizeof(*cfg));
	cfg->mark_mask = p->mark_mask;
	cfg->mark_shift = __builtin_ctz(p->mark_mask);
	cfg->default_class = def->id;
	if (p->wash)
		cfg->flags |= QOS_CFG_F_WASH;
	cfg->tunnel_dscp = p->tunnel_dscp;
	for (t = 0; t < QOS_TABLE_MAX; t++)
		for (d = 0; d < QOS_DSCP_MAX; d++)
			cfg->dscp_class[t][d] = def->id;
	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = &p->classes[i];

		if (p->sched != QOS_SCHED_NONE)
			cfg->classid[cl->id] = qos_profile_classid(p, cl);
		if (cl->police.set)
			cfg->class_policer[cl->id] = cl->id;
		for (t = 0; t < QOS_TABLE_MAX; t++)
			cfg->egress_remark[t][cl->id] = cl->remark[t];
		for (t = 0; t < QOS_TABLE_MAX; t++)
			for (d = 0; d < QOS_DSCP_MAX; d++)
				if (cl->dscp[t] & (1ULL << d))
					cfg->dscp_class[t][d] = cl->id;
	}
	if (p->nd_class[0])
		cfg->nd_class = qos_profile_class(p, p->nd_class)->id;
	if (p->nonip_class[0])
		cfg->nonip_class = qos_profile_class(p, p->nonip_class)->id;
	if (p->ack_class[0])
		cfg->ack_class = qos_profile_class(p, p->ack_class)->id;
}
