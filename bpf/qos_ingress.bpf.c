// SPDX-License-Identifier: GPL-2.0-only
/*
 * tc ingress ("service-policy input"): classify a packet entering the router
 * and stamp its class into skb->mark, where the egress program of whichever
 * interface the packet leaves by will find it.
 *
 * It returns TC_ACT_UNSPEC ("no opinion"): the packet continues to any
 * filter after ours and is then accepted, so qosctl coexists with other
 * clsact users.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "lib/classify.h"
#include "lib/parse.h"

SEC("tc")
int qos_ingress(struct __sk_buff *skb)
{
	struct qos_pkt pkt;
	struct qos_cfg *cfg;
	__u32 len = skb->len;
	__u32 cls;
	int ret;

	cfg = qos_get_cfg();
	if (!cfg)
		return TC_ACT_UNSPEC;

	ret = qos_parse_skb(skb, &pkt);
	if (ret != QOS_UNP_NONE) {
		qos_count_unparsed(QOS_DIR_INGRESS, ret, len);
		return TC_ACT_UNSPEC;
	}

	cls = qos_classify_nd(skb, cfg, &pkt, qos_classify_dscp(cfg, &pkt));
	skb->mark = qos_mark_set(cfg, skb->mark, cls);
	qos_count(QOS_DIR_INGRESS, cls, pkt.family, QOS_V_PASS, len);
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "GPL";
