/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Rules in the kernel's maps. See kernel/rulemap.c.
 */
#ifndef __QOS_KERNEL_RULEMAP_H
#define __QOS_KERNEL_RULEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/bpfobj.h"
#include "model/rule.h"

struct qos_rule_maps {
	int rules;
	int stats;		/* hit counters, [cpu][id] with rows of capacity */
	uint32_t capacity;	/* max_entries of the rule table */
	int policers;		/* qos_rule_pols: rules' own policers */
	int rules4;		/* the IPv4 entries, under struct qos_rule_key4 */
};

static inline struct qos_rule_maps qos_rule_maps_of(const struct qos_progs *p)
{
	struct qos_rule_maps m = {
		.rules = p->map[QOS_MAP_RULES],
		.stats = p->map[QOS_MAP_RULE_STATS],
		.capacity = p->rule_entries,
		.policers = p->map[QOS_MAP_RULE_POLS],
		.rules4 = p->map[QOS_MAP_RULES4],
	};

	return m;
}

/* The hit counters of rule @id, summed over CPUs. */
int qos_rule_hits(const struct qos_rule_maps *m, uint32_t id, struct qos_ctr *sum);
/* Every installed rule; with @hits, their hit counters summed over CPUs. */
int qos_rules_read(const struct qos_rule_maps *m, struct qos_rules *l, bool hits);
/* Write the entry of @k, in the table of its family. */
int qos_rule_entry_put(const struct qos_rule_maps *m, const struct qos_rule_key *k,
		       const struct qos_rule_val *v);

/*
 * Give the rules of @next without an id the lowest free one (and a policer
 * index to those with a policer of their own), check @next, write the
 * policers and entries of rules new in @next (counters of new ids zeroed) and
 * compute its shapes into @set and the qos_cfg.rules bits into *flags. The
 * data path sees nothing new until a configuration with @set is in place.
 */
int qos_rules_stage(const struct qos_rule_maps *m, const struct qos_rules *cur,
		    struct qos_rules *next, struct qos_rule_set *set, uint32_t *flags, char *err,
		    size_t errlen);
/* Once the configuration with @next's shapes is in place: delete the
 * entries of rules of @cur that @next does not have, then their policers. */
void qos_rules_retire(const struct qos_rule_maps *m, const struct qos_rules *cur,
		      const struct qos_rules *next);
/* Has @cur a rule @next has not (one qos_rules_retire() would delete)? */
bool qos_rules_gone(const struct qos_rule_maps *m, const struct qos_rules *cur,
		    const struct qos_rules *next);
/* Undo a stage of @next over @cur. */
void qos_rules_unstage(const struct qos_rule_maps *m, const struct qos_rules *cur,
		       const struct qos_rules *next);

#endif /* __QOS_KERNEL_RULEMAP_H */
