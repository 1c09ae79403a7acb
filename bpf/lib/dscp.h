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
 * word changes. Returns 1 if the packet changed, 0 if it already had @dscp,
 * or a negative error. Packet pointers are invalid afterwards.
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
		err = err ?: bpf_l3_csum_replace(skb, off + offsetof(struct iphdr, check),
						 old, new, sizeof(new));
	} else {
		/* No IPv6 header checksum, and the transport checksum does not
		 * cover the Traffic Class; only a CHECKSUM_COMPLETE skb->csum
		 * must follow. */
		err = bpf_skb_store_bytes(skb, off, &new, sizeof(new), BPF_F_RECOMPUTE_CSUM);
	}
	return err < 0 ? err : 1;
}

/*
 * Rewrite the DSCP of @pkt: of its IP header, and of both headers of
 * IPv6-in-IPv4 whose inner header parsed. The outer one is what the next
 * DiffServ node classifies by; the inner one too, so that neither a
 * next node that falls back to it (tunnel-dscp auto or inner, the outer
 * DSCP washed to 0) nor the tunnel's exit sees the DSCP this node
 * replaced. Used by rule actions, policer remarks and the egress rewrite
 * of a domain border. Returns as qos_dscp_rewrite(), 1 if either header
 * changed.
 *
 * A global function: the verifier checks it once, on its own, rather than
 * on every classification and policing path that ends in it (two header
 * rewrites inlined at each of those made the egress program 3.7 times as
 * long to verify). Weak, as qos_police_step(): both programs include it.
 * NULL only to please the verifier.
 */
__weak __noinline int qos_remark(struct __sk_buff *skb, const struct qos_pkt *pkt, __u32 dscp)
{
	int ret, outer;

	if (!skb || !pkt)
		return -1;
	dscp &= QOS_DSCP_MAX - 1;
	ret = qos_dscp_rewrite(skb, pkt->l3_off, pkt->table, dscp);

	if (ret < 0 || !pkt->tunnel)
		return ret;
	outer = qos_dscp_rewrite(skb, pkt->outer_off, QOS_TABLE_IPV4, dscp);
	return outer < 0 ? outer : ret | outer;
}

#endif /* __QOS_LIB_DSCP_H */
