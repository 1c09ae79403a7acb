/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Header parsing shared by the ingress and egress programs.
 *
 * The parser never decides a packet's fate: anything it cannot make sense of
 * is reported as an unparsed reason and the caller lets it pass unchanged.
 */
#ifndef __QOS_LIB_PARSE_H
#define __QOS_LIB_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "../qos_shared.h"

/* Inline VLAN tags walked. The outermost tag of a received frame is usually
 * already in skb->vlan_tci (the stack untags before tc ingress), so two
 * inline tags cover 802.1ad QinQ in every case. */
#define QOS_VLAN_MAX	2

/* Enough linear data for Ethernet, two tags, IPv4 with options and an
 * inner IPv6 header; pulled only when a packet's headers are not linear. */
#define QOS_PULL_LEN	128

#ifndef ETH_P_8021AD
#define ETH_P_8021AD	0x88A8
#endif

struct qos_vlan_hdr {
	__be16 tci;
	__be16 proto;
};

/*
 * skb->data and skb->data_end, loaded afresh: clang otherwise reuses a
 * 32-bit copy of an earlier load and zero-extends it, which the verifier
 * refuses as pointer arithmetic.
 */
static __always_inline void *qos_skb_data(const struct __sk_buff *skb)
{
	void *p;

	asm volatile("%0 = *(u32 *)(%1 + %2)" : "=r"(p)
		     : "r"(skb), "i"(__builtin_offsetof(struct __sk_buff, data)));
	return p;
}

static __always_inline void *qos_skb_data_end(const struct __sk_buff *skb)
{
	void *p;

	asm volatile("%0 = *(u32 *)(%1 + %2)" : "=r"(p)
		     : "r"(skb), "i"(__builtin_offsetof(struct __sk_buff, data_end)));
	return p;
}

/*
 * pkt->frag and pkt->ports: none of their values is 0. The verifier knows
 * a stack byte stored as 0 for what it is, but not one stored as another
 * constant, so with a 0 the ways that read the ports and those that did
 * not, or that found a Fragment header and those that did not, reached
 * the rule lookup's loop as different states, and it was walked for each
 * (ingress 66662 -> 53087 processed instructions for the ports, -> 31895
 * for the fragments). The loop reads such a byte as unknown, and the ways
 * meet.
 */
#define QOS_FRAG_NONE	1	/* not a fragment */
#define QOS_FRAG_FIRST	2	/* the first fragment: L4 header, not all */
#define QOS_FRAG_LATER	3	/* another fragment: no L4 header */

#define QOS_PORTS_NONE	1	/* sport and dport not read */
#define QOS_PORTS_READ	2

struct qos_pkt {
	__u32 l3_off;		/* offset of the header that was classified */
	__u32 l3_end;		/* where its payload ends, by its length field */
	__u32 flowlabel;	/* IPv6 flow label, host order, 20 bits */
	__u8 family;		/* enum qos_family */
	__u8 table;		/* enum qos_table the DSCP is looked up in */
	__u8 dscp;
	__u8 proto;		/* IPv4 protocol / IPv6 next header, upper-layer
				 * protocol once qos_parse_ipv6_ext() ran */
	__u32 l4_off;		/* upper-layer header, once known (see above) */
	__u8 frag;		/* QOS_FRAG_*: the whole upper-layer packet or a
				 * fragment, first (has the L4 header) or later */
	__u8 ports;		/* QOS_PORTS_*: sport/dport read or not */
	__be16 sport;
	__be16 dport;
	__u8 pad;
	__u8 tunnel;		/* 6in4 whose inner IPv6 header parsed: l3_off
				 * is the inner header, outer_off the outer */
	__u8 outer_dscp;	/* DSCP of the outer IPv4 header of 6in4 */
	__u8 dscp_table;	/* enum qos_table of the header pkt->dscp is
				 * from: the DSCP table it is looked up in */
	__u8 inner_trunc;	/* the inner header of 6in4 ran off the linear
				 * part: worth a pull and a second parse */
	__u32 outer_off;	/* the forwarded (outermost) IP header */
};

/* The extension headers qos_parse_ipv6_ext() follows. */
static __always_inline int qos_ipv6_is_ext(__u8 nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_DSTOPTS ||
	       nh == IPPROTO_FRAGMENT || nh == IPPROTO_AH;
}

/*
 * A packet whose length field runs past the end of the frame is truncated;
 * one that runs past the end of its enclosing packet (@limit, the outer IPv4
 * packet of 6in4, when the frame is longer) has a bad length. A length of 0
 * is left unchecked: an IPv6 jumbogram, or a BIG TCP super-packet at egress,
 * whose length is skb->len.
 */
static __always_inline int qos_parse_ipv6(void *data, void *data_end, __u32 off,
					  __u32 limit, __u32 len, struct qos_pkt *pkt)
{
	struct ipv6hdr *ip6 = data + off;
	__u32 vtc, plen;

	if ((void *)(ip6 + 1) > data_end)
		return QOS_UNP_TRUNCATED;
	vtc = bpf_ntohl(*(__be32 *)ip6);
	if (vtc >> 28 != 6)
		return QOS_UNP_BAD_HDR;
	plen = bpf_ntohs(ip6->payload_len);
	if (plen && off + sizeof(*ip6) + plen > limit)
		return limit < len ? QOS_UNP_BAD_LEN : QOS_UNP_TRUNCATED;

	pkt->l3_off = off;
	pkt->l3_end = plen ? off + sizeof(*ip6) + plen : limit;
	pkt->table = QOS_TABLE_IPV6;
	pkt->dscp = (vtc >> 22) & 0x3f;
	pkt->flowlabel = vtc & QOS_FLOWLABEL_MASK;
	pkt->proto = ip6->nexthdr;
	pkt->l4_off = off + sizeof(*ip6);
	pkt->frag = QOS_FRAG_NONE;
	return QOS_UNP_NONE;
}

/*
 * Parse Ethernet, up to QOS_VLAN_MAX inline 802.1Q/802.1ad tags, and the IP
 * header, with its options. Every IPv4 fragment is classified on its DSCP
 * and addresses, which each fragment carries.
 *
 * IPv6-in-IPv4 (protocol 41) counts as ipv6in4. Its inner IPv6 header is
 * parsed too: rules match its addresses, flow label and ports, and
 * qos_tunnel_dscp() picks which header's DSCP classifies it. When there is
 * no inner header (a later fragment of the outer packet) or it does not
 * parse (wrong version, bad length, truncated), the packet is still
 * classified and policed, on its outer header alone: a malformed inner
 * header must not make EF in the outer one pass unpoliced.
 */
/* Ethernet and up to QOS_VLAN_MAX VLAN tags: the L3 protocol in @proto,
 * its offset in @off. */
static __always_inline int qos_parse_l2(void *data, void *data_end, __u32 *off, __be16 *proto)
{
	struct ethhdr *eth = data;
	int i;

	if ((void *)(eth + 1) > data_end)
		return QOS_UNP_TRUNCATED;
	*proto = eth->h_proto;
	*off = sizeof(*eth);
#pragma unroll
	for (i = 0; i < QOS_VLAN_MAX; i++) {
		struct qos_vlan_hdr *vh = data + *off;

		if (*proto != bpf_htons(ETH_P_8021Q) && *proto != bpf_htons(ETH_P_8021AD))
			break;
		if ((void *)(vh + 1) > data_end)
			return QOS_UNP_TRUNCATED;
		*proto = vh->proto;
		*off += sizeof(*vh);
	}
	return QOS_UNP_NONE;
}

/* Fill @pkt from the IPv4 header @ip4 at @off, @ihl bytes long, whose
 * packet ends at @end; returns its fragment field, host order. */
static __always_inline __u16 qos_parse_ipv4_fields(const struct iphdr *ip4, __u32 off, __u32 ihl,
						   __u32 end, struct qos_pkt *pkt)
{
	__u16 frag = bpf_ntohs(ip4->frag_off);

	pkt->family = QOS_FAM_IPV4;
	pkt->table = QOS_TABLE_IPV4;
	pkt->l3_off = off;
	pkt->l3_end = end;
	pkt->dscp = ip4->tos >> 2;
	pkt->outer_dscp = pkt->dscp;
	pkt->proto = ip4->protocol;
	pkt->flowlabel = 0;
	pkt->l4_off = off + ihl;
	pkt->frag = frag & 0x1fff ? QOS_FRAG_LATER : frag & 0x2000 ? QOS_FRAG_FIRST : QOS_FRAG_NONE;
	return frag;
}

static __always_inline int qos_parse(struct __sk_buff *skb, struct qos_pkt *pkt)
{
	void *data_end = (void *)(long)skb->data_end;
	void *data = (void *)(long)skb->data;
	__u32 len = skb->len;
	struct iphdr *ip4;
	__u32 ihl, tot, end, off;
	__u16 frag;
	__be16 proto;
	int ret;

	ret = qos_parse_l2(data, data_end, &off, &proto);
	if (ret != QOS_UNP_NONE)
		return ret;
	pkt->tunnel = 0;
	pkt->inner_trunc = 0;
	pkt->outer_off = off;
	if (proto == bpf_htons(ETH_P_IPV6)) {
		pkt->family = QOS_FAM_IPV6;
		return qos_parse_ipv6(data, data_end, off, len, len, pkt);
	}
	if (proto != bpf_htons(ETH_P_IP))
		return QOS_UNP_NON_IP;

	ip4 = data + off;
	if ((void *)(ip4 + 1) > data_end)
		return QOS_UNP_TRUNCATED;
	if (ip4->version != 4 || ip4->ihl < 5)
		return QOS_UNP_BAD_HDR;
	ihl = ip4->ihl * 4;
	if (data + off + ihl > data_end)
		return QOS_UNP_TRUNCATED;
	tot = bpf_ntohs(ip4->tot_len);
	if (tot && tot < ihl)
		return QOS_UNP_BAD_LEN;
	if (off + tot > len)
		return QOS_UNP_TRUNCATED;
	end = tot ? off + tot : len;

	frag = qos_parse_ipv4_fields(ip4, off, ihl, end, pkt);
	if (ip4->protocol != IPPROTO_IPV6)
		return QOS_UNP_NONE;
	pkt->family = QOS_FAM_IPV6IN4;
	if (frag & 0x1fff)
		return QOS_UNP_NONE;
	/* A first fragment holds only part of the inner packet: its length
	 * cannot be checked, nor its upper layer. */
	ret = qos_parse_ipv6(data, data_end, off + ihl, frag & 0x2000 ? ~0U : end, len, pkt);
	if (ret != QOS_UNP_NONE) {
		/* pkt still describes the outer header. */
		pkt->inner_trunc = ret == QOS_UNP_TRUNCATED;
		return QOS_UNP_NONE;
	}
	pkt->tunnel = 1;
	if (frag & 0x2000)
		pkt->frag = QOS_FRAG_FIRST;
	return QOS_UNP_NONE;
}

/*
 * The DSCP a 6in4 packet is classified, policed and remarked by (@mode, enum
 * qos_tunnel_dscp, from the profile's tunnel-dscp). A DiffServ node selects
 * the PHB by the header it forwards (RFC 2474, 2475): the outer one. But a
 * tunnel entry that does not copy the Traffic Class out (RFC 2983's
 * "pipe" model without a mapping, the seeds' 6in4 tunnels) leaves the outer
 * DSCP 0; auto then falls back to the inner Traffic Class. A packet whose
 * inner header did not parse has only its outer DSCP.
 */
static __always_inline void qos_tunnel_dscp(struct qos_pkt *pkt, __u32 mode)
{
	pkt->dscp_table = pkt->table;
	if (!pkt->tunnel || mode == QOS_TUNNEL_INNER ||
	    (mode == QOS_TUNNEL_AUTO && !pkt->outer_dscp))
		return;
	pkt->dscp = pkt->outer_dscp;
	pkt->dscp_table = QOS_TABLE_IPV4;
}

/* Extension headers followed to reach the upper-layer protocol. */
#define QOS_IPV6_EXT_MAX	8

/*
 * Walk the IPv6 extension headers after the header qos_parse() classified
 * and leave the upper-layer protocol in pkt->proto and where its header
 * starts in pkt->l4_off. Called only when a rule compares the protocol, so
 * other packets never pay for it.
 *
 * Hop-by-Hop, Routing, Fragment, Destination Options and AH are followed; any
 * other value is the upper-layer protocol (ESP, No Next Header, Mobility
 * included, so rules can match them). A later fragment ends the walk at its
 * Fragment header, whose next header is the protocol the fragmentable part
 * starts with: every fragment of a packet gets the same answer, as IPv4
 * fragments do. Reads go through bpf_skb_load_bytes(), so a chain longer
 * than the linear area needs no pull.
 */
static __always_inline int qos_parse_ipv6_ext(struct __sk_buff *skb, struct qos_pkt *pkt)
{
	__u32 off = pkt->l3_off + sizeof(struct ipv6hdr);
	__u32 len = skb->len;
	__u8 nh = pkt->proto;
	__u8 hdr[4];
	__u32 hlen;
	int i;

	/* Unrolled: as a loop, clang may lay it out so that its last block
	 * falls through into its head, a back-edge the 6.1 verifier refuses
	 * ("back-edge from insn N to N+1") even where it accepts loops. */
#pragma unroll
	for (i = 0; i < QOS_IPV6_EXT_MAX; i++) {
		if (!qos_ipv6_is_ext(nh)) {
			pkt->proto = nh;
			pkt->l4_off = off;
			return QOS_UNP_NONE;
		}
		/* RFC 8200 4.1: Hop-by-Hop only right after the IPv6 header. */
		if (nh == IPPROTO_HOPOPTS && i)
			return QOS_UNP_BAD_EXT;
		/* Every extension header is at least 8 bytes. Past the frame
		 * is truncated, past the payload length a bad length. */
		if (off + 8 > pkt->l3_end)
			return off + 8 > len ? QOS_UNP_TRUNCATED : QOS_UNP_BAD_LEN;
		if (bpf_skb_load_bytes(skb, off, hdr, sizeof(hdr)))
			return QOS_UNP_TRUNCATED;
		if (nh == IPPROTO_FRAGMENT) {
			if ((hdr[2] << 8 | hdr[3]) & 0xfff8) {
				pkt->proto = hdr[0];
				pkt->frag = QOS_FRAG_LATER;
				return QOS_UNP_NONE;
			}
			/* A first fragment: the upper-layer header is there,
			 * but not the whole packet. */
			pkt->frag = QOS_FRAG_FIRST;
			hlen = 8;
		} else if (nh == IPPROTO_AH) {
			hlen = (hdr[1] + 2) * 4;
		} else {
			hlen = (hdr[1] + 1) * 8;
		}
		if (off + hlen > pkt->l3_end)
			return off + hlen > len ? QOS_UNP_TRUNCATED : QOS_UNP_BAD_LEN;
		nh = hdr[0];
		off += hlen;
	}
	if (qos_ipv6_is_ext(nh))
		return QOS_UNP_EXT_CHAIN;
	pkt->proto = nh;
	pkt->l4_off = off;
	return QOS_UNP_NONE;
}

/* Protocols whose header starts with 16-bit source and destination ports. */
static __always_inline int qos_proto_has_ports(__u8 proto)
{
	return proto == IPPROTO_TCP || proto == IPPROTO_UDP || proto == IPPROTO_SCTP ||
	       proto == IPPROTO_UDPLITE;
}

/*
 * Read the ports of a TCP, UDP, SCTP or UDP-Lite packet into pkt->sport and
 * pkt->dport, after qos_parse_ipv6_ext() for IPv6. A later fragment has no
 * ports, nor has a packet whose length ends before them: ports stays NONE
 * and the packet matches no rule that compares a port, while a rule on the
 * protocol alone still matches it (every fragment carries the protocol).
 */
static __always_inline void qos_parse_ports(struct __sk_buff *skb, struct qos_pkt *pkt)
{
	__be16 ports[2];

	pkt->ports = QOS_PORTS_NONE;
	if (pkt->frag == QOS_FRAG_LATER || !qos_proto_has_ports(pkt->proto) ||
	    pkt->l4_off + 4 > pkt->l3_end)
		return;
	if (bpf_skb_load_bytes(skb, pkt->l4_off, ports, sizeof(ports)))
		return;
	pkt->sport = ports[0];
	pkt->dport = ports[1];
	pkt->ports = QOS_PORTS_READ;
}

/*
 * Parse, pulling the headers into the linear area first if the packet is
 * non-linear and the first attempt ran off the end of the linear part (an
 * inner header of 6in4 included), then pick the DSCP of a tunnelled packet
 * (@tunnel_mode: qos_cfg.tunnel_dscp). bpf_skb_pull_data() invalidates
 * packet pointers, hence the second call.
 *
 * Inlined only into the global qos_parse_lookup() (bpf/lib/lookup.h),
 * where @pkt is the caller's memory: the verifier does not follow what is
 * written there, so the rule lookup after it reads unknown values, one
 * state instead of one per way through the headers (family, tags,
 * fragment, tunnel). So every field the rule lookup and the callers use as
 * an index or offset is bounded where it is read (& 1 for the table, & 63
 * for the DSCP, QOS_L3_OFF_MAX, the helpers' own checks).
 */
static __always_inline int qos_parse_skb(struct __sk_buff *skb, struct qos_pkt *pkt,
					 __u32 tunnel_mode)
{
	__u32 linear = skb->data_end - skb->data;
	int ret;

	ret = qos_parse(skb, pkt);
	if ((ret == QOS_UNP_TRUNCATED || pkt->inner_trunc) &&
	    skb->len > linear &&
	    !bpf_skb_pull_data(skb, skb->len < QOS_PULL_LEN ? skb->len : QOS_PULL_LEN))
		ret = qos_parse(skb, pkt);
	if (ret == QOS_UNP_NONE)
		qos_tunnel_dscp(pkt, tunnel_mode);
	return ret;
}

/* qos_parse_fast(): leave the packet to qos_parse_lookup(). */
#define QOS_PARSE_SLOW	(-1)

/*
 * The common shapes, inline: untagged Ethernet, then IPv6, or IPv4 without
 * options that is not 6in4, every header in the linear part and its length
 * field within the frame. It fills @pkt as qos_parse_skb() would and returns
 * QOS_UNP_NONE; any other packet, a malformed one included, gets
 * QOS_PARSE_SLOW and goes through qos_parse_lookup(), which finds its
 * reason.
 * A call to a global function costs as much as the whole DSCP-only
 * classification (the JIT's return thunk), so most packets skip it.
 */
static __always_inline int qos_parse_fast(struct __sk_buff *skb, struct qos_pkt *pkt)
{
	void *data_end = qos_skb_data_end(skb);
	void *data = qos_skb_data(skb);
	struct ethhdr *eth = data;
	struct iphdr *ip4 = (void *)(eth + 1);
	__u32 len = skb->len, tot;

	if ((void *)(ip4 + 1) > data_end)
		return QOS_PARSE_SLOW;
	pkt->tunnel = 0;
	pkt->inner_trunc = 0;
	pkt->outer_off = sizeof(*eth);
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		pkt->family = QOS_FAM_IPV6;
		if (qos_parse_ipv6(data, data_end, sizeof(*eth), len, len, pkt) != QOS_UNP_NONE)
			return QOS_PARSE_SLOW;
		pkt->dscp_table = QOS_TABLE_IPV6;
		return QOS_UNP_NONE;
	}
	if (eth->h_proto != bpf_htons(ETH_P_IP) || *(__u8 *)ip4 != 0x45 ||
	    ip4->protocol == IPPROTO_IPV6)
		return QOS_PARSE_SLOW;
	tot = bpf_ntohs(ip4->tot_len);
	if (tot < sizeof(*ip4) || sizeof(*eth) + tot > len)
		return QOS_PARSE_SLOW;
	qos_parse_ipv4_fields(ip4, sizeof(*eth), sizeof(*ip4), sizeof(*eth) + tot, pkt);
	pkt->dscp_table = QOS_TABLE_IPV4;
	return QOS_UNP_NONE;
}

#endif /* __QOS_LIB_PARSE_H */
