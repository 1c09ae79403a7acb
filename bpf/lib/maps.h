/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Maps shared by the ingress and egress programs. They are __weak so that
 * each program file can include this header and `bpftool gen object` merges
 * the definitions into one set of maps in the linked object.
 */
#ifndef __QOS_LIB_MAPS_H
#define __QOS_LIB_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "../qos_shared.h"

/*
 * The configuration: two slots of the data-path value (the first
 * QOS_CFG_DP_SIZE bytes of struct qos_cfg, all the programs read of it)
 * and, in a map of its own, the flip generation (entry 0) whose low bit
 * says which slot is active. qosctl writes the inactive slot, once no
 * program run can still be reading it (entry 1: the generation at which it
 * was last known so), then stores the generation with one 32-bit store
 * through mmap() (Documentation/design.rst, "Two slots"). Generation 0:
 * programs loaded, never configured: every packet is left alone.
 */
/* Sizes, not BTF types: clang would describe struct qos_cfg as a forward
 * declaration, the programs reaching it only through the lookup. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, QOS_CFG_DP_SIZE);
} qos_cfg_slots SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u32);
} qos_cfg_gen SEC(".maps") __weak;

/* What qosctl installed (struct qos_meta_rec): the programs never read it;
 * qosctl binds it to them so that it is found through them. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct qos_meta_rec);
} qos_meta SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, QOS_STATS_ENTRIES);
	__type(key, __u32);
	__type(value, struct qos_ctr);
} qos_stats SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, QOS_UNPARSED_ENTRIES);
	__type(key, __u32);
	__type(value, struct qos_ctr);
} qos_unparsed SEC(".maps") __weak;

/*
 * Classification rules (bpf/lib/rules.h): IPv6 entries in qos_rules, IPv4
 * ones under their shorter key in qos_rules4. qosctl sizes them and
 * qos_rule_stats from the profile before loading; without preallocation
 * they hold memory for the rules installed, not for their limit.
 */
#define QOS_RULES_MAP(key_type)					\
	struct {						\
		__uint(type, BPF_MAP_TYPE_HASH);		\
		__uint(max_entries, QOS_RULES_DEFAULT);		\
		__uint(map_flags, BPF_F_NO_PREALLOC);		\
		__type(key, key_type);				\
		__type(value, struct qos_rule_val);		\
	}

QOS_RULES_MAP(struct qos_rule_key) qos_rules SEC(".maps") __weak;
QOS_RULES_MAP(struct qos_rule_key4) qos_rules4 SEC(".maps") __weak;

/* A hash sized with the rule table, keyed by a rule's or its policer's id,
 * holding memory for the keys inserted only. */
#define QOS_RULE_ID_MAP(map_type, value_type)			\
	struct {						\
		__uint(type, map_type);				\
		__uint(max_entries, QOS_RULES_DEFAULT);		\
		__uint(map_flags, BPF_F_NO_PREALLOC);		\
		__type(key, __u32);				\
		__type(value, value_type);			\
	}

/*
 * Per-rule hits: a plain array laid out [cpu][id], qos_rule_row entries a
 * row, found from the rule's id without a second hash lookup (the kernel
 * inlines an array's lookup). Each CPU adds to its own row, as to a per-CPU
 * array's element, but the array is one allocation: a per-CPU array takes
 * one per-CPU allocation per element when it is created (67 ms for the
 * default 65536, 0.9 s for 2^20), this one a zeroed area (16 bytes per id
 * per possible CPU, a few ms). qosctl sizes it (qos_rule_maps_size()) to the possible CPU ids times
 * the rule table and sets qos_rule_row to the table's size; as built, the
 * row is 0 and every CPU adds to one row (for tests on one CPU at a time).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QOS_RULES_DEFAULT);
	__type(key, __u32);
	__type(value, struct qos_ctr);
} qos_rule_stats SEC(".maps") __weak;

const volatile __u32 qos_rule_row __weak = 0;

/* Class policers (ids below QOS_POLICER_RULE_FIRST); see struct
 * qos_policer. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QOS_POLICER_RULE_FIRST);
	__type(key, __u32);
	__type(value, struct qos_policer);
} qos_policers SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, QOS_POLICER_RULE_FIRST);
	__type(key, __u32);
	__type(value, struct qos_police_ctrs);
} qos_police_stats SEC(".maps") __weak;

/*
 * Rules' own policers with their counters, keyed by policer id: a hash
 * without preallocation, as the rule tables and for the same reason, sized
 * with the rule table. The arrays of the class policers, at the table's
 * size, would hold 120 bytes per policer and 144 per policer per CPU for
 * every rule the table could have (9.4 MB per CPU at 65536); this holds
 * memory for the policers qosctl inserted. A hash element stays where it
 * is while it lives, so the compare-and-swap of the buckets works on it as
 * on an array's; qosctl writes a policer only when it creates it and
 * deletes it when its rule is gone. New with new programs, as the rule
 * table is.
 */
QOS_RULE_ID_MAP(BPF_MAP_TYPE_HASH, struct qos_rule_policer) qos_rule_pols SEC(".maps") __weak;

/* The device's configuration, NULL while it has none. The generation is
 * loaded once: the slot's address depends on it, and the slot it names was
 * written whole before it was stored. */
static __always_inline struct qos_cfg *qos_get_cfg(void)
{
	__u32 zero = 0, *gen, g, slot;

	gen = bpf_map_lookup_elem(&qos_cfg_gen, &zero);
	if (!gen)
		return NULL;
	g = *(volatile __u32 *)gen;
	if (!g)
		return NULL;
	slot = g & 1;
	return bpf_map_lookup_elem(&qos_cfg_slots, &slot);
}

#endif /* __QOS_LIB_MAPS_H */
