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
#include "../qos_common.h"

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

struct qos_pkt {
	__u32 l3_off;		/* offset of the header that was classified */
	__u32 flowlabel;	/* IPv6 flow label, host order, 20 bits */
	__u8 family;		/* enum qos_family */
	__u8 table;		/* enum qos_table the DSCP is looked up in */
	__u8 dscp;
	__u8 proto;		/* IPv4 protocol / IPv6 next header */
};

static __always_inline int qos_parse_ipv6(void *data, void *data_end, __u32 off,
					  struct qos_pkt *pkt)
{
	struct ipv6hdr *ip6 = data + off;
	__u32 vtc;

	if ((void *)(ip6 + 1) > data_end)
		return QOS_UNP_TRUNCATED;
	if (ip6->version != 6)
		return QOS_UNP_BAD_HDR;

	vtc = bpf_ntohl(*(__be32 *)ip6);
	pkt->l3_off = off;
	pkt->table = QOS_TABLE_IPV6;
	pkt->dscp = (vtc >> 22) & 0x3f;
	pkt->flowlabel = vtc & 0xfffff;
	pkt->proto = ip6->nexthdr;
	return QOS_UNP_NONE;
}

/*
 * Parse Ethernet, up to QOS_VLAN_MAX inline 802.1Q/802.1ad tags, and the IP
 * header. IPv6-in-IPv4 (protocol 41) is classified on the inner IPv6 header
 * when the outer packet is not a later fragment (only the first fragment
 * carries the inner header).
 */
static __always_inline int qos_parse(struct __sk_buff *skb, struct qos_pkt *pkt)
{
	void *data_end = (void *)(long)skb->data_end;
	void *data = (void *)(long)skb->data;
	struct ethhdr *eth = data;
	__u32 off = sizeof(*eth);
	struct iphdr *ip4;
	__be16 proto;
	__u32 ihl;
	int i;

	if ((void *)(eth + 1) > data_end)
		return QOS_UNP_TRUNCATED;
	proto = eth->h_proto;

#pragma unroll
	for (i = 0; i < QOS_VLAN_MAX; i++) {
		struct qos_vlan_hdr *vh = data + off;

		if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD))
			break;
		if ((void *)(vh + 1) > data_end)
			return QOS_UNP_TRUNCATED;
		proto = vh->proto;
		off += sizeof(*vh);
	}

	if (proto == bpf_htons(ETH_P_IPV6)) {
		pkt->family = QOS_FAM_IPV6;
		return qos_parse_ipv6(data, data_end, off, pkt);
	}
	if (proto != bpf_htons(ETH_P_IP))
		return QOS_UNP_NON_IP;

	ip4 = data + off;
	if ((void *)(ip4 + 1) > data_end)
		return QOS_UNP_TRUNCATED;
	if (ip4->version != 4 || ip4->ihl < 5)
		return QOS_UNP_BAD_HDR;
	ihl = ip4->ihl * 4;

	pkt->family = QOS_FAM_IPV4;
	pkt->table = QOS_TABLE_IPV4;
	pkt->l3_off = off;
	pkt->dscp = ip4->tos >> 2;
	pkt->proto = ip4->protocol;
	pkt->flowlabel = 0;

	if (ip4->protocol == IPPROTO_IPV6 &&
	    !(ip4->frag_off & bpf_htons(0x1fff))) {
		struct qos_pkt inner;

		if (qos_parse_ipv6(data, data_end, off + ihl, &inner) == QOS_UNP_NONE) {
			*pkt = inner;
			pkt->family = QOS_FAM_IPV6IN4;
		}
	}
	return QOS_UNP_NONE;
}

/*
 * Parse, pulling the headers into the linear area first if the packet is
 * non-linear and the first attempt ran off the end of the linear part.
 * bpf_skb_pull_data() invalidates packet pointers, hence the second call.
 */
static __always_inline int qos_parse_skb(struct __sk_buff *skb, struct qos_pkt *pkt)
{
	__u32 linear = skb->data_end - skb->data;
	int ret;

	ret = qos_parse(skb, pkt);
	if (ret != QOS_UNP_TRUNCATED || skb->len <= linear)
		return ret;
	if (bpf_skb_pull_data(skb, skb->len < QOS_PULL_LEN ? skb->len : QOS_PULL_LEN))
		return ret;
	return qos_parse(skb, pkt);
}

#endif /* __QOS_LIB_PARSE_H */
