/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The class in skb->mark: the ingress program of the interface a packet
 * came in by writes it, the egress program of the one it leaves by reads
 * it. It takes the bits of cfg->mark_mask, from cfg->mark_shift, so that
 * other fwmark users keep theirs.
 */
#ifndef __QOS_LIB_MARK_H
#define __QOS_LIB_MARK_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "../qos_shared.h"

/* The class another program (ours, on the ingress interface) left in the mark. */
static __always_inline __u32 qos_mark_get(const struct qos_cfg *cfg, __u32 mark)
{
	return ((mark & cfg->mark_mask) >> cfg->mark_shift) & (QOS_MAX_CLASSES - 1);
}

static __always_inline __u32 qos_mark_set(const struct qos_cfg *cfg, __u32 mark, __u32 cls)
{
	return (mark & ~cfg->mark_mask) | ((cls << cfg->mark_shift) & cfg->mark_mask);
}

#endif /* __QOS_LIB_MARK_H */
