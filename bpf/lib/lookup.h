/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The parse and the rule lookup of a packet the inline parse left
 * (qos_parse_fast()), in one global function. What a matching rule asks
 * for comes back in a struct qos_rule_hit (rules.h), as from the inline
 * lookup.
 */
#ifndef __QOS_LIB_LOOKUP_H
#define __QOS_LIB_LOOKUP_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "../qos_shared.h"
#include "maps.h"
#include "parse.h"
#include "rules.h"

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
	return qos_rules_classify(skb, cfg, pkt, skb->len, hit, sel);
}

#endif /* __QOS_LIB_LOOKUP_H */
