/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Policing at ingress: colour a packet with its policer's token buckets
 * (lib/tb.h) and carry out the action for that colour.
 *
 * Bytes are accounted at L2: the caller passes skb->len, the Ethernet
 * frame without FCS (an offloaded VLAN tag is not in it), the same
 * quantity the class counters count, for IPv4 and IPv6 alike.
 *
 * Concurrency: no lock. tb_police() updates the buckets and the time of
 * the last refill with one compare-and-swap per word (lib/tb.h); the rest
 * of the policer (rates, sizes, colour sets, actions) is configuration,
 * read with plain loads, that only qosctl writes.
 *
 * Clock: jiffies when the policer's buckets hold at least ten ticks of
 * tokens each (tb_params_clock(), decided by qosctl, which knows the tick
 * from clock_getres(CLOCK_MONOTONIC_COARSE)), CLOCK_MONOTONIC otherwise.
 * The verifier inlines bpf_jiffies64() into one load; bpf_ktime_get_ns()
 * is a helper call and a clocksource read, which on a virtual machine costs
 * more than the whole rest of the policer. At HZ=250 (Debian) ten ticks
 * are 40 ms of the rate: the auto burst up to 50 Mbit/s, a burst given as
 * 40 ms or more at any rate.
 */
#ifndef __QOS_LIB_POLICE_H
#define __QOS_LIB_POLICE_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "../qos_common.h"
#include "dscp.h"
#include "maps.h"
#include "parse.h"
#include "tb.h"

/*
 * The clock reading for policer @pol: jiffies if qosctl chose them
 * (tb_params.tick_ns), lifted by 2^63 ns into a range of their own so that
 * a policer that changes clock at a reconfiguration sees another clock and
 * starts over from its first reading (tb_claim()); CLOCK_MONOTONIC
 * otherwise.
 */
static __always_inline __u64 qos_police_now(const struct qos_policer *pol)
{
	__u64 tick = pol->tb.tick_ns;

	if (tick)
		return bpf_jiffies64() * tick + 2 * TB_CLOCK_OTHER;
	return bpf_ktime_get_ns();
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
	struct qos_police_action act;
	struct qos_policer *pol;
	__u32 color, pre = TB_GREEN;

	pol = bpf_map_lookup_elem(&qos_policers, &idx);
	if (!pol)
		return QOS_V_PASS;

	if (pol->flags & QOS_POLICE_F_AWARE) {
		if ((pol->pre_red >> dscp) & 1)
			pre = TB_RED;
		else if ((pol->pre_yellow >> dscp) & 1)
			pre = TB_YELLOW;
	}
	color = tb_police(&pol->tb, &pol->st, qos_police_now(pol), len, pre);
	if (color > TB_RED)
		color = TB_RED;
	act = pol->act[color];

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
