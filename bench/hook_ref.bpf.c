// SPDX-License-Identifier: GPL-2.0-only
/*
 * The forwarding benchmark's "hook" reference: an empty tc program,
 * attached where qosctl attaches its two (clsact ingress of the interface
 * traffic enters, clsact egress of the one it leaves). What separates it
 * from "none" is the price of the tc hooks themselves, which any tc-BPF
 * classifier pays; what separates qosctl from it is qosctl's own work.
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

SEC("tc")
int hook_ref(struct __sk_buff *skb)
{
	return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "GPL";
