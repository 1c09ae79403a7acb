// SPDX-License-Identifier: GPL-2.0-only
/*
 * tc ingress ("service-policy input"): classify a packet entering the router
 * and stamp its class into skb->mark, where the egress program of whichever
 * interface the packet leaves by will find it.
 *
 * It returns TC_ACT_UNSPEC ("no opinion"): the packet continues to any
 * filter after ours and is then accepted, so qosctl coexists with other
 * clsact users. With download shaping (cfg->ifb_ifindex) every packet it
 * does not drop is redirected instead to the egress of qosctl's IFB,
 * queued there in its class, and the IFB hands it back to this device's
 * receive path (Documentation/design.rst, "Download shaping").
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "lib/classify.h"
#include "lib/count.h"
#include "lib/dscp.h"
#include "lib/lookup.h"
#include "lib/mark.h"
#include "lib/parse.h"
#include "lib/rules.h"
#include "lib/police.h"

/*
 * Download shaping: into class @cls of the IFB's tree. skb->priority, not
 * the mark, picks the class there: HTB and PRIO read skb->priority
 * directly, and nothing between this redirect and the IFB's qdisc rewrites
 * it, so the IFB needs no program of its own. bpf_redirect() fails only on flags it
 * does not know; should it, the packet passes unshaped, and is counted.
 */
static __always_inline int qos_to_ifb(struct __sk_buff *skb, const struct qos_cfg *cfg,
				      __u32 cls, __u32 len)
{
	__u32 classid;

	if (!cfg->ifb_ifindex)
		return TC_ACT_UNSPEC;
	classid = cfg->ifb_classid[cls & (QOS_MAX_CLASSES - 1)];
	if (classid)
		skb->priority = classid;
	if (bpf_redirect(cfg->ifb_ifindex, 0) == TC_ACT_REDIRECT)
		return TC_ACT_REDIRECT;
	qos_count_unparsed(QOS_DIR_INGRESS, QOS_UNP_NO_REDIRECT, len);
	return TC_ACT_UNSPEC;
}

SEC("tc")
int qos_ingress(struct __sk_buff *skb)
{
	struct qos_rule_hit hit;
	struct qos_pkt pkt;
	struct qos_cfg *cfg;
	__u32 verdict = QOS_V_PASS;
	__u32 len = skb->len;
	__u32 policer = 0;
	__u32 cls, out;
	__u8 dscp = 0;
	int ret;

	cfg = qos_get_cfg();
	if (!cfg)
		return TC_ACT_UNSPEC;

	/* The common shapes parsed and looked up inline; the rest in one
	 * global function, which reports a parse error and a lookup's alike. */
	ret = qos_parse_fast(skb, &pkt);
	if (ret == QOS_PARSE_SLOW) {
		ret = qos_parse_lookup(skb, &pkt, &hit, cfg->rules ? QOS_SEL_PLAIN : 0,
				       cfg->tunnel_dscp);
	} else {
		ret = qos_rules_classify(skb, cfg, &pkt, len, &hit, QOS_SEL_PLAIN);
	}
	if (ret != QOS_UNP_NONE) {
		qos_count_unparsed(QOS_DIR_INGRESS, ret, len);
		return qos_to_ifb(skb, cfg, qos_unparsed_class(cfg, ret), len);
	}
	if (hit.found) {
		cls = hit.class_id & (QOS_MAX_CLASSES - 1);
		policer = hit.policer;
		dscp = hit.set_dscp;
	} else {
		cls = qos_classify_pkt(skb, cfg, &pkt);
	}
	/* The rule's DSCP, before the policer: a policer's remark wins. The
	 * policer colours by the DSCP the packet came with. */
	if (dscp & QOS_REMARK_F)
		qos_remark(skb, &pkt, dscp & (QOS_DSCP_MAX - 1));
	/* A rule without a policer of its own is policed with its class. */
	if (!policer)
		policer = cfg->class_policer[cls];

	out = cls;
	/* Counted under the class the packet was policed in; a demoted
	 * packet leaves with its new class in the mark. */
	if (policer)
		verdict = qos_police_step(skb, &pkt, policer, len, &out);
	qos_count(QOS_DIR_INGRESS, cls, pkt.family, verdict, len);
	if (verdict == QOS_V_DROP)
		return TC_ACT_SHOT;
	skb->mark = qos_mark_set(cfg, skb->mark, out);
	return qos_to_ifb(skb, cfg, out, len);
}

char LICENSE[] SEC("license") = "GPL";
