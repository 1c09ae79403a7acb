/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The parse and the rule lookup of a packet the inline parse left
 * (qos_parse_fast()), in one global function, and what a matching rule
 * asks for (struct qos_rule_hit), the same whichever way found it.
 */
#ifndef __QOS_LIB_LOOKUP_H
#define __QOS_LIB_LOOKUP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "../qos_shared.h"
#include "maps.h"
#include "parse.h"
#include "rules.h"

/* The rule a packet matched, copied out of the rule table: scalars the
 * verifier treats alike on every way that found them. */
struct qos_rule_hit {
	__u32 policer;		/* the rule's own policer, 0 for none */
	__u8 found;		/* 0: no rule matched, the rest is unset */
	__u8 class_id;		/* < QOS_MAX_CLASSES */
	__u8 flags;		/* QOS_RULE_F_* */
	__u8 dscp;		/* the rule's DSCP, as in struct qos_rule_val */
	__u8 set_dscp;		/* qos_rule_dscp(): set at once, with QOS_REMARK_F */
	__u8 pad[3];
};

static __always_inline void qos_rule_hit_fill(struct qos_rule_hit *hit,
					      const struct qos_rule_val *rule)
{
	hit->found = !!rule;
	if (!rule)
		return;
	hit->class_id = rule->class_id & (QOS_MAX_CLASSES - 1);
	hit->flags = rule->flags;
	hit->dscp = rule->dscp;
	hit->set_dscp = qos_rule_dscp(rule);
	hit->policer = rule->policer;
}

/*
 * Parse @skb into @pkt (qos_parse_skb()), then, if @sel takes any rules,
 * look the packet up in them (qos_rules_classify()) and fill @hit.
 * Returns QOS_UNP_NONE or the unparsed reason of the parse or of the
 * lookup, which both programs treat alike.
 *
 * A global function, verified once on its own: the parse writes @pkt in
 * the caller's memory, which the verifier does not follow, so the rule
 * lookup after it is walked once for every way through the headers
 * rather than once per way, and the callers see one state after the
 * call. A packet that comes here pays one BPF-to-BPF call, as it did for
 * the parse alone. __weak: both program files include it, the linked
 * object keeps one.
 */
__weak __noinline int qos_parse_lookup(struct __sk_buff *skb, struct qos_pkt *pkt,
				       struct qos_rule_hit *hit, __u32 sel, __u32 tunnel_mode)
{
	struct qos_rule_val *rule;
	struct qos_cfg *cfg;
	int ret;

	if (!skb || !pkt || !hit)
		return QOS_UNP_TRUNCATED;
	hit->found = 0;
	ret = qos_parse_skb(skb, pkt, tunnel_mode);
	if (ret != QOS_UNP_NONE || !sel)
		return ret;
	cfg = qos_get_cfg();
	if (!cfg)
		return QOS_UNP_NONE;
	ret = qos_rules_classify(skb, cfg, pkt, skb->len, &rule, sel);
	qos_rule_hit_fill(hit, rule);
	return ret;
}

#endif /* __QOS_LIB_LOOKUP_H */
