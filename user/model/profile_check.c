// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Profile checks that do not depend on the link, each in one place: the
 * classes (ids, rates, DSCPs), every named class exists, the rules, the
 * policers, CBQ's parameters mapped onto HTB, the constraints of the PRIO
 * and TBF schedulers, bursts and byte queues of at least one frame. Every
 * error names the file, the line and the key, like the reader's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/util.h"
#include "model/perr.h"
#include "model/policer.h"
#include "model/profile.h"
#include "model/profile_int.h"
#include "model/rule.h"

#define QOS_FRAME_BYTES		1514

/*
 * CBQ (removed from Linux in 6.3) described a class by its share, its
 * priority, whether it may borrow (bounded) or lend (isolated), and how
 * many average packets it may send back to back (maxburst). On HTB:
 * share = rate, priority = prio, bounded = ceil at the rate, maxburst =
 * the bucket in full frames. HTB has no way to stop a class lending what
 * it leaves idle, and needs none for CBQ's purpose: an isolated class
 * gets its rate back whenever it has traffic.
 */
static int map_cbq(struct qos_profile *p, struct qos_class_spec *cl, char *err, size_t len)
{
	if ((cl->bounded || cl->isolated || cl->maxburst) && p->sched != QOS_SCHED_HTB)
		return qos_profile_errf(err, len, p, cl->cbq_line, "bounded",
			    "[class %s] CBQ parameters (bounded, isolated, maxburst) need scheduler = htb",
			    cl->name);
	if (cl->maxburst) {
		if (cl->burst)
			return qos_profile_errf(err, len, p, cl->cbq_line, "maxburst",
				    "[class %s] sets both burst and maxburst", cl->name);
		cl->burst = (uint64_t)cl->maxburst * QOS_FRAME_BYTES;
		cl->burst_line = cl->cbq_line;
	}
	if (cl->bounded) {
		if (cl->ceil.set && (cl->ceil.pct != cl->rate.pct ||
				     cl->ceil.share != cl->rate.share || cl->ceil.bps != cl->rate.bps))
			return qos_profile_errf(err, len, p, cl->cbq_line, "bounded",
				    "[class %s] is bounded (ceil = rate) but sets another ceil",
				    cl->name);
		cl->ceil = cl->rate;
	}
	return 0;
}

static int check_class_name(const struct qos_profile *p, const char *name, int line,
			    const char *key, char *err, size_t len)
{
	if (name[0] && !qos_profile_class(p, name))
		return qos_profile_errf(err, len, p, line, key, "no class named '%s'", name);
	return 0;
}

static int check_ext(struct qos_profile *p, char *err, size_t len)
{
	unsigned int i, j;
	int ret;

	ret = check_class_name(p, p->nd_class, p->nd_line, "nd-class", err, len) ?:
	      check_class_name(p, p->nonip_class, p->nonip_line, "non-ip-class", err, len) ?:
	      check_class_name(p, p->ack_class, p->ack_line, "ack-class", err, len) ?:
	      check_class_name(p, p->reserve_class, p->reserve_line, "reserve-class", err, len);
	if (ret)
		return ret;
	if (p->reserve_class[0] && !strcmp(p->reserve_class, p->default_class))
		return qos_profile_errf(err, len, p, p->reserve_line, "reserve-class",
					"'%s' is the default class: a reservation must be "
					"served before what nobody reserved", p->reserve_class);
	if (p->ack_class[0] && !strcmp(p->ack_class, p->default_class))
		return qos_profile_errf(err, len, p, p->ack_line, "ack-class",
					"'%s' is the default class, where ACKs already are",
					p->ack_class);
	if (p->sched == QOS_SCHED_TBF && p->nclasses != 1)
		return qos_profile_errf(err, len, p, p->sched_line, "scheduler",
			    "tbf shapes the whole link as one queue: exactly one [class], not %u",
			    p->nclasses);

	for (i = 0; i < p->nclasses; i++) {
		struct qos_class_spec *cl = &p->classes[i];

		ret = map_cbq(p, cl, err, len);
		if (ret)
			return ret;
		if (cl->burst && cl->burst < QOS_FRAME_BYTES)
			return qos_profile_errf(err, len, p, cl->burst_line, "burst",
				    "[class %s] %llu bytes is less than one full frame (%d bytes)",
				    cl->name, (unsigned long long)cl->burst, QOS_FRAME_BYTES);
		if (cl->limit && cl->limit < QOS_FRAME_BYTES &&
		    (cl->leaf == QOS_LEAF_BFIFO || p->sched == QOS_SCHED_TBF))
			return qos_profile_errf(err, len, p, cl->limit_line, "limit",
				    "[class %s] a byte queue of %u holds less than one full frame (%d bytes)",
				    cl->name, cl->limit, QOS_FRAME_BYTES);
		/* A shaper's ceiling is its rate. */
		if (p->sched == QOS_SCHED_TBF && !cl->ceil.set)
			cl->ceil = cl->rate;
		if (p->sched != QOS_SCHED_PRIO)
			continue;
		for (j = 0; j < i; j++)
			if (p->classes[j].prio == cl->prio)
				return qos_profile_errf(err, len, p, cl->prio_line ?: cl->line, "priority",
					    "classes %s and %s share priority %u; PRIO bands need distinct priorities",
					    p->classes[j].name, cl->name, cl->prio);
	}
	return 0;
}


/* Classes exist, the set fits the table and the data path. Names are
 * unique: they are section names, and a section comes once. */
static int check_rules(struct qos_profile *p, char *err, size_t len)
{
	char msg[400];
	size_t i, bad = 0;
	int ret;

	for (i = 0; i < p->rules.n; i++) {
		struct qos_rule *r = &p->rules.r[i];
		const struct qos_class_spec *cl;
		const char *key;

		if (qos_rule_check(r, &key, msg, sizeof(msg)))
			return qos_profile_errf(err, len, p,
				    key[0] == 'c' || key[0] == 'b' || key[0] == 'a' ? r->line :
				    r->port_line, key, "[rule %s]: %s", r->name, msg);
		cl = qos_profile_class(p, r->class_name);
		if (!cl)
			return qos_profile_errf(err, len, p, r->line, "class", "[rule %s]: no class named '%s'",
				    r->name, r->class_name);
		r->class_id = cl->id;
		if (r->police_act.type != QOS_PA_DEMOTE)
			continue;
		cl = qos_profile_class(p, r->police_demote);
		if (!cl)
			return qos_profile_errf(err, len, p, r->police_line ?: r->line, "action",
				    "[rule %s]: no class named '%s'", r->name, r->police_demote);
		r->police_act.arg = cl->id;
	}
	ret = qos_rules_validate(&p->rules, p->rule_entries, &bad, msg, sizeof(msg));
	if (ret)
		return qos_profile_errf(err, len, p, bad < p->rules.n ? p->rules.r[bad].line : 1, "rule", "%s",
			    msg);
	return 0;
}

static int check_profile(struct qos_profile *p, char *err, size_t len)
{
	uint64_t seen[QOS_TABLE_MAX] = {};
	unsigned int i, j;
	int t, ret;

	if (!p->nclasses)
		return qos_profile_errf(err, len, p, 1, "class", "the profile defines no [class NAME]");
	if (!p->default_class[0])
		return qos_profile_errf(err, len, p, 1, "default",
			    "[profile] must name the default class (default = NAME)");
	ret = check_class_name(p, p->default_class, p->default_line, "default", err, len);
	if (ret)
		return ret;

	for (i = 0; i < p->nclasses; i++) {
		const struct qos_class_spec *cl = &p->classes[i];

		if (!cl->id)
			return qos_profile_errf(err, len, p, cl->line, "id",
				    "[class %s] has no id (the class number in the mark)",
				    cl->name);
		if (!cl->rate.set && p->sched != QOS_SCHED_NONE)
			return qos_profile_errf(err, len, p, cl->line, "rate", "[class %s] has no rate",
				    cl->name);
		for (j = 0; j < i; j++)
			if (p->classes[j].id == cl->id)
				return qos_profile_errf(err, len, p, cl->id_line, "id",
					    "class %s has the same id as class %s", cl->name,
					    p->classes[j].name);
		if (cl->rate.set && cl->ceil.set && cl->rate.pct == cl->ceil.pct &&
		    (cl->rate.pct ? cl->rate.share > cl->ceil.share : cl->rate.bps > cl->ceil.bps))
			return qos_profile_errf(err, len, p, cl->ceil.line, "ceil",
				    "[class %s] ceil is below its rate", cl->name);
		for (t = 0; t < QOS_TABLE_MAX; t++) {
			uint64_t dup = seen[t] & cl->dscp[t];

			if (dup)
				return qos_profile_errf(err, len, p, cl->dscp_line[t], t ? "dscp6" : "dscp4",
					    "DSCP %d of class %s is already in another class",
					    __builtin_ctzll(dup), cl->name);
			seen[t] |= cl->dscp[t];
		}
	}
	ret = check_rules(p, err, len);
	return ret ?: qos_police_check(p, err, len);
}

int qos_profile_check(struct qos_profile *p, char *err, size_t errlen)
{
	return check_profile(p, err, errlen) ?: check_ext(p, err, errlen);
}
