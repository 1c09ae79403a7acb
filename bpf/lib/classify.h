/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Class selection for a packet no rule matched: its DSCP / Traffic Class,
 * the ND and ACK classes; the class of a packet the parser gave up on.
 */
#ifndef __QOS_LIB_CLASSIFY_H
#define __QOS_LIB_CLASSIFY_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "../qos_shared.h"
#include "parse.h"

static __always_inline __u32 qos_classify_dscp(const struct qos_cfg *cfg,
					       const struct qos_pkt *pkt)
{
	__u32 cls = cfg->dscp_class[pkt->dscp_table & 1][pkt->dscp & (QOS_DSCP_MAX - 1)];

	return (cls ? cls : cfg->default_class) & (QOS_MAX_CLASSES - 1);
}

/* The class of a packet the parser gave up on: ARP may have a class of its
 * own so that it does not queue behind a flood, the rest the default. */
static __always_inline __u32 qos_unparsed_class(const struct qos_cfg *cfg, int reason)
{
	__u32 cls = reason == QOS_UNP_NON_IP && cfg->nonip_class ? cfg->nonip_class :
								    cfg->default_class;

	return cls & (QOS_MAX_CLASSES - 1);
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

#define QOS_TCP_FIN	0x01
#define QOS_TCP_SYN	0x02
#define QOS_TCP_RST	0x04
#define QOS_TCP_ACK	0x10

/*
 * Pure TCP acknowledgements (ACK set; no SYN, FIN or RST; no payload; not a
 * fragment; no IPv6 extension header) of the default class into the ACK
 * class, both families and the inner IPv6 of 6in4. On an asymmetric link the ACKs of a download queue
 * behind the upload and hold the download back (sqm-scripts and CAKE's
 * ack-filter address the same problem). Only the default class: an ACK
 * whose DSCP put it in a class of its own stays there. A header that cannot
 * be read leaves the class as it is.
 */
/*
 * 1 if the TCP header at @l4_off is a pure ACK whose packet ends at
 * @l3_end. A global function, so the verifier checks it once rather than
 * on every path of the caller that reaches it (inlined, it tripled the
 * verification of both programs); __weak because both program files
 * include it and the linked object keeps one.
 */
__noinline __weak int qos_tcp_pure_ack(struct __sk_buff *skb, __u32 l4_off, __u32 l3_end)
{
	__u32 hlen;
	__u8 th[2];

	/* Data offset and flags: bytes 12 and 13 of the TCP header. */
	if (!skb || bpf_skb_load_bytes(skb, l4_off + 12, th, sizeof(th)))
		return 0;
	hlen = (th[0] >> 4) * 4;
	if (hlen < 20 || l4_off + hlen != l3_end)
		return 0;
	return (th[1] & (QOS_TCP_ACK | QOS_TCP_SYN | QOS_TCP_FIN | QOS_TCP_RST)) == QOS_TCP_ACK;
}

static __always_inline __u32 qos_classify_ack(struct __sk_buff *skb, const struct qos_cfg *cfg,
					      struct qos_pkt *pkt, __u32 cls)
{
	if (!cfg->ack_class || cls != (cfg->default_class & (QOS_MAX_CLASSES - 1)))
		return cls;
	/* TCP right after the IP header only: walking IPv6 extension headers
	 * here too would cost the verifier more than the rest of the program
	 * (an ACK carries none in practice), and whether a protocol rule
	 * walked them must not change the answer. */
	if (pkt->proto != IPPROTO_TCP || pkt->frag != QOS_FRAG_NONE ||
	    (pkt->table == QOS_TABLE_IPV6 && pkt->l4_off != pkt->l3_off + sizeof(struct ipv6hdr)))
		return cls;
	if (!qos_tcp_pure_ack(skb, pkt->l4_off, pkt->l3_end))
		return cls;
	return cfg->ack_class & (QOS_MAX_CLASSES - 1);
}

/* The class of a packet no rule matched: its DSCP / Traffic Class, then
 * the profile's ND and ACK classes. */
static __always_inline __u32 qos_classify_pkt(struct __sk_buff *skb, const struct qos_cfg *cfg,
					      struct qos_pkt *pkt)
{
	__u32 cls = qos_classify_nd(skb, cfg, pkt, qos_classify_dscp(cfg, pkt));

	return qos_classify_ack(skb, cfg, pkt, cls);
}

#endif /* __QOS_LIB_CLASSIFY_H */
