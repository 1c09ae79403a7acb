// SPDX-License-Identifier: LGPL-2.1-or-later
/* The scheduler kinds by enum qos_sched and by tc kind (kernel/sched.h). */
#include <errno.h>
#include <string.h>

#include "kernel/sched.h"

static const struct qos_sched_ops *const kinds[] = {
	[QOS_SCHED_HTB] = &qos_sched_htb,
	[QOS_SCHED_PRIO] = &qos_sched_prio,
	[QOS_SCHED_TBF] = &qos_sched_tbf,
	[QOS_SCHED_NONE] = &qos_sched_none,
};

const struct qos_sched_ops *qos_sched_ops(uint32_t sched)
{
	if (sched >= sizeof(kinds) / sizeof(kinds[0]) || !kinds[sched])
		return &qos_sched_none;
	return kinds[sched];
}

const struct qos_sched_ops *qos_sched_ops_by_kind(const char *kind)
{
	unsigned int i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i] && kinds[i]->walk && !strcmp(kinds[i]->name, kind))
			return kinds[i];
	return NULL;
}

int qos_sched_class_stats(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			  const struct qos_meta_class *mc, struct qos_class_stats *st)
{
	return qos_class_stats(sk, ifindex, mc->classid, st);
}

static int none_class_stats(struct nl_sock *sk, int ifindex, const struct qos_meta *meta,
			    const struct qos_meta_class *mc, struct qos_class_stats *st)
{
	return -ENOENT;
}

/* Policing only: the root qdisc is not touched. */
const struct qos_sched_ops qos_sched_none = {
	.name = "none",
	.sched = QOS_SCHED_NONE,
	.class_stats = none_class_stats,
};
