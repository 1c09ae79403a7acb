// SPDX-License-Identifier: GPL-2.0-only
/*
 * bench_lookup's programs: one map lookup on the packet's source address,
 * nothing else, so that the cost of the lookup itself can be compared
 * between map layouts in one run (Documentation/performance.rst, "Rule
 * keys and LPM tries"):
 *
 *   key48   the rule hash as it is, struct qos_rule_key (48 bytes, one
 *           map for both families)
 *   short   a hash per family with a key of its own: IPv4 16 bytes,
 *           IPv6 44 bytes (what a per-family key could be cut down to)
 *   lpm     a BPF_MAP_TYPE_LPM_TRIE per family, prefix-only
 *   keyed   the rule hash of IPv4 as it is (struct qos_rule_key4, 20
 *           bytes), and for IPv6 the 36 bytes of the two addresses and one
 *           word (a shape id above the flow label), which jhash2 mixes in
 *           two rounds against three for 40-48 bytes
 *
 * Each returns TC_ACT_UNSPEC on a hit and TC_ACT_SHOT on a miss, so the
 * bench can tell that every packet hit.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include "../bpf/qos_common.h"

#define ENTRIES_MAX	((1 << 20) + 16)

struct key4 {
	__u8 src_len;
	__u8 dst_len;
	__u8 proto;
	__u8 pad;
	__be16 sport;
	__be16 dport;
	__be32 src;
	__be32 dst;
};

struct key6 {
	__u8 src_len;
	__u8 dst_len;
	__u8 proto;
	__u8 pad;
	__u32 mask;		/* flow-label mask and port prefix lengths */
	__be16 sport;
	__be16 dport;
	__be32 src[4];
	__be32 dst[4];
};

struct key36 {
	__be32 src[4];
	__be32 dst[4];
	__u32 shape_fl;		/* shape id << 20 | flow label */
};

struct lpm4 {
	__u32 prefixlen;
	__be32 addr;
};

struct lpm6 {
	__u32 prefixlen;
	__be32 addr[4];
};

/* Both without preallocation, as qos_rules (an LPM trie must be). */
#define MAP(name, map_type, k, n)					\
	struct {							\
		__uint(type, map_type);					\
		__uint(map_flags, BPF_F_NO_PREALLOC);			\
		__uint(max_entries, n);					\
		__type(key, k);						\
		__type(value, __u64);					\
	} name SEC(".maps")

/* Both families in one, as qos_rules. */
MAP(key48, BPF_MAP_TYPE_HASH, struct qos_rule_key, 2 * ENTRIES_MAX);
MAP(short4, BPF_MAP_TYPE_HASH, struct key4, ENTRIES_MAX);
MAP(short6, BPF_MAP_TYPE_HASH, struct key6, ENTRIES_MAX);
MAP(lpm4, BPF_MAP_TYPE_LPM_TRIE, struct lpm4, ENTRIES_MAX);
MAP(lpm6, BPF_MAP_TYPE_LPM_TRIE, struct lpm6, ENTRIES_MAX);
MAP(keyed4, BPF_MAP_TYPE_HASH, struct qos_rule_key4, ENTRIES_MAX);
MAP(keyed6, BPF_MAP_TYPE_HASH, struct key36, ENTRIES_MAX);

/* Look @key up in @map with the packet's source address in *@addr. */
static __always_inline int lookup4(struct __sk_buff *skb, void *map, void *key, __be32 *addr)
{
	struct iphdr *ip = (void *)(long)skb->data + ETH_HLEN;

	if ((void *)(ip + 1) > (void *)(long)skb->data_end)
		return TC_ACT_SHOT;
	*addr = ip->saddr;
	return bpf_map_lookup_elem(map, key) ? TC_ACT_UNSPEC : TC_ACT_SHOT;
}

static __always_inline int lookup6(struct __sk_buff *skb, void *map, void *key, __be32 *addr)
{
	struct ipv6hdr *ip = (void *)(long)skb->data + ETH_HLEN;

	if ((void *)(ip + 1) > (void *)(long)skb->data_end)
		return TC_ACT_SHOT;
	__builtin_memcpy(addr, &ip->saddr, sizeof(ip->saddr));
	return bpf_map_lookup_elem(map, key) ? TC_ACT_UNSPEC : TC_ACT_SHOT;
}

/* A program looking up, in @map, a key of @type initialised to the rest
 * of the arguments, with the packet's source address in @addr. */
#define LOOKUP_PROG(name, family, map, type, addr, ...)			\
	SEC("tc")							\
	int name(struct __sk_buff *skb)					\
	{								\
		type k = { __VA_ARGS__ };				\
									\
		return lookup##family(skb, &map, &k, addr);		\
	}

LOOKUP_PROG(key48_v4, 4, key48, struct qos_rule_key, &k.src[0], .table = QOS_TABLE_IPV4,
	    .src_len = 32)
LOOKUP_PROG(key48_v6, 6, key48, struct qos_rule_key, k.src, .table = QOS_TABLE_IPV6,
	    .src_len = 128)
LOOKUP_PROG(short_v4, 4, short4, struct key4, &k.src, .src_len = 32)
LOOKUP_PROG(short_v6, 6, short6, struct key6, k.src, .src_len = 128)
LOOKUP_PROG(lpm_v4, 4, lpm4, struct lpm4, &k.addr, .prefixlen = 32)
LOOKUP_PROG(lpm_v6, 6, lpm6, struct lpm6, k.addr, .prefixlen = 128)
LOOKUP_PROG(keyed_v4, 4, keyed4, struct qos_rule_key4, &k.src, .src_len = 32)
LOOKUP_PROG(keyed_v6, 6, keyed6, struct key36, k.src, .shape_fl = 1U << 20)

char LICENSE[] SEC("license") = "GPL";
