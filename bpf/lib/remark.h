/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * DSCP / Traffic Class rewrite at egress, for a domain border that
 * downgrades PIP to BE ("PIP Transparent" in the GRNET seed). Only the six
 * DSCP bits change: the ECN bits, and in IPv6 the flow label, are kept.
 */
#ifndef __QOS_LIB_REMARK_H
#define __QOS_LIB_REMARK_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <stddef.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "../qos_common.h"
#include "parse.h"

/*
 * Rewrite the DSCP of the header that was classified (for 6in4 the inner
 * IPv6 header) to @dscp. The IPv4 header checksum is updated incrementally
 * over the 16-bit word that holds the TOS byte. Returns 1 if the packet was
 * changed, 0 if it already carried @dscp, negative on a helper error.
 */
static __always_inline int qos_remark(struct __sk_buff *skb, const struct qos_pkt *pkt,
				      __u8 dscp)
{
	__u32 off = pkt->l3_off;

	if (pkt->dscp == dscp)
		return 0;
	if (pkt->table == QOS_TABLE_IPV4) {
		__be16 old, new;

		if (bpf_skb_load_bytes(skb, off, &old, sizeof(old)))
			return -1;
		/* Byte 0 is version/IHL, byte 1 the TOS: DSCP << 2 | ECN. */
		new = old;
		((__u8 *)&new)[1] = (dscp << 2) | (((__u8 *)&old)[1] & 0x3);
		if (bpf_l3_csum_replace(skb, off + offsetof(struct iphdr, check), old, new,
					sizeof(new)))
			return -1;
		if (bpf_skb_store_bytes(skb, off, &new, sizeof(new), 0))
			return -1;
		return 1;
	} else {
		__be32 old;
		__u32 vtc;

		/* version:4 traffic class:8 (DSCP:6 ECN:2) flow label:20 */
		if (bpf_skb_load_bytes(skb, off, &old, sizeof(old)))
			return -1;
		vtc = bpf_ntohl(old);
		vtc = (vtc & ~(0x3fU << 22)) | ((__u32)dscp << 22);
		old = bpf_htonl(vtc);
		if (bpf_skb_store_bytes(skb, off, &old, sizeof(old), 0))
			return -1;
		return 1;
	}
}

#endif /* __QOS_LIB_REMARK_H */
