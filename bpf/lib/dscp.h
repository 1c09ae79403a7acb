/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * DSCP rewrite, shared by rule actions, policer remarks and the egress
 * rewrite at a domain border.
 */
#ifndef __QOS_LIB_DSCP_H
#define __QOS_LIB_DSCP_H

#include <linux/bpf.h>
#include <linux/ip.h>
#include <stddef.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "../qos_shared.h"
#include "parse.h"

/*
 * Set the DSCP of the IP header at @off (IPv4 or IPv6 per @table), leaving
 * the ECN bits and the IPv6 flow label as they are. Only the first 16-bit
 * word changes. Packet pointers are invalid afterwards.
 */
static __always_inline int qos_dscp_rewrite(struct __sk_buff *skb, __u32 off, __u32 table,
					    __u8 dscp)
{
	__be16 old, new;
	int err;

	if (bpf_skb_load_bytes(skb, off, &old, sizeof(old)))
		return -1;
	if (table == QOS_TABLE_IPV4)
		/* version/IHL, then DSCP in the top 6 bits of the TOS byte */
		new = (old & bpf_htons(0xff03)) | bpf_htons((__u16)dscp << 2);
	else
		/* version, Traffic Class (DSCP in its top 6 bits), flow label */
		new = (old & bpf_htons(0xf03f)) | bpf_htons((__u16)dscp << 6);
	if (new == old)
		return 0;
	if (table == QOS_TABLE_IPV4) {
		/* The header checksum moves by as much as the TOS word, so the
		 * packet's ones'-complement sum, and a CHECKSUM_COMPLETE
		 * skb->csum over it, stay as they were. */
		err = bpf_skb_store_bytes(skb, off, &new, sizeof(new), 0);
		return err ?: bpf_l3_csum_replace(skb, off + offsetof(struct iphdr, check),
						  old, new, sizeof(new));
	}
	/* No IPv6 header checksum, and the transport checksum does not cover
	 * the Traffic Class; only a CHECKSUM_COMPLETE skb->csum must follow. */
	return bpf_skb_store_bytes(skb, off, &new, sizeof(new), BPF_F_RECOMPUTE_CSUM);
}

/*
 * Rewrite the DSCP of the header @pkt was classified on: the IPv4 or IPv6
 * header, and for IPv6-in-IPv4 the inner IPv6 header (the tunnel's outer
 * header is the tunnel owner's). Used by policer remarks and the egress
 * rewrite of a domain border. Returns 0 or a negative error.
 */
static __always_inline int qos_remark(struct __sk_buff *skb, const struct qos_pkt *pkt,
				      __u8 dscp)
{
	return qos_dscp_rewrite(skb, pkt->l3_off, pkt->table, dscp);
}

#endif /* __QOS_LIB_DSCP_H */
