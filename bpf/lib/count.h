/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Counters: every packet and byte count of the data path (class, unparsed,
 * rule and policer counters) is a struct qos_ctr, added to here.
 */
#ifndef __QOS_LIB_COUNT_H
#define __QOS_LIB_COUNT_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "../qos_shared.h"
#include "maps.h"

/*
 * Add one packet of @len bytes to @ctr (NULL: nothing). @shared: a counter
 * every CPU adds to, added to atomically; otherwise a per-CPU one.
 */
static __always_inline void qos_ctr_add(struct qos_ctr *ctr, __u32 len, int shared)
{
	if (!ctr)
		return;
	if (shared) {
		__sync_fetch_and_add(&ctr->packets, 1);
		__sync_fetch_and_add(&ctr->bytes, len);
	} else {
		ctr->packets++;
		ctr->bytes += len;
	}
}

/* The class counters (qos_stats): direction, class, family, verdict. */
static __always_inline void qos_count(__u32 dir, __u32 cls, __u32 fam, __u32 verdict,
				      __u32 len)
{
	__u32 key = qos_stats_key(dir, cls, fam, verdict);

	qos_ctr_add(bpf_map_lookup_elem(&qos_stats, &key), len, 0);
}

/* Packets the policy did not treat (qos_unparsed), by reason. */
static __always_inline void qos_count_unparsed(__u32 dir, __u32 reason, __u32 len)
{
	__u32 key = qos_unparsed_key(dir, reason);

	qos_ctr_add(bpf_map_lookup_elem(&qos_unparsed, &key), len, 0);
}

/* A rule's hits: its id's entry in this CPU's row of qos_rule_stats,
 * zeroed by qosctl before the entries that lead to it. */
static __always_inline void qos_count_rule(__u32 id, __u32 len)
{
	__u32 key = bpf_get_smp_processor_id() * qos_rule_row + id;

	qos_ctr_add(bpf_map_lookup_elem(&qos_rule_stats, &key), len, 0);
}

#endif /* __QOS_LIB_COUNT_H */
