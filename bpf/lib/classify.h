/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Class selection, the class in skb->mark, and the per-family counters.
 */
#ifndef __QOS_LIB_CLASSIFY_H
#define __QOS_LIB_CLASSIFY_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "../qos_common.h"
#include "maps.h"
#include "parse.h"

static __always_inline struct qos_cfg *qos_get_cfg(void)
{
	__u32 zero = 0;
	void *inner;

	inner = bpf_map_lookup_elem(&qos_cfg, &zero);
	if (!inner)
		return NULL;
	return bpf_map_lookup_elem(inner, &zero);
}

static __always_inline __u32 qos_classify_dscp(const struct qos_cfg *cfg,
					       const struct qos_pkt *pkt)
{
	__u32 cls = cfg->dscp_class[pkt->table & 1][pkt->dscp & (QOS_DSCP_MAX - 1)];

	return (cls ? cls : cfg->default_class) & (QOS_MAX_CLASSES - 1);
}

/* The class another program (ours, on the ingress interface) left in the mark. */
static __always_inline __u32 qos_mark_get(const struct qos_cfg *cfg, __u32 mark)
{
	return ((mark & cfg->mark_mask) >> cfg->mark_shift) & (QOS_MAX_CLASSES - 1);
}

static __always_inline __u32 qos_mark_set(const struct qos_cfg *cfg, __u32 mark, __u32 cls)
{
	return (mark & ~cfg->mark_mask) | ((cls << cfg->mark_shift) & cfg->mark_mask);
}

static __always_inline void qos_count(__u32 dir, __u32 cls, __u32 fam, __u32 verdict,
				      __u32 len)
{
	__u32 key = qos_stats_key(dir, cls, fam, verdict);
	struct qos_ctr *ctr;

	ctr = bpf_map_lookup_elem(&qos_stats, &key);
	if (ctr) {
		ctr->packets++;
		ctr->bytes += len;
	}
}

static __always_inline void qos_count_unparsed(__u32 dir, __u32 reason, __u32 len)
{
	__u32 key = qos_unparsed_key(dir, reason);
	struct qos_ctr *ctr;

	ctr = bpf_map_lookup_elem(&qos_unparsed, &key);
	if (ctr) {
		ctr->packets++;
		ctr->bytes += len;
	}
}

/*
 * IPv6 neighbour discovery and router advertisements (ICMPv6 133-137) into
 * the network-control class, whatever their Traffic Class: the GRNET seed
 * saw IPv6 BGP sessions break on congested ports while IPv4 ones held, so
 * the neighbour reachability routing depends on must not queue behind a
 * flood. The type is read with bpf_skb_load_bytes() so the parser needs no
 * bounds for it; ND messages carry no extension headers (RFC 4861), so it
 * follows the fixed header directly.
 */
static __always_inline __u32 qos_classify_nd(struct __sk_buff *skb, const struct qos_cfg *cfg,
					     const struct qos_pkt *pkt, __u32 cls)
{
	__u8 type;

	if (!cfg->nd_class || pkt->table != QOS_TABLE_IPV6 || pkt->proto != IPPROTO_ICMPV6)
		return cls;
	if (bpf_skb_load_bytes(skb, pkt->l3_off + sizeof(struct ipv6hdr), &type, 1))
		return cls;
	if (type < 133 || type > 137)
		return cls;
	return cfg->nd_class & (QOS_MAX_CLASSES - 1);
}

#endif /* __QOS_LIB_CLASSIFY_H */
