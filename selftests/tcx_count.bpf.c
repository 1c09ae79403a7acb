// SPDX-License-Identifier: GPL-2.0-only
/*
 * Another tool's tc program for selftests/net_tcx.sh: counts every packet
 * it sees in slot 0 of its array and lets the next program of the tcx list
 * run (TC_ACT_UNSPEC is tcx's "next").
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} tcx_count_map SEC(".maps");

SEC("tc")
int tcx_count(struct __sk_buff *skb)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&tcx_count_map, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "GPL";
