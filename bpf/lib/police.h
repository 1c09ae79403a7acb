/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Policing at ingress: colour a packet with its policer's token buckets
 * (lib/tb.h) and carry out the action for that colour.
 *
 * Bytes are accounted at L2: the caller passes skb->len, the Ethernet
 * frame without FCS (an offloaded VLAN tag is not in it), for IPv4 and
 * IPv6 alike. A GSO/GRO super-packet is charged and counted as the frames
 * it is on the wire (qos_police_wire()), so the policer's byte counters
 * count wire bytes where the class counters count skb->len.
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
#include "../qos_shared.h"
#include "count.h"
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

/*
 * The bytes, from the start of the frame, that every segment of a GSO
 * packet carries again: link and network headers (for 6in4 both IP
 * headers), up to @l4_off where header @proto starts, and the TCP or UDP
 * header. 0 if they cannot be read. IPv6 extension headers are walked only
 * if a rule already did (qos_parse_ipv6_ext()): otherwise, and for another
 * upper layer, the headers up to the one that follows the IP header, a
 * charge a little low.
 */
static __always_inline __u32 qos_police_seg_hdr(struct __sk_buff *skb, __u32 l4_off, __u32 proto)
{
	__u8 doff;

	if (proto == IPPROTO_UDP)
		return l4_off + 8;
	if (proto != IPPROTO_TCP)
		return l4_off;
	if (bpf_skb_load_bytes(skb, l4_off + 12, &doff, 1))
		return 0;
	return l4_off + (doff >> 4) * 4;
}

/*
 * What a packet of @len bytes (skb->len) costs the bucket, in the low 32
 * bits, and the bytes a bucket must hold to admit it, in the high 32. A GSO
 * or GRO packet leaves as gso_segs frames, each with the headers again: it
 * costs skb->len plus (segs - 1) x those headers, and is admitted on one
 * full segment's worth (Documentation/policing.rst, GSO and GRO). Any
 * other packet costs and needs @len. gso_segs is trusted only up to the
 * segments the payload fills (0, left for the device to count by
 * SKB_GSO_DODGY senders, is that too), and the cost is capped at
 * TB_DEBT_MAX, the deepest debt the buckets are built for (BIG TCP's
 * 512 kB packets stay below it).
 *
 * A global function, verified once on its own: the data path after it
 * sees one unknown value, not one path per way out of here, each of which
 * would have the verifier walk the token buckets again.
 */
__weak __attribute__((noinline)) __u64 qos_police_wire(struct __sk_buff *skb, __u32 l4_off, __u32 proto,
						__u32 len)
{
	__u32 size = skb->gso_size, segs = skb->gso_segs, hdr, most;
	__u64 wire;

	if (!size || size > 0xffff)
		return (__u64)len << 32 | len;
	hdr = qos_police_seg_hdr(skb, l4_off, proto);
	if (!hdr || hdr >= len || hdr > 0xffff)
		return (__u64)len << 32 | len;
	most = (len - hdr + size - 1) / size;
	if (!segs || segs > most)
		segs = most;
	if (segs < 2)
		return (__u64)len << 32 | len;
	wire = len + (__u64)(segs - 1) * hdr;
	if (wire > TB_DEBT_MAX)
		wire = TB_DEBT_MAX;
	return (__u64)(hdr + size) << 32 | wire;
}

/*
 * Police @len bytes of @pkt with policer @pol, counted in @ctrs (NULL: not
 * counted; @shared: added to atomically), and act on the colour. Returns the enum qos_verdict; the
 * caller drops on QOS_V_DROP (TC_ACT_SHOT). A demotion writes the new
 * class to *@cls, a remark rewrites the packet.
 */
static __always_inline __u32 qos_police(struct __sk_buff *skb, const struct qos_pkt *pkt,
					struct qos_policer *pol, struct qos_police_ctrs *ctrs,
					int shared, __u32 len, __u32 *cls)
{
	__u32 dscp = pkt->dscp & (QOS_DSCP_MAX - 1);
	struct qos_police_action act;
	__u32 color, pre = TB_GREEN, wire;
	__u64 cost;

	if (pol->flags & QOS_POLICE_F_AWARE) {
		if ((pol->pre_red >> dscp) & 1)
			pre = TB_RED;
		else if ((pol->pre_yellow >> dscp) & 1)
			pre = TB_YELLOW;
	}
	/* Most packets are not GSO: no call for them. */
	cost = skb->gso_size ? qos_police_wire(skb, pkt->l4_off, pkt->proto, len) :
			       (__u64)len << 32 | len;
	wire = cost;
	color = tb_police_gso(&pol->tb, &pol->st, qos_police_now(pol), wire, cost >> 32, pre);
	if (color > TB_RED)
		color = TB_RED;
	act = pol->act[color];

	if (ctrs && pkt->family < QOS_FAM_MAX)
		qos_ctr_add(&ctrs->c[pkt->family][color], wire, shared);

	switch (act.type) {
	case QOS_PA_DROP:
		return QOS_V_DROP;
	case QOS_PA_REMARK:
		if (qos_remark(skb, pkt, act.arg & (QOS_DSCP_MAX - 1)) < 0)
			return QOS_V_PASS;
		return QOS_V_REMARK;
	case QOS_PA_DEMOTE:
		*cls = act.arg & (QOS_MAX_CLASSES - 1);
		return QOS_V_DEMOTE;
	default:
		return QOS_V_PASS;
	}
}

/*
 * Rule policers, from their hash (qos_shared.h), in a function of their
 * own: in the function that also looks up the class policers' arrays,
 * clang merges the lookups of the two kinds into one call on either map,
 * which the verifier can then inline for neither, and a class policer
 * paid two helper calls (performance.rst, "Rule policers"). An unknown id
 * passes the packet untouched.
 */
static __noinline int qos_police_rule(struct __sk_buff *skb, const struct qos_pkt *pkt,
				      __u32 idx, __u32 len, __u32 *out)
{
	struct qos_rule_policer *rp = bpf_map_lookup_elem(&qos_rule_pols, &idx);

	return rp ? qos_police(skb, pkt, &rp->pol, &rp->ctrs, 1, len, out) : QOS_V_PASS;
}

/*
 * The policer step as a global function: the verifier checks it once, on
 * its own, instead of on every path of the program that reaches it (its
 * lock-free bucket retries its compare-and-swap, and every class and rule
 * path walked it again: 0.3 s of verification per load, now a few ms).
 * The pointers are the caller's stack; NULL only to please the verifier.
 * Weak: both programs include it, and the object keeps one copy.
 */
__weak __noinline int qos_police_step(struct __sk_buff *skb, const struct qos_pkt *pkt,
				      __u32 policer, __u32 len, __u32 *out)
{
	struct qos_police_ctrs *ctrs;
	struct qos_policer *pol;

	if (!skb || !pkt || !out)
		return QOS_V_PASS;
	if (policer >= QOS_POLICER_RULE_FIRST)
		return qos_police_rule(skb, pkt, policer, len, out);
	ctrs = bpf_map_lookup_elem(&qos_police_stats, &policer);
	pol = bpf_map_lookup_elem(&qos_policers, &policer);
	return pol ? qos_police(skb, pkt, pol, ctrs, 0, len, out) : QOS_V_PASS;
}

#endif /* __QOS_LIB_POLICE_H */
