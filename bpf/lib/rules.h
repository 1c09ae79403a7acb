/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Classification rules: IPv4/IPv6 source and destination prefixes, the IPv6
 * flow label (exact, masked or any), optionally the upper-layer protocol and
 * source and destination ports (single, or ranges as aligned blocks), looked
 * up before the DSCP table. The layout and the tuple-space search are
 * described in qos_shared.h and Documentation/classifier.rst.
 */
#ifndef __QOS_LIB_RULES_H
#define __QOS_LIB_RULES_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include "../qos_shared.h"
#include "count.h"
#include "maps.h"
#include "parse.h"

/* Which rules a lookup takes (qos_rules_classify()'s @sel): plain rules,
 * reservations, or both. Reservations are enforced where their queue is,
 * at egress; ingress looks at plain rules alone. */
#define QOS_SEL_PLAIN		(1U << 0)
#define QOS_SEL_RESERVE		(1U << 1)
#define QOS_SEL_ANY		(QOS_SEL_PLAIN | QOS_SEL_RESERVE)

/* Deepest classified header: Ethernet, two tags, IPv4 with options. */
#define QOS_L3_OFF_MAX	(14 + 8 + 60)

/*
 * The DSCP rule @rule sets as soon as it matches: QOS_REMARK_F | DSCP, the
 * flag clear for none. A reservation's is its egress remark instead, set
 * only if its policer passes the packet (qos_egress.bpf.c). Without a
 * branch: one here would double the paths the verifier walks after it.
 */
_Static_assert(QOS_RULE_F_SET_DSCP == 1 && QOS_RULE_F_RESERVE == 4 && QOS_REMARK_F == 0x80,
	       "qos_rule_dscp() shifts flag bits");
static __always_inline __u8 qos_rule_dscp(const struct qos_rule_val *rule)
{
	__u32 flags = rule->flags;

	return (flags & ~(flags >> 2) & QOS_RULE_F_SET_DSCP) << 7 | (rule->dscp & (QOS_DSCP_MAX - 1));
}

/* The rule a packet matched, copied out of the rule table as the lookup
 * finds it: scalars, which the verifier treats alike on every way that
 * found them, where a pointer into one of the two tables would not be. */
struct qos_rule_hit {
	__u32 id;		/* the rule's index in qos_rule_stats */
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
	hit->id = rule->id;
	hit->class_id = rule->class_id & (QOS_MAX_CLASSES - 1);
	hit->flags = rule->flags;
	hit->dscp = rule->dscp;
	hit->set_dscp = qos_rule_dscp(rule);
	hit->policer = rule->policer;
}

/*
 * Find the rule of lowest rank that matches @pkt among those @sel takes
 * and copy it into @hit (all but hit->found). Returns 1 if one matched.
 *
 * The best rule so far is carried as its rank (~0: none yet, above every
 * rank qosctl gives) and its copy in @hit, not as a pointer: the verifier
 * walks the shape loop once per value of its counter, and a pointer into
 * qos_rules4, into qos_rules or NULL made three states of every iteration
 * where a rank makes two (found or not), and the ways after the loop one
 * per kind of pointer (processed instructions: ingress 101201 -> 73097,
 * egress 33860 -> 24060).
 * A match costs the copy qos_rule_hit_fill() made after the loop before.
 * Each probe zeroes its key again after the lookup: a written key and a
 * zeroed one are different states to the verifier, and the loop's ways
 * that probed and those that skipped a shape met at the next iteration
 * as two (ingress 73097 -> 66662, egress 24060 -> 20859); three or six
 * stores per probe.
 */
static __always_inline int qos_rules_match(struct __sk_buff *skb, const struct qos_cfg *cfg,
					   const struct qos_pkt *pkt, __u32 sel,
					   struct qos_rule_hit *hit)
{
	void *data_end = qos_skb_data_end(skb);
	void *data = qos_skb_data(skb);
	__u32 t = pkt->table & 1, off = pkt->l3_off;
	struct qos_rule_val *v;
	__u64 best = ~0ULL;
	/* Zero between probes (see below); a probe writes every field. */
	struct qos_rule_key key = {};
	struct qos_rule_key4 key4 = {};
	const struct qos_rule_set *rs = &cfg->rs;
	struct ipv6hdr *ip6;
	struct iphdr *ip4;
	__be16 sport, dport;
	__u32 i, j, n;
	__u8 proto;

	if (off > QOS_L3_OFF_MAX)
		return 0;
	/* The addresses are masked into the key straight from the header. */
	ip6 = data + off;
	ip4 = data + off;
	if (t == QOS_TABLE_IPV6 ? (void *)(ip6 + 1) > data_end : (void *)(ip4 + 1) > data_end)
		return 0;

	n = rs->n[t];
	for (i = 0; i < QOS_RULE_SHAPES_MAX && i < n; i++) {
		const struct qos_rule_shape *s = &rs->shape[t][i];

		/* Shapes are sorted by their lowest rank: none further on
		 * can beat what was found. */
		if (s->min_rank > best)
			break;
		/* A packet without ports matches no shape that compares one. */
		if ((s->sport_mask | s->dport_mask) && pkt->ports != QOS_PORTS_READ)
			continue;
		proto = pkt->proto & s->proto_mask;
		sport = pkt->sport & s->sport_mask;
		dport = pkt->dport & s->dport_mask;
		if (t == QOS_TABLE_IPV4) {
			key4 = (struct qos_rule_key4){ s->src_len, s->dst_len, proto, 0, s->mask,
						       sport, dport, ip4->saddr & s->src[0],
						       ip4->daddr & s->dst[0] };
			v = bpf_map_lookup_elem(&qos_rules4, &key4);
			key4 = (struct qos_rule_key4){};
		} else {
			key = (struct qos_rule_key){ s->table, s->src_len, s->dst_len, proto, s->mask,
						     pkt->flowlabel & s->mask, sport, dport };
#pragma unroll
			for (j = 0; j < 4; j++) {
				key.src[j] = ip6->saddr.in6_u.u6_addr32[j] & s->src[j];
				key.dst[j] = ip6->daddr.in6_u.u6_addr32[j] & s->dst[j];
			}
			v = bpf_map_lookup_elem(&qos_rules, &key);
			key = (struct qos_rule_key){};
		}
		if (!v || v->rank >= best)
			continue;
		/* An expired reservation is gone for the data path at once,
		 * whether or not a qosctl command has deleted it yet. */
		if (v->expires_ns && bpf_ktime_get_boot_ns() >= v->expires_ns)
			continue;
		if (!(sel & (v->flags & QOS_RULE_F_RESERVE ? QOS_SEL_RESERVE : QOS_SEL_PLAIN)))
			continue;
		best = v->rank;
		qos_rule_hit_fill(hit, v);
	}
	return best != ~0ULL;
}

/*
 * Look the packet up in the rules of its family that @sel takes, if there
 * are any, and count the hit. @hit is the matching rule, hit->found 0 for
 * none; the caller carries out its actions (hit->set_dscp and the rest).
 * Returns an unparsed reason when the extension headers a protocol rule
 * needs cannot be walked; ports are read only when a rule compares one.
 */
static __always_inline int qos_rules_classify(struct __sk_buff *skb, const struct qos_cfg *cfg,
					      struct qos_pkt *pkt, __u32 len,
					      struct qos_rule_hit *hit, __u32 sel)
{
	int ret;

	hit->found = 0;
	if (!(cfg->rules & (QOS_RULES_V4 << (pkt->table & 1))))
		return QOS_UNP_NONE;
	if ((cfg->rules & QOS_RULES_L4) && pkt->table == QOS_TABLE_IPV6) {
		ret = qos_parse_ipv6_ext(skb, pkt);
		/* The inner chain of 6in4 is the tunnel's payload: the
		 * packet still has its outer header to be classified and
		 * policed by, with no rule. */
		if (ret != QOS_UNP_NONE)
			return pkt->tunnel ? QOS_UNP_NONE : ret;
	}
	pkt->ports = QOS_PORTS_NONE;
	if (cfg->rules & QOS_RULES_PORTS)
		qos_parse_ports(skb, pkt);
	if (!qos_rules_match(skb, cfg, pkt, sel, hit))
		return QOS_UNP_NONE;
	hit->found = 1;
	qos_count_rule(hit->id, len);
	return QOS_UNP_NONE;
}

#endif /* __QOS_LIB_RULES_H */
