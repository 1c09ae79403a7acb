/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Policing at ingress: colour a packet with its policer's token buckets
 * (lib/tb.h) and carry out the action for that colour.
 *
 * Bytes are accounted at L2: the caller passes skb->len, the Ethernet
 * frame without FCS (an offloaded VLAN tag is not in it), the same
 * quantity the class counters count, for IPv4 and IPv6 alike.
 *
 * Concurrency: each policer has its own bpf_spin_lock; the buckets, the
 * time of the last refill and the configuration are read and written
 * under it. An atomic compare-and-swap would need the two buckets and the
 * time in one 64-bit word, which cannot hold them at these rates; per-CPU
 * buckets would each need a share of the rate and mis-police flows that a
 * NIC steers unevenly. The clock is read before taking the lock (no
 * helper may run under it); tb_refill() copes with a reading that is
 * behind the last refill.
 */
#ifndef __QOS_LIB_POLICE_H
#define __QOS_LIB_POLICE_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "../qos_common.h"
#include "maps.h"
#include "parse.h"
#include "tb.h"

/* DSCP bits in the first 16-bit word of each header: IPv4 version/IHL/TOS,
 * IPv6 version/Traffic Class/flow label top bits. ECN and the flow label
 * lie outside the mask and are kept. */
#define QOS_V4_DSCP_MASK	0x00fc
#define QOS_V4_DSCP_SHIFT	2
#define QOS_V6_DSCP_MASK	0x0fc0
#define QOS_V6_DSCP_SHIFT	6

/*
 * Rewrite the DSCP of the header the packet was classified on: the IPv4 or
 * IPv6 header, and for IPv6-in-IPv4 the inner IPv6 header (the tunnel's
 * outer header is the tunnel owner's). Returns 0 or a negative error.
 */
static __always_inline int qos_remark(struct __sk_buff *skb, const struct qos_pkt *pkt,
				      __u8 dscp)
{
	__u32 off = pkt->l3_off;
	__be16 old, new;
	int err;

	if (bpf_skb_load_bytes(skb, off, &old, sizeof(old)))
		return -1;
	if (pkt->table == QOS_TABLE_IPV4)
		new = bpf_htons((bpf_ntohs(old) & ~QOS_V4_DSCP_MASK) |
				((__u16)dscp << QOS_V4_DSCP_SHIFT));
	else
		new = bpf_htons((bpf_ntohs(old) & ~QOS_V6_DSCP_MASK) |
				((__u16)dscp << QOS_V6_DSCP_SHIFT));
	if (new == old)
		return 0;
	if (pkt->table == QOS_TABLE_IPV4) {
		/* The header checksum moves by as much as the TOS word, so
		 * the packet's ones'-complement sum, and a CHECKSUM_COMPLETE
		 * skb->csum over it, stay as they were. */
		err = bpf_skb_store_bytes(skb, off, &new, sizeof(new), 0);
		if (!err)
			err = bpf_l3_csum_replace(skb, off + offsetof(struct iphdr, check),
						  old, new, sizeof(new));
		return err;
	}
	/* No IPv6 header checksum; the transport checksum does not cover the
	 * Traffic Class. Only skb->csum, if complete, must follow. */
	return bpf_skb_store_bytes(skb, off, &new, sizeof(new), BPF_F_RECOMPUTE_CSUM);
}

static __always_inline void qos_police_count(__u32 idx, __u32 fam, __u32 color, __u32 len)
{
	__u32 key = qos_police_stats_key(idx, fam, color);
	struct qos_ctr *ctr;

	ctr = bpf_map_lookup_elem(&qos_police_stats, &key);
	if (ctr) {
		ctr->packets++;
		ctr->bytes += len;
	}
}

/*
 * Police @len bytes of @pkt with policer @idx and act on the colour.
 * Returns the enum qos_verdict; the caller drops on QOS_V_DROP
 * (TC_ACT_SHOT). A demotion writes the new class to *@cls, a remark
 * rewrites the packet. An unknown index passes the packet untouched.
 */
static __always_inline __u32 qos_police(struct __sk_buff *skb, const struct qos_pkt *pkt,
					__u32 idx, __u32 len, __u32 *cls)
{
	__u32 dscp = pkt->dscp & (QOS_DSCP_MAX - 1);
	__u64 now = bpf_ktime_get_ns();
	struct qos_police_action act;
	struct qos_policer *pol;
	__u32 color, pre = TB_GREEN;

	pol = bpf_map_lookup_elem(&qos_policers, &idx);
	if (!pol)
		return QOS_V_PASS;

	bpf_spin_lock(&pol->lock);
	if (pol->flags & QOS_POLICE_F_AWARE) {
		if ((pol->pre_red >> dscp) & 1)
			pre = TB_RED;
		else if ((pol->pre_yellow >> dscp) & 1)
			pre = TB_YELLOW;
	}
	color = tb_police(&pol->tb, &pol->st, now, len, pre);
	if (color > TB_RED)
		color = TB_RED;
	act = pol->act[color];
	bpf_spin_unlock(&pol->lock);

	qos_police_count(idx, pkt->family, color, len);

	switch (act.type) {
	case QOS_PA_DROP:
		return QOS_V_DROP;
	case QOS_PA_REMARK:
		if (qos_remark(skb, pkt, act.arg & (QOS_DSCP_MAX - 1)))
			return QOS_V_PASS;
		return QOS_V_REMARK;
	case QOS_PA_DEMOTE:
		*cls = act.arg & (QOS_MAX_CLASSES - 1);
		return QOS_V_DEMOTE;
	default:
		return QOS_V_PASS;
	}
}

#endif /* __QOS_LIB_POLICE_H */
