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
#include "../qos_common.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct qos_cfg);
} qos_cfg SEC(".maps") __weak;

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

/* Userspace bookkeeping only; see struct qos_meta. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct qos_meta);
} qos_meta SEC(".maps") __weak;

/* Policers; see struct qos_policer. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QOS_POLICERS_MAX);
	__type(key, __u32);
	__type(value, struct qos_policer);
} qos_policers SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, QOS_POLICE_STATS_ENTRIES);
	__type(key, __u32);
	__type(value, struct qos_ctr);
} qos_police_stats SEC(".maps") __weak;

#endif /* __QOS_LIB_MAPS_H */
