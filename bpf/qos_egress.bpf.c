// SPDX-License-Identifier: GPL-2.0-only
/*
 * tc egress ("service-policy output"), in front of the qdisc tree: turn the
 * class into the qdisc class through skb->priority, which HTB and PRIO use
 * when its major number is theirs. Packets nobody classified (locally
 * generated, or from an interface without an ingress policy) are classified
 * here, by the rules and then their DSCP / Traffic Class.
 *
 * Like the ingress program it returns TC_ACT_UNSPEC: the packet is never
 * dropped here, and filters after ours in the chain still run.
 *
 * skb->priority and not the mark is what reaches the qdisc: the class in the
 * mark is router-wide, the major:minor is this interface's tree.
 *
 * Reservations (qosctl reserve) are enforced here, where their class's
 * queue is, whichever interface their packets came in by: every packet is
 * looked up in them, marked or not, and one that matches is policed at
 * the reservation's token bucket (dropped or demoted beyond it, as the
 * profile says) and queued in its class. This is the one case where
 * egress drops: TC_ACT_SHOT for a reservation's excess with
 * reserve-exceed = drop.
 *
 * The DSCP is rewritten last, after the class is chosen: a reservation's
 * remark for the packets its policer passed, a class's egress remark, or
 * DSCP 0 for every class when the device washes.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "lib/classify.h"
#include "lib/count.h"
#include "lib/mark.h"
#include "lib/parse.h"
#include "lib/rules.h"
#include "lib/dscp.h"
#include "lib/lookup.h"
#include "lib/police.h"

/*
 * Queue the packet in class @cls: skb->priority = the class's qdisc class.
 * With a tree per TX queue (cfg->queues > 1), the queue is picked from the
 * flow hash, so every packet of a flow takes one queue and is never
 * reordered, and the classid is that queue's HTB's. The kernel picks the
 * TX queue after this program: a write to queue_mapping does not choose it
 * directly (only act_skbedit's netdev_xmit_skip_txqueue() does), but with
 * no queue cached in a local socket and no XPS map, netdev_pick_tx() takes
 * it through skb_tx_hash() as a recorded receive queue, queue_mapping - 1
 * (net/core/dev.c; Documentation/design.rst, "Multi-queue trees").
 */
static __always_inline void qos_egress_queue(struct __sk_buff *skb, const struct qos_cfg *cfg,
					     __u32 cls)
{
	__u32 classid = cfg->classid[cls & (QOS_MAX_CLASSES - 1)];
	__u32 n = cfg->queues, q;

	if (n > 1 && n <= QOS_MAX_QUEUES) {
		q = ((__u64)bpf_get_hash_recalc(skb) * n) >> 32;
		skb->queue_mapping = q + 1;
		if (classid)
			classid = QOS_QUEUE_MAJOR(q) << 16 | (classid & 0xffff);
	}
	if (classid)
		skb->priority = classid;
}

/*
 * A packet the parser gave up on is queued in the default class by us rather
 * than by the qdisc's own default, which HTB cannot change in place: a
 * re-apply that moves the default class keeps its tree. ARP may have a class
 * of its own so that it does not queue behind a flood.
 */
static __always_inline void qos_egress_unparsed(struct __sk_buff *skb, const struct qos_cfg *cfg,
						int reason, __u32 len)
{
	__u32 cls = qos_unparsed_class(cfg, reason);

	qos_count_unparsed(QOS_DIR_EGRESS, reason, len);
	qos_egress_queue(skb, cfg, cls);
}

/*
 * The DSCP rewrite at egress: a plain rule's set-dscp @dscp, then @remark
 * (a reservation's remark, the class's egress remark or the wash), each
 * QOS_REMARK_F | DSCP or 0 for none. Returns 1 if the remark changed the
 * packet, which the counters show as a remark; 0 otherwise. A global
 * function, verified once on its own rather than on every classification
 * path that ends in it (as qos_police_step() at ingress).
 */
__noinline int qos_egress_rewrite(struct __sk_buff *skb, const struct qos_pkt *pkt,
				  __u32 remark, __u32 dscp)
{
	if (!skb || !pkt)
		return 0;
	if (dscp & QOS_REMARK_F)
		qos_remark(skb, pkt, dscp & (QOS_DSCP_MAX - 1));
	if (remark & QOS_REMARK_F)
		return qos_remark(skb, pkt, remark & (QOS_DSCP_MAX - 1)) > 0;
	return 0;
}

/*
 * Which rules the lookup takes for a packet with @cls in its mark: every
 * rule for one without, reservations alone for one with; 0, none, when
 * there are no rules, or no reservations and the mark's class stands
 * (qos_parse_lookup() then skips the configuration's lookup too).
 */
static __always_inline __u32 qos_egress_sel(const struct qos_cfg *cfg, __u32 cls)
{
	if (!cfg->rules)
		return 0;
	if (cls == QOS_CLASS_NONE)
		return QOS_SEL_ANY;
	return cfg->rules & QOS_RULES_RESERVE ? QOS_SEL_RESERVE : 0;
}

/*
 * The class of a parsed packet: a reservation if one matched (policed,
 * its verdict in *@verdict, the class it is queued in, its own or the
 * one it is demoted to, in *@out, its remark in *@remark), else the class
 * in the mark (@cls), else a plain rule (the DSCP it sets at once in
 * *@dscp) or the DSCP. @hit is the lookup's (qos_parse_lookup()).
 */
static __always_inline __u32 qos_egress_class(struct __sk_buff *skb, const struct qos_cfg *cfg,
					      struct qos_pkt *pkt, __u32 len, __u32 cls,
					      const struct qos_rule_hit *hit, __u32 *out,
					      __u32 *verdict, __u8 *dscp, __u8 *remark)
{
	if (!hit->found) {
		if (cls == QOS_CLASS_NONE)
			cls = qos_classify_pkt(skb, cfg, pkt);
		*out = cls;
		return cls;
	}
	*out = cls = hit->class_id & (QOS_MAX_CLASSES - 1);
	if (!(hit->flags & QOS_RULE_F_RESERVE)) {
		*dscp = hit->set_dscp;
		return cls;
	}
	if (hit->policer)
		*verdict = qos_police_step(skb, pkt, hit->policer, len, out);
	if (*verdict == QOS_V_PASS && (hit->flags & QOS_RULE_F_SET_DSCP))
		*remark = QOS_REMARK_F | (hit->dscp & (QOS_DSCP_MAX - 1));
	return cls;
}

SEC("tc")
int qos_egress(struct __sk_buff *skb)
{
	struct qos_rule_hit hit;
	struct qos_pkt pkt;
	struct qos_cfg *cfg;
	__u32 len = skb->len;
	__u32 cls, out, verdict = QOS_V_PASS;
	__u8 dscp = 0, remark = 0;
	int ret;

	cfg = qos_get_cfg();
	if (!cfg)
		return TC_ACT_UNSPEC;

	/* Parsed even when the mark already holds a class: the counters are
	 * per family. */
	cls = qos_mark_get(cfg, skb->mark);
	ret = qos_parse_lookup(skb, &pkt, &hit, qos_egress_sel(cfg, cls), cfg->tunnel_dscp);
	if (ret != QOS_UNP_NONE) {
		qos_egress_unparsed(skb, cfg, ret, len);
		return TC_ACT_UNSPEC;
	}

	/* Counted under the class the packet was policed in, as at
	 * ingress; queued in the class it leaves with. */
	cls = qos_egress_class(skb, cfg, &pkt, len, cls, &hit, &out, &verdict, &dscp, &remark);
	if (verdict == QOS_V_DROP) {
		qos_count(QOS_DIR_EGRESS, cls, pkt.family, verdict, len);
		return TC_ACT_SHOT;
	}
	qos_egress_queue(skb, cfg, out);
	/* By the family of the forwarded header: 6in4 leaves as IPv4. */
	if (!remark)
		remark = cfg->egress_remark[pkt.family == QOS_FAM_IPV6][out & (QOS_MAX_CLASSES - 1)];
	/* Wash (CAKE's term): the DSCP has done its work here, the next
	 * domain gets 0. The class, and a class's own egress remark, stay. */
	if (!(remark & QOS_REMARK_F) && (cfg->flags & QOS_CFG_F_WASH))
		remark = QOS_REMARK_F;
	if (qos_egress_rewrite(skb, &pkt, remark, dscp) > 0)
		verdict = verdict == QOS_V_PASS ? QOS_V_REMARK : verdict;
	qos_count(QOS_DIR_EGRESS, cls, pkt.family, verdict, len);
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "GPL";
