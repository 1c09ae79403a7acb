// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What each root scheduler makes of a profile: the qdisc class a profile
 * class is queued in, which is what the egress program writes into
 * skb->priority.
 *
 *   htb   M:1N  one HTB class per profile class of id N
 *   prio  M:B   PRIO band B (1-based): classes sorted by priority, 0 first
 *   tbf   M:1   TBF's single class: the whole link is one shaped queue
 */
#include <errno.h>
#include <string.h>

#include "lib/util.h"
#include "model/profile.h"

int qos_sched_parse(const char *s, enum qos_sched *sched)
{
	if (!strcmp(s, "htb"))
		*sched = QOS_SCHED_HTB;
	else if (!strcmp(s, "prio"))
		*sched = QOS_SCHED_PRIO;
	else if (!strcmp(s, "tbf"))
		*sched = QOS_SCHED_TBF;
	else if (!strcmp(s, "none"))
		*sched = QOS_SCHED_NONE;	/* police only, no qdisc tree */
	else
		return -EINVAL;
	return 0;
}

/* 0-based band: how many classes are served before @cl. Priorities are
 * distinct in a prio profile (model/profile_check.c). */
int qos_prio_band(const struct qos_profile *p, const struct qos_class_spec *cl)
{
	unsigned int i;
	int band = 0;

	for (i = 0; i < p->nclasses; i++)
		if (p->classes[i].prio < cl->prio)
			band++;
	return band;
}

uint32_t qos_profile_classid(const struct qos_profile *p, const struct qos_class_spec *cl)
{
	switch (p->sched) {
	case QOS_SCHED_PRIO:
		return (p->handle_major << 16) | (qos_prio_band(p, cl) + 1);
	case QOS_SCHED_TBF:
		return (p->handle_major << 16) | 1;
	default:
		return qos_classid(p->handle_major, cl->id);
	}
}
